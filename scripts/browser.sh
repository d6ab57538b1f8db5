# Sourced by test.sh: Debian's Chromium and ChromeDriver for the tests that
# open the HTML this project writes (tests/test_views.py). Installed only
# when missing; needs root or sudo, and Debian's package registry.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi  # never wait for a password
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
