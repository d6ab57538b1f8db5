"""The signature store under kills, concurrent writers and hostile files."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from scrapy_deboiler import _store
from scrapy_deboiler._store import SignatureFileError, SignatureStore, dump_model, load_model

# A child process that writes one site's file over and over, alternating two
# models of 100,000 signatures (a few MB, so a write takes a while).
WRITER = textwrap.dedent("""
    import os, sys, time
    from scrapy_deboiler import FitParams, SiteModel, SignatureStore
    store = SignatureStore(sys.argv[1])
    tag, rounds, pause_in_fsync = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    models = [SiteModel(FitParams(), pages=k + 2, pairs=k + 1,
                        support={f"{i * 7 + k:016x}": 2 for i in range(100_000)}) for k in (0, 1)]
    real_fsync = os.fsync
    def fsync(fd):  # report being in the middle of a write, and wait there
        real_fsync(fd)
        if pause_in_fsync:
            print("in-write", flush=True)
            time.sleep(60)
    store.save("shared.example", models[0])
    print("ready", flush=True)
    os.fsync = fsync
    for n in range(rounds):
        store.save("shared.example", models[n % 2])
    print("done " + tag, flush=True)
""")


def start_writer(store_dir, tag="a", rounds=10**6, pause=False):
    return subprocess.Popen([sys.executable, "-c", WRITER, str(store_dir), tag, str(rounds), str(int(pause))],
                            stdout=subprocess.PIPE, text=True)


def test_sigkill_in_the_middle_of_a_write_leaves_a_valid_store(tmp_path):
    proc = start_writer(tmp_path, pause=True)
    assert proc.stdout.readline() == "ready\n"
    assert proc.stdout.readline() == "in-write\n"  # the new file is written, not yet renamed
    # A live writer's temporary file is never swept (it holds it locked), however old.
    (live,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    os.utime(live, (live.stat().st_atime - 7200, live.stat().st_mtime - 7200))
    assert SignatureStore(tmp_path).sweep() == 0 and live.exists()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers, "the kill should have hit between writing and renaming"
    model = SignatureStore(tmp_path).load("shared.example")
    assert model is not None and model.pages == 2 and len(model.support) == 100_000
    assert [p.name for p in SignatureStore(tmp_path)] == [SignatureStore(tmp_path).path("shared.example").name]
    # The killed writer's temporary file goes at the next sweep (the next
    # start): its lock went with its process. It stayed for an hour.
    assert SignatureStore(tmp_path).sweep() == len(leftovers)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_sigkill_at_any_moment_leaves_a_valid_store(tmp_path):
    for _ in range(5):
        proc = start_writer(tmp_path)
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGKILL)  # somewhere in its stream of writes
        proc.wait()
        model = SignatureStore(tmp_path).load("shared.example")
        assert model is not None and len(model.support) == 100_000


def test_two_writers_at_once_leave_a_valid_file_and_readers_never_see_a_broken_one(tmp_path):
    writers = [start_writer(tmp_path, tag, rounds=15) for tag in "ab"]
    assert [w.stdout.readline() for w in writers] == ["ready\n", "ready\n"]
    store = SignatureStore(tmp_path)
    reads = 0
    while any(w.poll() is None for w in writers):
        model = store.load("shared.example")  # raises if a reader ever saw a partial file
        assert model is not None and len(model.support) == 100_000
        reads += 1
    assert sorted(w.stdout.read() for w in writers) == ["done a\n", "done b\n"]
    assert all(w.returncode == 0 for w in writers) and reads > 0
    assert store.load("shared.example").pages in (2, 3)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_oversized_files_are_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2000)
    monkeypatch.setattr(_store, "MAX_FILE_BYTES", 1000)
    with pytest.raises(SignatureFileError, match="2000 bytes is over the 1000 limit"):
        load_model(path)


@pytest.mark.parametrize("doc, message", [
    ({"signatures": [0] * 100_000}, "'signatures' must be an object"),
    ({"pages": 1e308}, "'pages' must be a non-negative integer"),
    ({"pages": True}, "'pages' must be a non-negative integer"),
    ({"domain": ["x"] * 1000}, "'domain' must be a string"),
    ({"params": {"iou_guard": "0.9", "min_support": 2, "window": 1}}, "bad 'params'"),
])
def test_hostile_documents_are_refused(tmp_path, doc, message):
    from scrapy_deboiler import FitParams, SiteModel

    path = dump_model("a.example", SiteModel(FitParams(), 2, 1, 0, {"00" * 8: 1}), tmp_path / "a.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), **doc}))
    with pytest.raises(SignatureFileError, match=message):
        load_model(path)


def test_nothing_in_a_file_is_executed_or_imported(tmp_path):
    """Files are JSON read with json.loads and checked field by field: a
    document naming a class or holding code stays data (and is refused)."""
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"format": "scrapy-deboiler-signatures", "version": 1, "domain": "a",
                                "params": {"__class__": "os.system", "iou_guard": "__import__('os')"},
                                "signatures": {}}))
    with pytest.raises(SignatureFileError, match="bad 'params'"):
        load_model(path)


def test_two_fit_jobs_on_one_store_at_once(tmp_path):
    """Two processes fitting the same 30 sites into one store, at once."""
    from sitegen import site_pages

    pages = tmp_path / "pages.jsonl"
    with pages.open("w") as f:
        for s in range(30):
            for url, html, _ in site_pages(f"s{s}.example", 4):
                f.write(json.dumps({"url": url, "html": html}) + "\n")
    cmd = [sys.executable, "-m", "scrapy_deboiler", "fit", str(pages), "--signatures",
           str(tmp_path / "sigs"), "--refit"]
    jobs = [subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    assert [j.wait() for j in jobs] == [0, 0], [j.stderr.read() for j in jobs]
    store = SignatureStore(tmp_path / "sigs")
    assert len(list(store)) == 30 and not list((tmp_path / "sigs").glob("*.tmp"))
    assert all(store.load(f"s{s}.example").pages == 4 for s in range(30))


def _model(pages: int, provisional: bool = False):
    from scrapy_deboiler import FitParams, SiteModel

    keys = frozenset(f"{k:016x}" for k in range(pages)) if provisional else frozenset()
    return SiteModel(FitParams(), pages=pages, pairs=pages - 1, support={"00" * 8: 2},
                     provisional=provisional, page_keys=keys)


def test_the_store_keeps_the_better_model_whoever_saves(tmp_path):
    """Two crawls sharing a folder: a finished 10-page model was replaced by
    the other's 3-page provisional one. A model is saved only if the file's
    does not rank higher (finished beats provisional, then more pages: the
    rule of Redis mode); ``force`` (``fit --refit``) writes it anyway."""
    a, b = SignatureStore(tmp_path), SignatureStore(tmp_path)  # two crawls' stores
    assert a.save("s.example", _model(10)) is not None
    assert b.save("s.example", _model(3, provisional=True)) is None
    assert b.save("s.example", _model(50, provisional=True)) is None  # provisional, however many pages
    assert b.save("s.example", _model(9)) is None  # finished on fewer pages
    assert b.load("s.example").pages == 10 and not b.load("s.example").provisional
    assert b.save("s.example", _model(10)) is not None  # as good: written (the same crawl saving again)
    assert b.save("s.example", _model(12)) is not None and a.load("s.example").pages == 12
    assert b.save("s.example", _model(2), force=True) is not None and a.load("s.example").pages == 2
    # A provisional model is replaced by a larger one or a finished one.
    assert a.save("p.example", _model(3, provisional=True)) is not None
    assert b.save("p.example", _model(2, provisional=True)) is None
    assert b.save("p.example", _model(4, provisional=True)) is not None
    assert b.save("p.example", _model(2)) is not None and a.load("p.example").pages == 2
    # A file that cannot be read (or of another site) is no better.
    a.path("c.example").write_text("{ truncated")
    assert a.save("c.example", _model(2, provisional=True)) is not None
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


SAVER = textwrap.dedent("""
    import sys
    from scrapy_deboiler import FitParams, SiteModel, SignatureStore
    store = SignatureStore(sys.argv[1])
    for n in range(int(sys.argv[2])):
        pages = 2 + n % 40
        provisional = bool(n % 3)
        keys = frozenset(f"{k:016x}" for k in range(pages)) if provisional else frozenset()
        store.save("shared.example", SiteModel(FitParams(), pages=pages, pairs=1,
                   support={f"{i:016x}": 2 for i in range(20_000)}, provisional=provisional, page_keys=keys))
""")


def test_processes_saving_at_once_end_with_the_best_model(tmp_path):
    """The check and the rename are one step across processes (a lock of
    the folder): whatever the interleaving, the best model any of them
    saved is the one on disk at the end."""
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path), str(rounds)]) for rounds in (40, 41, 39)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    model = SignatureStore(tmp_path).load("shared.example")
    # finished models: n % 3 == 0, pages 2 + n % 40; the best is n = 39 (41 pages)
    assert (model.pages, model.provisional) == (41, False)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
