"""The worker processes (DEBOILER_PROCESSES) on the real reactor: what
they answer equals cleaning in this process, whatever happens to them."""

from dataclasses import replace
import os
import signal

import pytest
import pytest_twisted
from twisted.internet import defer, reactor
from twisted.internet.task import deferLater

from sitegen import site_pages

from scrapy_deboiler._executor import ProcessCleaner, WorkerError, WorkersGone
from scrapy_deboiler._wire import (Cleaned, CleanOptions, CleanTask, Failed, FitTask, Fitted, Missing, Ready, Signed,
                                   SignTask, answer_frame, decode_frame, encode_frame, read_answer, read_task,
                                   task_frame)
from scrapy_deboiler._clean import CleanResult, Page
from scrapy_deboiler._fit_clean import learn_pages
from scrapy_deboiler._limits import Skip
from scrapy_deboiler._model import FitParams, SiteModel
from scrapy_deboiler._workplace import clean_one as _clean_one, fit_site as _fit_site
from scrapy_deboiler._store import model_to_json

PARAMS = FitParams()


def pages(n, paragraphs=5, site="alpha"):
    return [(url, html, None) for url, html, _text in site_pages(site, n, paragraphs=paragraphs)]


def same(a, b):
    assert (a.text, a.html, a.removed, a.notes, a.comments, a.skipped, a.markdown, a.title) == (
        b.text, b.html, b.removed, b.notes, b.comments, b.skipped, b.markdown, b.title)


@pytest.fixture
def cleaner():
    c = ProcessCleaner(1)
    yield c
    c.shutdown()


def test_a_frame_reads_back_what_was_written_and_waits_for_its_end():
    blobs = ["caf\u00e9 \ud800".encode("utf-8", "surrogatepass"), b"", b"\x00\xff"]
    frame = encode_frame({"i": 7, "x": [1, "two"]}, blobs)
    twice = frame + frame
    head, got, end = decode_frame(twice, 0)
    assert head["i"] == 7 and head["x"] == [1, "two"] and [bytes(b) for b in got] == blobs
    assert end == len(frame) and decode_frame(twice, end)[2] == len(twice)
    for cut in (1, 7, len(frame) - 1):  # not all of it yet
        assert decode_frame(frame[:cut], 0) is None


def test_every_message_of_the_protocol_reads_back_as_written():
    """``_wire``'s typed tasks and answers, through their frames."""
    page = ("https://a.example/x", b"<p>caf\xe9</p>", "cp1252")
    odd = ("https://b.example/\u00e9", "<p>x \ud800</p>", None)  # a lone surrogate in decoded HTML
    tasks = [
        SignTask(3, PARAMS.to_json(), "ref-1", 11, 1 << 20, page),
        CleanTask(4, {}, CleanOptions("content", True, True, True), True, odd, "ref-2", 7, {"model": 1}),
        CleanTask(5, {}, CleanOptions("boilerplate"), False),  # a kept page, a known model
        FitTask(6, {}, CleanOptions("content", markdown=True), [page, odd]),
    ]
    for task in tasks:
        head, blobs, _ = decode_frame(task_frame(task), 0)
        assert read_task(head, blobs) == task
    result = CleanResult("text \ud800", "<p>html</p>", removed=3, notes=["a note"], comments="c",
                         skipped=Skip("too-large", "why"), removed_blocks=[("s1", "start")], markdown="# m",
                         title="t", fallback="emptied", model_share=0.25)
    answers = [Ready(), Signed(1, ["a", "b"]), Cleaned(2, result, ["s"]), Cleaned(2, CleanResult("", "")),
               Fitted(3, {"x": 1}, [result, CleanResult("b", "")]), Missing(4, 9), Missing(4, "ref-3"),
               Failed(5, "ValueError: bad")]
    for answer in answers:
        head, blobs, _ = decode_frame(answer_frame(answer), 0)
        assert read_answer(head, blobs) == answer


@pytest_twisted.ensureDeferred
async def test_fits_larger_than_a_pipe_and_cleans_of_str_and_bytes_equal_this_process(cleaner):
    site = pages(20, paragraphs=400)  # about 1.3 MB: many writes of a 1 MiB pipe
    assert sum(len(h) for _, h, _ in site) > 1 << 20
    model, results = await cleaner.fit(site, PARAMS, CleanOptions("content", False, True))
    want_model, want = _fit_site(site, PARAMS, CleanOptions("content", False, True))
    assert model_to_json("", model) == model_to_json("", want_model)
    for got, exp in zip(results, want, strict=True):
        same(got, exp)
    url, html, _ = pages(22, paragraphs=400)[21]
    for body, enc in ((html, None), (html.encode("cp1252", "xmlcharrefreplace"), "cp1252")):
        for mode in ("content", "boilerplate"):
            (got, sigs), (exp, want_sigs) = (
                await cleaner.clean(body, url, enc, model, PARAMS, True, CleanOptions(mode)),
                _clean_one(body, url, enc, model, PARAMS, True, CleanOptions(mode)))
            same(got, exp)
            assert sigs == want_sigs and sigs
    worker = cleaner._workers[0]
    assert list(worker.models) == [cleaner._ship(model).token]  # the model went once


@pytest_twisted.ensureDeferred
async def test_a_worker_that_lost_a_model_is_sent_it_again(cleaner):
    site = pages(6)
    model, _ = _fit_site(site, PARAMS, CleanOptions("boilerplate"))
    # The parent believes the worker has the model; the worker never saw it.
    cleaner._workers[0].models[cleaner._ship(model).token] = None
    url, html, _ = pages(8)[7]
    got, _ = await cleaner.clean(html, url, None, model, PARAMS, False, CleanOptions("boilerplate"))
    same(got, _clean_one(html, url, None, model, PARAMS, False, CleanOptions("boilerplate"))[0])
    assert got.removed > 0


@pytest_twisted.ensureDeferred
async def test_an_error_in_a_worker_fails_that_page_only(cleaner):
    url, html, _ = pages(1)[0]
    with pytest.raises(WorkerError, match="ValueError: mode must be one of"):
        await cleaner.clean(html, url, None, None, PARAMS, False, CleanOptions("nonsense"))
    got, _ = await cleaner.clean(html, url, None, None, PARAMS, False, CleanOptions("content"))
    assert got.text == _clean_one(html, url, None, None, PARAMS, False, CleanOptions("content"))[0].text
    assert cleaner._workers[0].proc.poll() is None


@pytest_twisted.ensureDeferred
async def test_a_worker_killed_once_costs_no_page(cleaner, caplog):
    """A worker killed from outside (the OOM killer choosing it for another
    process's memory, an operator) with five pages in its pipe: the page it
    was on goes to the new worker once more, with the others; all are
    cleaned. (Its first page used to fail: a crawl's item lost to a kill
    that was not its fault, as a loaded CI machine showed.)"""
    site = pages(5)
    await cleaner.clean(site[0][1], site[0][0], None, None, PARAMS, False, CleanOptions("content"))  # it has started
    worker = cleaner._workers[0]
    assert worker.ready
    os.kill(worker.proc.pid, signal.SIGSTOP)  # the tasks wait in its pipe
    jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")) for u, h, _ in site]
    assert len(worker.inflight) == 5
    os.kill(worker.proc.pid, signal.SIGKILL)
    results = await defer.DeferredList(jobs, consumeErrors=True)
    for (ok, (got, _)), (u, h, _) in zip(results, site):
        assert ok
        same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
    assert cleaner.deaths == 1 and cleaner._workers[0] is not worker and cleaner._workers[0].proc.poll() is None
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and site[0][0] in warned[0] and "tries that page once more" in warned[0], warned


_DIES_ON_POISON = ("import json, os, signal, sys; sys.path[:] = json.loads(sys.argv[1])\n"
                   "from scrapy_deboiler import _worker\n"
                   "_Page = _worker.Page\n"
                   "def Page(html, *args, **kwargs):\n"
                   "    if 'poison' in (html if isinstance(html, str) else html.decode('utf-8', 'replace')):\n"
                   "        os.kill(os.getpid(), signal.SIGKILL)\n"
                   "    return _Page(html, *args, **kwargs)\n"
                   "_worker.Page = Page\n"
                   "_worker.worker_main(int(sys.argv[2]), int(sys.argv[3]))\n")


@pytest_twisted.ensureDeferred
async def test_a_page_its_worker_dies_on_twice_fails_alone(monkeypatch, caplog):
    """A page that kills every worker given it (a memory limit on a huge
    page): it fails after its second worker, naming the death; the pages
    around it are cleaned, and no third worker is spent on it."""
    from scrapy_deboiler import _executor

    monkeypatch.setattr(_executor, "_WORKER", _DIES_ON_POISON)
    site = pages(4)
    site[1] = (site[1][0], site[1][1].replace("</body>", "<p>poison</p></body>"), None)
    cleaner = ProcessCleaner(1)
    try:
        jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")) for u, h, _ in site]
        results = await defer.DeferredList(jobs, consumeErrors=True)
        assert not results[1][0] and results[1][1].check(WorkerError)
        assert str(results[1][1].value) == f"the worker process died (exit status {-signal.SIGKILL}) again on this page"
        for n in (0, 2, 3):
            ok, (got, _) = results[n]
            assert ok
            u, h, _ = site[n]
            same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
        assert cleaner.deaths == 2 and not cleaner.broken
    finally:
        cleaner.shutdown()
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 2 and all(site[1][0] in m for m in warned), warned
    assert "once more" in warned[0] and "once more" not in warned[1]


@pytest_twisted.ensureDeferred
async def test_a_worker_killed_while_starting_fails_no_page(cleaner):
    site = pages(3)
    worker = cleaner._workers[0]
    jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")) for u, h, _ in site]
    os.kill(worker.proc.pid, signal.SIGKILL)  # before this reactor turn could read that it was ready
    for job, (u, h, _) in zip(jobs, site):
        got, _ = await job
        same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
    assert cleaner._workers[0] is not worker and cleaner.broken is None


@pytest_twisted.ensureDeferred
async def test_shutdown_fails_what_was_not_answered_and_later_calls(cleaner):
    site = pages(3)
    worker = cleaner._workers[0]
    os.kill(worker.proc.pid, signal.SIGSTOP)
    jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")) for u, h, _ in site]
    os.kill(worker.proc.pid, signal.SIGCONT)
    cleaner.shutdown()
    results = await defer.DeferredList(jobs, consumeErrors=True)
    assert [ok for ok, _ in results] == [False] * 3
    assert all(f.check(WorkerError) for _, f in results)
    assert worker.proc.returncode is not None  # reaped, not left behind
    with pytest.raises(WorkerError, match="stopped"):
        await cleaner.clean(site[0][1], site[0][0], None, None, PARAMS, False, CleanOptions("content"))


@pytest_twisted.ensureDeferred
async def test_answers_go_on_while_something_keeps_a_traceback_of_an_earlier_one(cleaner):
    """A callback's exception kept alive (a logging handler keeping records
    with exc_info does it) keeps the frames of the executor's read, and
    their locals: the views of its buffer must not stop the next reads."""
    kept = []

    def boom(result):
        try:
            raise RuntimeError("a callback failed")
        except RuntimeError as e:
            kept.append(e)  # its traceback's frames lead back to the read
        return result

    site = pages(6, paragraphs=100)
    jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")).addCallback(boom)
            for u, h, _ in site]
    results = await defer.gatherResults(jobs)
    assert len(kept) == 6
    for (got, _), (u, h, _) in zip(results, site):
        same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
    assert cleaner._workers[0].proc.poll() is None


@pytest_twisted.ensureDeferred
async def test_workers_that_cannot_start_are_given_up(monkeypatch, caplog):
    from scrapy_deboiler import _executor

    # What an interpreter that cannot import the package does.
    monkeypatch.setattr(_executor, "_WORKER", "import sys; sys.exit(3)")
    cleaner = ProcessCleaner(1)
    try:
        url, html, _ = pages(1)[0]
        with pytest.raises(WorkersGone, match="3 worker processes in a row died while starting"):
            await cleaner.clean(html, url, None, None, PARAMS, False, CleanOptions("content"))
        assert cleaner.broken and "exit status 3" in cleaner.broken
        with pytest.raises(WorkersGone):  # at once, no new worker
            await cleaner.clean(html, url, None, None, PARAMS, False, CleanOptions("content"))
        assert all(w.dead for w in cleaner._workers)
        assert [r.levelname for r in caplog.records if "died while starting" in r.getMessage()] == ["ERROR"]
    finally:
        cleaner.shutdown()


@pytest_twisted.ensureDeferred
async def test_signed_pages_are_fitted_here_and_cleaned_from_the_workers_parse(cleaner):
    site = pages(6, paragraphs=50)
    keys = [f"k{n}" for n in range(len(site))]
    signed = await defer.gatherResults([cleaner.sign(k, h, u, None, PARAMS, meta=True)
                                        for k, (u, h, _) in zip(keys, site)])
    sigs = [s for s, _ in signed]
    assert [set(s) for s in sigs] == [set(Page(h, u, None, PARAMS.scheme).signatures) for u, h, _ in site]
    # with each page's metadata summary: the model learns what a fit of the whole pages learns
    model = learn_pages(SiteModel.fit(zip([u for u, _, _ in site], sigs), PARAMS), [m for _, m in signed])
    want_model, want = _fit_site(site, PARAMS, CleanOptions("content", metadata=True))
    assert model.metadata_hints is not None
    assert model_to_json("", model) == model_to_json("", want_model)
    want = [replace(w, metadata=None) for w in want]
    worker = cleaner._workers[0]
    assert list(worker.pages.entries) == keys
    # No HTML comes with them: the worker cleans what it kept.
    got = await defer.gatherResults([cleaner.clean("", u, None, model, PARAMS, False, CleanOptions("content"), ref=k)
                                     for k, (u, _, _) in zip(keys, site)])
    for (g, _), w in zip(got, want, strict=True):
        same(g, w)
    assert not worker.pages.entries


@pytest_twisted.ensureDeferred
async def test_a_page_the_worker_does_not_keep_is_sent_again():
    cleaner = ProcessCleaner(1, keep_bytes=1)  # it keeps the newest page only
    try:
        site = pages(3, paragraphs=50)
        for n, (u, h, _) in enumerate(site):
            await cleaner.sign(f"k{n}", h, u, None, PARAMS)
        worker = cleaner._workers[0]
        assert list(worker.pages.entries) == ["k2"]
        worker.pages.keep("k0", None, 10, cleaner.keep_bytes)  # the mirror believes, wrongly
        for n, (u, h, _) in enumerate(site):
            got, _ = await cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content"), ref=f"k{n}")
            same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
        assert not worker.pages.entries and worker.proc.poll() is None
    finally:
        cleaner.shutdown()


@pytest_twisted.ensureDeferred
async def test_pages_kept_by_a_killed_worker_go_to_the_next_with_their_html(cleaner):
    site = pages(2, paragraphs=50)
    for n, (u, h, _) in enumerate(site):
        await cleaner.sign(f"k{n}", h, u, None, PARAMS)
    worker = cleaner._workers[0]
    os.kill(worker.proc.pid, signal.SIGKILL)
    while cleaner._workers[0] is worker:  # the reactor reads that it died
        await deferLater(reactor, 0.01)
    for n, (u, h, _) in enumerate(site):
        got, _ = await cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("boilerplate"), ref=f"k{n}")
        same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("boilerplate"))[0])


@pytest_twisted.ensureDeferred
async def test_a_worker_that_answers_nothing_is_killed_and_its_other_pages_go_on(cleaner, caplog):
    site = pages(4)
    await cleaner.clean(site[0][1], site[0][0], None, None, PARAMS, False, CleanOptions("content"))  # it has started
    worker = cleaner._workers[0]
    os.kill(worker.proc.pid, signal.SIGSTOP)  # hung: it takes no task and answers nothing
    jobs = [cleaner.clean(h, u, None, None, PARAMS, False, CleanOptions("content")) for u, h, _ in site[1:]]
    assert cleaner.kill_stalled(0.3) == 0 and cleaner.pending == 3  # not yet
    await deferLater(reactor, 0.4)
    assert cleaner.kill_stalled(0.3) == 1 and cleaner.deaths == 1
    results = await defer.DeferredList(jobs, consumeErrors=True)
    assert not results[0][0] and "answered nothing for" in str(results[0][1].value)
    for (ok, (got, _)), (u, h, _) in zip(results[1:], site[2:]):
        assert ok
        same(got, _clean_one(h, u, None, None, PARAMS, False, CleanOptions("content"))[0])
    assert worker.proc.returncode == -signal.SIGKILL and cleaner._workers[0] is not worker
    assert cleaner.pending == 0 and cleaner.kill_stalled(0.3) == 0
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "answered nothing" in warned[0] and site[1][0] in warned[0]
