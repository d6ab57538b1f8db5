#!/usr/bin/env bash
# Set up .venv (if missing) and run the demo: serve the demo website on
# 127.0.0.1, `scrapy crawl` it with the pipeline on, print a summary.
# Usage: bash scripts/demo.sh [--port 8701]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[scrapy]"
exec .venv/bin/python example_project/run_demo.py "$@"
