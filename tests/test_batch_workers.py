"""`scrapy-deboiler clean --jobs N` when a worker process dies (the OOM
killer, an operator, a crash): the run goes on and writes what it writes
without the death, byte for byte; a page that kills every worker stops it
with a clear message, no traceback. Real processes, a real SIGKILL."""

import subprocess
import sys

import pytest

from sitegen import site_pages
from test_cli import NEUTRAL, write

#: ``scrapy-deboiler`` (its ``main``) whose worker processes kill themselves
#: (SIGKILL) when given the batch holding record RECORD (counted from 0) in
#: METHOD ("sign": pass 1, "clean": pass 3): once (FLAG a file that
#: records it), or every time (FLAG "always").
_DYING = """
import os, signal, sys
from scrapy_deboiler import _batch_pages
flag, method, record = sys.argv[1], sys.argv[2], int(sys.argv[3])
real = getattr(_batch_pages._Work, method)
parent = os.getpid()
def dying(self, items, *args):
    if os.getpid() != parent and any(i == record for i, *_ in items):
        if flag == "always" or not os.path.exists(flag):
            open(flag if flag != "always" else os.devnull, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    return real(self, items, *args)
setattr(_batch_pages._Work, method, dying)
from scrapy_deboiler._cli import main
sys.exit(main(sys.argv[4:]))
"""


def _records(pages=30):
    return [{"id": f"{site}/{i}", "url": url, "html": html}
            for site in ("a.example", "b.example", "c.example")
            for i, (url, html, _) in enumerate(site_pages(site, pages))]


def _run(*args, dying=None):
    cmd = ([sys.executable, "-c", _DYING, *map(str, dying), *map(str, args)] if dying
           else [sys.executable, "-m", "scrapy_deboiler", *map(str, args)])
    return subprocess.run(cmd, capture_output=True, text=True, cwd=NEUTRAL, timeout=300)


@pytest.mark.parametrize("max_memory", [1024, 1], ids=["all-kept", "most-spilled"])
@pytest.mark.parametrize("method,record", [("sign", 200), ("clean", 40), ("clean", 3)])
def test_a_worker_killed_mid_run_changes_nothing_in_the_output(tmp_path, method, record, max_memory):
    """Killed in pass 1, the batches it had not answered go to its
    replacement and the pages it had kept are read again from the input;
    killed in pass 3, the same for the pages it still had to clean. With
    every page kept in memory, or most spilled to disk. (Record 200 is in
    batch 12 of 19, worker 0's: at most 4 batches a worker are sent ahead
    of the answers read, so its batches 0 to 4 were answered and read
    before it: their kept pages are lost with it, whatever the timing.)"""
    write(tmp_path / "in.jsonl", _records(100))
    want = _run("clean", tmp_path / "in.jsonl", tmp_path / "one.jsonl", "--jobs", 1)
    assert want.returncode == 0, want.stderr
    flag = tmp_path / "died"
    got = _run("clean", tmp_path / "in.jsonl", tmp_path / "two.jsonl", "--jobs", 2, "--max-memory", max_memory,
               dying=(flag, method, record))
    assert got.returncode == 0, got.stderr
    assert flag.exists()  # a worker did die
    assert "a worker process died (exit code -9)" in got.stderr and "Traceback" not in got.stderr
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    if max_memory == 1024:  # its kept pages were lost with it
        assert "records again from" in got.stderr


def test_a_page_that_kills_every_worker_stops_the_run_with_a_message(tmp_path):
    write(tmp_path / "in.jsonl", _records())
    got = _run("clean", tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--jobs", 2,
               dying=("always", "clean", 40))
    assert got.returncode == 1 and "Traceback" not in got.stderr, got.stderr
    assert "died twice (exit code -9) on records 33 to 48 (cleaning them)" in got.stderr
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(lines) == 32  # the records before that batch, whole
