"""What users install: the sdist and the wheel carry what the package needs
to run and to build; the sdist builds a working wheel without a C compiler
(the pure-Python walks, same output); a broken install fails at start, once
and loudly, in the CLI and in a crawl, instead of on every record.

The release files come from ``bash scripts/test.sh`` (nox: ``DEBOILER_DIST``),
or are built here with ``python -m build`` when the suite runs on its own.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

import scrapy_deboiler
from scrapy_deboiler import _content
from sitegen import site_pages

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(scrapy_deboiler.__file__).resolve().parent
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
MODULES = sorted(p.name for p in PACKAGE.glob("*.py"))


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    # Without SCRAPY_DEBOILER_PURE_PYTHON (``nox -s pure``): setup.py would
    # build no extension, and the installs under test are told apart here.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCRAPY_DEBOILER_PURE_PYTHON")}
    env.update(kwargs.pop("env", {}))
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, **kwargs)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    given = os.environ.get("DEBOILER_DIST")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    proc = run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def sdist(dist) -> Path:
    (path,) = dist.glob("scrapy_deboiler-*.tar.gz")
    return path


@pytest.fixture(scope="module")
def wheel(dist, sdist, tmp_path_factory) -> Path:
    given = os.environ.get("DEBOILER_WHEEL")
    if given:
        return Path(given)
    found = list(dist.glob(f"scrapy_deboiler-*-{TAG}-*.whl"))
    if not found:  # another Python than the one that built dist/
        out = tmp_path_factory.mktemp("wheel")
        run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, sdist).check_returncode()
        found = list(out.glob("*.whl"))
    (path,) = found
    return path


def test_the_sdist_carries_what_builds_and_checks_the_package(sdist):
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    needed = {"setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE",
              "scrapy_deboiler/_speedups.pyx", "scrapy_deboiler/content_model.json",
              "scrapy_deboiler/py.typed", "tests/conftest.py", "tests/sitegen.py"}
    assert needed <= names, needed - names
    assert {f"scrapy_deboiler/{m}" for m in MODULES} <= names
    assert not [n for n in names if n.endswith((".c", ".so", ".pyc"))]


def test_the_wheel_carries_what_runs_the_package(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = email.message_from_bytes(zf.read(meta_name))
        model = json.loads(zf.read("scrapy_deboiler/content_model.json"))
    assert {"scrapy_deboiler/content_model.json", "scrapy_deboiler/py.typed"} <= names
    assert {f"scrapy_deboiler/{m}" for m in MODULES} <= names
    assert any(n.endswith("/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith("tests/")]
    # A machine with a C compiler gets the compiled walks.
    assert shutil.which(os.environ.get("CC", "cc")) and any(
        n.startswith("scrapy_deboiler/_speedups") and n.endswith((".so", ".pyd")) for n in names)
    assert meta["Version"] == scrapy_deboiler.__version__
    assert meta["Requires-Python"] == ">=3.10"
    assert (model["format"], model["version"], model["features"]) == (
        _content.MODEL_FORMAT, _content.MODEL_VERSION, _content.FEATURE_COUNT)


@pytest.fixture(scope="module")
def pure(sdist, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel that the sdist builds
    where no C compiler works (``CC=false``), and Scrapy: its ``bin``."""
    out = tmp_path_factory.mktemp("pure-wheel")
    proc = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, sdist,
               env={"CC": "false", "CXX": "false"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (whl,) = out.glob("*.whl")
    with zipfile.ZipFile(whl) as zf:
        assert not [n for n in zf.namelist() if n.endswith((".so", ".pyd"))]
    env_dir = tmp_path_factory.mktemp("pure-venv")
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    proc = run(bin_dir / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
               f"{whl}[scrapy]")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return bin_dir


def pages_file(path: Path) -> Path:
    """40 pages: sites of 20, 15 and 3 pages, and two one-page sites."""
    with path.open("w", encoding="utf-8") as f:
        for site, n in (("big.example", 20), ("mid.example", 15), ("small.example", 3),
                        ("alone.example", 1), ("solo.example", 1)):
            for url, html, _ in site_pages(site, n):
                f.write(json.dumps({"url": url, "html": html}) + "\n")
    return path


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
def test_wheels_with_and_without_a_compiler_clean_alike(tmp_path, pure, mode):
    """The wheel under test, the one built without a compiler, and the
    first with its compiled walks switched off write the same output."""
    src = pages_file(tmp_path / "pages.jsonl")
    compiled = Path(sys.executable).parent
    outs = []
    for k, (bin_dir, env) in enumerate([(compiled, {}), (pure, {}),
                                        (compiled, {"SCRAPY_DEBOILER_PURE_PYTHON": "1"})]):
        speedups = run(bin_dir / "python", "-c",
                       "from scrapy_deboiler import _content; print(_content._speedups is not None)",
                       cwd=tmp_path, env=env)
        assert speedups.stdout.strip() == str(k == 0)
        out = tmp_path / f"out-{k}.jsonl"
        proc = run(bin_dir / "scrapy-deboiler", "clean", src, out, "--mode", mode, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    statuses = [json.loads(line)["deboiler"]["status"] for line in outs[0].splitlines()]
    lone = "single_page" if mode == "content" else "unchanged"
    assert statuses == ["cleaned"] * 38 + [lone] * 2
    imported = run(pure / "python", "-c", "import scrapy_deboiler; scrapy_deboiler.Addon", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr


SPIDER = """
import scrapy

class One(scrapy.Spider):
    name = "one"
    start_urls = ["http://127.0.0.1:9/never-fetched"]
    custom_settings = {"ADDONS": {"scrapy_deboiler.Addon": 100}, "TELNETCONSOLE_ENABLED": False,
                       "DEBOILER_SIGNATURES_DIR": "signatures"}

    def parse(self, response):
        yield {"url": response.url}
"""


@pytest.mark.parametrize("damage", ["missing", "corrupt", "other version"])
def test_a_broken_content_model_stops_the_cli_and_the_crawl_at_start(tmp_path, pure, damage):
    site_packages = run(pure / "python", "-c", "import scrapy_deboiler, os; "
                        "print(os.path.dirname(scrapy_deboiler.__file__))", cwd=tmp_path).stdout.strip()
    model = Path(site_packages) / "content_model.json"
    saved = model.read_bytes()
    try:
        if damage == "missing":
            model.unlink()
        elif damage == "corrupt":
            model.write_bytes(saved[: len(saved) // 2])
        else:
            doc = json.loads(saved)
            doc["version"] += 1
            model.write_text(json.dumps(doc))
        src = pages_file(tmp_path / "pages.jsonl")
        out = tmp_path / "out.jsonl"
        proc = run(pure / "scrapy-deboiler", "clean", src, out, cwd=tmp_path)
        assert proc.returncode == 2 and not out.exists()
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("scrapy-deboiler: error: content model ") and str(model) in line
        # Boilerplate mode does not use the content model.
        assert run(pure / "scrapy-deboiler", "clean", src, out, "--mode", "boilerplate",
                   cwd=tmp_path).returncode == 0
        (tmp_path / "spider.py").write_text(SPIDER)
        feed = tmp_path / "feed.jsonl"
        crawl = run(pure / "scrapy", "runspider", "spider.py", "-o", feed, cwd=tmp_path, timeout=120)
        assert crawl.returncode != 0 and not feed.exists()
        assert f"ContentModelError: content model {model}" in crawl.stderr
        assert "Spider opened" not in crawl.stderr
    finally:
        model.write_bytes(saved)
