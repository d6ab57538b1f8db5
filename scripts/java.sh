# Sourced by test.sh: a Java runtime for the Spark tests (tests/test_spark.py
# runs a real local Spark, which needs Java 17 or later): Debian's
# openjdk-17-jre-headless, installed only when no java is on PATH. Needs root
# or sudo, and Debian's package registry.
if ! command -v java >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi  # never wait for a password
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
