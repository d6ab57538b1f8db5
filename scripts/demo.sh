#!/usr/bin/env bash
# Set up .venv (if missing) and run the demo: serve the demo website on
# 127.0.0.1, `scrapy crawl` it with the pipeline on, print a summary.
# Usage: bash scripts/demo.sh [--port 8701]
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=scrapy source scripts/venv.sh
exec .venv/bin/python example_project/run_demo.py "$@"
