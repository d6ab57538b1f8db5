# Sourced by test.sh and demo.sh: create .venv if missing and install the
# project into it with the extras in $EXTRAS (e.g. "test" or "scrapy").
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
    # Once, when made (the interpreter's bundled pip can be old); later runs
    # only reinstall the project, which takes a few seconds.
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[${EXTRAS}]"
