#!/usr/bin/env bash
# Set up a virtual environment in .venv (if missing) and run the test suite.
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=test source scripts/venv.sh
source scripts/browser.sh
exec .venv/bin/python -m pytest "$@"
