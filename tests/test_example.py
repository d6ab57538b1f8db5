"""The example project as the README runs it (``bash scripts/demo.sh``):
its spiders load without the optional scrapy-redis (only the cluster spider
needs it), and the demo crawls the demo website with the pipeline on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"


def copy_project(tmp_path: Path) -> Path:
    project = tmp_path / "example_project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".scrapy", "output", "__pycache__"))
    return project


def without_scrapy_redis(tmp_path: Path) -> dict:
    """An environment where ``import scrapy_redis`` fails as if it were not
    installed (the test environment has it)."""
    stub = tmp_path / "no-scrapy-redis" / "scrapy_redis"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'scrapy_redis'\", name='scrapy_redis')\n")
    return {**os.environ, "PYTHONPATH": str(stub.parent)}


def scrapy_list(project: Path, env: dict) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "scrapy", "list"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


def test_the_spiders_load_with_and_without_scrapy_redis(tmp_path):
    project = copy_project(tmp_path)
    assert scrapy_list(project, without_scrapy_redis(tmp_path)) == ["site"]
    assert scrapy_list(project, dict(os.environ)) == ["cluster", "site"]


def test_the_demo_crawls_the_demo_website_with_the_pipeline_on(tmp_path):
    project = copy_project(tmp_path)
    out = tmp_path / "output" / "items.jsonl"
    demo = subprocess.run([sys.executable, str(project / "run_demo.py"), "--port", "0", "--out", str(out)],
                          env=without_scrapy_redis(tmp_path), capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({i["deboiler"]["site"] for i in items}) == 3
    assert len(items) > 100 and {i["deboiler"]["status"] for i in items} == {"cleaned"}
    # One item a page: start pages linked back to (the logo) are not crawled twice.
    assert len({i["url"] for i in items}) == len(items)
    assert all(i["clean_text"] for i in items)
    assert (out.parent / "report.html").stat().st_size > 0
    assert list((project / ".scrapy" / "deboiler").glob("*.json"))  # signature files to reuse
    assert "% of the HTML removed" in demo.stdout
