# Sourced by test.sh: Debian's redis-server for the tests that run a crawl
# over several processes through Redis (tests/test_redis*.py start their own
# server on a free port of 127.0.0.1, without persistence). Installed only
# when missing; needs root or sudo, and Debian's package registry.
if ! command -v redis-server >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi  # never wait for a password
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
