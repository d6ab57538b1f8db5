"""The test sessions: what CI runs through ``bash scripts/test.sh``.

A release is an sdist and wheels built from it, so that is what is tested:
``build`` makes the sdist and, from it, the wheel (``python -m build``);
``tests`` installs a wheel built from that sdist into a fresh virtual
environment, for the oldest and newest supported Python and this machine's
own, and runs the suite against the install, never the checkout (pytest runs
from a scratch folder, so the checkout is not on ``sys.path``). ``pure`` runs
the suite once more, on this machine's Python, against the same wheel with
the pure-Python walks forced (``SCRAPY_DEBOILER_PURE_PYTHON=1``): what an
install without a compiler runs. test_speedups still compares the compiled
walks (imported directly) with the Python ones there, and the packaging
tests build and run their installs without the switch. ``typecheck`` runs
mypy on the package, ``lint`` ruff on the checkout (``[tool.ruff]``).

    .venv-tools/bin/nox                        # everything
    .venv-tools/bin/nox -s tests-3.13 -- -k views -x
    .venv-tools/bin/nox -s build pure          # the pure-Python walks alone
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

import nox

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "build", "typecheck", "tests", "pure", "spark"]

ROOT = os.path.dirname(os.path.abspath(__file__))
DIST = os.path.join(ROOT, "dist")
#: Oldest supported, this machine's, newest.
PYTHONS = ["3.10", "3.11", "3.13"]


def _find_pythons() -> None:
    """Put pyenv's interpreters of PYTHONS on PATH when ``pythonX.Y`` does
    not run (a pyenv shim of a version that is not selected fails)."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for version in PYTHONS:
        name = f"python{version}"
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
            continue
        for exe in sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", name)), reverse=True):
            os.environ["PATH"] = os.path.dirname(exe) + os.pathsep + os.environ["PATH"]
            break


_find_pythons()


@nox.session(python=False)
def build(session: nox.Session) -> None:
    """sdist, then the wheel from the sdist (a release's two files)."""
    shutil.rmtree(DIST, ignore_errors=True)
    session.run(sys.executable, "-m", "build", "--outdir", DIST, ROOT)


def _wheel(session: nox.Session) -> str:
    """The wheel for this session's Python: the release wheel when the build
    made one for it, else one built here from the sdist."""
    tag = session.run("python", "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')",
                      silent=True).strip()
    found = glob.glob(os.path.join(DIST, f"scrapy_deboiler-*-{tag}-*.whl"))
    if not found:
        (sdist,) = glob.glob(os.path.join(DIST, "scrapy_deboiler-*.tar.gz"))
        session.run("python", "-m", "pip", "wheel", "--no-deps", "-q", "-w", DIST, sdist)
        found = glob.glob(os.path.join(DIST, f"scrapy_deboiler-*-{tag}-*.whl"))
    (wheel,) = found
    return wheel


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    _suite(session, {})


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    """mypy on the package (``[tool.mypy]`` in pyproject.toml): it ships
    ``py.typed``, so its annotations are part of what users get."""
    session.install(f"{_wheel(session)}[test,redis,warc]", "mypy>=1.10,<3")
    session.chdir(ROOT)
    session.run("mypy")


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff on the package, tests, benchmarks and example project
    (``[tool.ruff]`` in pyproject.toml: pyflakes, pycodestyle, a few of
    bugbear's checks): unused imports and names, shadowing, long lines."""
    session.install("ruff>=0.6,<1")
    session.chdir(ROOT)
    session.run("ruff", "check", ".")


@nox.session(python="3.11")
def pure(session: nox.Session) -> None:
    """The suite once more against the same wheel with the pure-Python
    walks forced (``SCRAPY_DEBOILER_PURE_PYTHON``): the references the
    compiled walks must equal, and what a user without a compiler runs."""
    _suite(session, {"SCRAPY_DEBOILER_PURE_PYTHON": "1"})


@nox.session(python="3.11")
def spark(session: nox.Session) -> None:
    """The Spark tests, in this session only: PySpark is a large install
    and a local Spark a slow start, so the other sessions go without."""
    _suite(session, {}, extras="test,spark", tests=["test_spark*.py"])


def _suite(session: nox.Session, env: dict[str, str], extras: str = "test", tests: list[str] | None = None) -> None:
    wheel = _wheel(session)
    session.install(f"{wheel}[{extras}]")
    scratch = session.create_tmp()
    session.chdir(scratch)
    # Say (in the CI log) what is under test, and refuse a checkout import.
    session.run("python", "-c", (
        "import os, sys, scrapy_deboiler as m; from scrapy_deboiler import _content as c; "
        "path = os.path.dirname(m.__file__); "
        "print(f'testing scrapy_deboiler {m.__version__} installed from "
        + os.path.basename(wheel) + " at {path}; compiled walks: {c._speedups is not None}'); "
        f"sys.exit(path.startswith({ROOT!r} + os.sep + 'scrapy_deboiler'))"), env=env)
    paths = [p for t in tests for p in sorted(glob.glob(os.path.join(ROOT, "tests", t)))] if tests else [
        os.path.join(ROOT, "tests")]
    session.run("pytest", *paths, "-c", os.path.join(ROOT, "pyproject.toml"),
                "--rootdir", ROOT, *session.posargs,
                env={"DEBOILER_DIST": DIST, "DEBOILER_WHEEL": wheel, **env})
