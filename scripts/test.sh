#!/usr/bin/env bash
# Build the package (sdist, then wheels from it), install it into fresh
# virtual environments (Python 3.10, 3.11, 3.13) and run the test suite
# against each install, then once more on 3.11 with the pure-Python walks
# forced, and the Spark tests on 3.11 with the spark extra: noxfile.py. Tools live in .venv-tools.
# Usage: bash scripts/test.sh [pytest args]   (e.g. -q -x -k views)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/browser.sh
source scripts/redis.sh
source scripts/java.sh
PY=${PYTHON:-python3}
if [ ! -x .venv-tools/bin/python ]; then
    "$PY" -m venv .venv-tools
fi
.venv-tools/bin/python -m pip install -q --disable-pip-version-check "nox>=2024.3.2,<2027" "build>=1.2,<2"
exec .venv-tools/bin/nox --non-interactive -- "$@"
