"""Cleaning in worker processes, for crawls on more than one core.

The compiled walks release the GIL, but content mode's per-block Python
still holds it for most of a page's cleaning: threads leave the second core
idle while Scrapy waits for the GIL (docs/pipeline.md). Worker processes
take that work off the crawl's process entirely.

Pages go to the workers and results come back over pipes that the reactor
itself writes and reads. ``concurrent.futures.ProcessPoolExecutor`` did
this with two helper threads that pickle, unpickle and wake the reactor:
every hand-off took the GIL from the reactor thread, and a crawl of 66 KB
pages ran at 0.60-0.68 of its speed without the pipeline, against 0.72-0.73
here (medians, same session: docs/pipeline.md).
The messages are ``_wire``'s typed tasks and answers, which both sides
import (the worker's side: ``_worker``).

A site's model goes to a worker once, not with every page: the parent
mirrors each worker's model cache (the worker handles tasks in the order
they are sent, so both sides evict alike), and a worker that lacks a model
anyway says so and gets it again. Pages a site holds until its model can be
fitted are parsed and signed by a worker as they arrive (``sign``) and kept
there, parsed, until they are cleaned (``clean`` with their ``ref``): the
parent mirrors that cache too, and a page the worker lacks is sent again.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import time
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReadDescriptor, IWriteDescriptor
from zope.interface import implementer

from ._model import FitParams, SiteModel
from ._store import model_from_json, model_to_json
from ._wire import (KEEP_MODELS, PIPE_BYTES, SHUTDOWN_SIGNALS, Cleaned, CleanOptions, CleanTask, Failed, Fitted,
                    FitTask, Missing, PageCache, PageData, Ready, Signed, SignTask, decode_frame,
                    read_answer, task_frame, widen_pipe)

__all__ = ["ProcessCleaner", "WorkerError", "WorkersGone"]

logger = logging.getLogger(__name__)

#: Tasks sent to a worker and not answered yet. The rest wait here, where
#: urgent ones (fits, signs, the cleans of a fit's pages: held items wait
#: for them) go before the cleans of newly arrived pages. Fewer (2 or 4)
#: left the worker waiting for the busy reactor between tasks.
_IN_FLIGHT = 64
#: Workers that may die in a row while starting (before they say they are
#: ready) before the workers are given up (a later death: ``_retried``).
_MAX_UNREADY_DEATHS = 3
#: HTML a worker keeps parsed for cleans to come (``ProcessCleaner``'s
#: ``keep_bytes``).
_KEEP_PAGE_BYTES = 16 << 20

_WORKER = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from scrapy_deboiler._worker import worker_main; worker_main(int(sys.argv[2]), int(sys.argv[3]))"
)


class WorkerError(Exception):
    """Cleaning failed in a worker (the worker's error, by its name), or
    the worker died while it had the page."""


class WorkersGone(WorkerError):
    """The workers were given up (``ProcessCleaner.broken``) before the
    task reached one: it can be done elsewhere."""

# -- the crawl's side ----------------------------------------------------


@dataclass
class _Task:
    """A task waiting for a worker, or sent to one: what its message
    (``_wire``) is made of when it is sent (with the model and the page, or
    naming them, as the worker's mirrored caches say)."""

    kind: str  # "clean", "fit" or "sign"
    params: dict[str, Any]
    #: Its pages, sent with it unless the worker keeps the page (``ref``).
    pages: list[PageData]
    done: Deferred
    options: CleanOptions | None = None
    learn: bool = False
    model: SiteModel | None = None
    #: Send the model and the page even if this worker should have them (it
    #: said it had not).
    resend: bool = False
    id: int = 0
    #: A page kept parsed in a worker: "sign" keeps it there, "clean" asks
    #: for it (and sends it only to a worker without it).
    ref: str | None = None
    #: Goes before the cleans of newly arrived pages: fits, signs, and the
    #: cleans of a fit's pages (the site's held items wait for them).
    urgent: bool = False
    #: A sign task: answer the page's metadata summary too.
    meta: bool = False
    #: Whether a worker died while on it already (see ``_worker_died``).
    died_once: bool = False



@implementer(IWriteDescriptor)
class _TaskPipe:
    """The pipe of a worker's tasks, for the reactor's ``addWriter`` (a
    descriptor has one file descriptor)."""

    def __init__(self, worker: _Worker) -> None:
        self.worker = worker

    def fileno(self) -> int:
        return self.worker.task_fd if not self.worker.dead else -1

    def logPrefix(self) -> str:  # noqa: N802 (Twisted's name)
        return "deboiler-worker"

    def doWrite(self) -> None:  # noqa: N802
        self.worker.flush()

    def connectionLost(self, reason: Any) -> None:  # noqa: N802
        self.worker.die()


@implementer(IReadDescriptor)
class _Worker:
    """One worker process and its two pipes: the reactor reads its answers
    (``addReader``) and writes its tasks (``addWriter`` of ``_TaskPipe``)."""

    def __init__(self, owner: ProcessCleaner, reactor: Any) -> None:
        self.owner = owner
        self.reactor = reactor
        self.inflight: deque[_Task] = deque()
        self.models: OrderedDict[int, None] = OrderedDict()  # the worker's cache, mirrored
        self.pages = PageCache()  # the worker's kept pages, mirrored (sizes only)
        self.out: deque[memoryview] = deque()
        self.buf = bytearray()
        # Reads land here: os.read(n) would allocate (and fault in) n bytes a call.
        self.chunk = memoryview(bytearray(PIPE_BYTES))
        self.dead = False
        self.ready = False  # said so: it could import what it needs
        #: Since when it has had tasks without answering one (None: idle).
        self.waiting_since: float | None = None
        #: Why it was killed (``ProcessCleaner.kill_stalled``), for its task's error.
        self.killed_for: str | None = None
        self.proc, self.task_fd, self.result_fd = self._spawn()
        self.writer = _TaskPipe(self)
        self.reactor.addReader(self)

    def _spawn(self) -> tuple[subprocess.Popen, int, int]:
        """A worker process, started with the shutdown signals blocked in
        this thread meanwhile: a child inherits the blocked mask through
        exec, so a Ctrl-C while it starts cannot kill it."""
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        for fd in (task_w, result_r):
            widen_pipe(fd)
            os.set_blocking(fd, False)
        masked = hasattr(signal, "pthread_sigmask")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, SHUTDOWN_SIGNALS) if masked else None
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER, json.dumps(sys.path), str(task_r), str(result_w)],
                pass_fds=(task_r, result_w), stdin=subprocess.DEVNULL, close_fds=True)
        finally:
            if old is not None:  # masked above
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
            os.close(task_r)
            os.close(result_w)
        return proc, task_w, result_r

    # -- reactor descriptor -------------------------------------------------

    def fileno(self) -> int:
        return self.result_fd if not self.dead else -1

    def logPrefix(self) -> str:  # noqa: N802 (Twisted's name)
        return "deboiler-worker"

    def connectionLost(self, reason: Any) -> None:  # noqa: N802
        self.die()

    def doRead(self) -> None:  # noqa: N802
        try:
            n = os.readv(self.result_fd, [self.chunk])
        except BlockingIOError:
            return
        except OSError:
            n = 0
        if not n:
            self.die()
            return
        try:
            self.buf += self.chunk[:n]
        except BufferError:  # see _drain
            self.buf = self.buf + self.chunk[:n]
        try:
            at = self._drain()
        except Exception as e:  # a frame we cannot read: this worker is not to be trusted
            logger.error("deboiler: a worker process answered what cannot be read (%s: %s); starting a new one",
                         type(e).__name__, e)
            self.buf = bytearray()
            self.die(kill=True)
            return
        try:
            del self.buf[:at]
        except BufferError:
            self.buf = self.buf[at:]

    def _drain(self) -> int:
        """Answer every whole frame in the buffer; where the rest starts.

        The answers' blobs are views of the buffer, released here once
        answered. A view still held elsewhere (a traceback's frame keeps its
        locals) would forbid resizing the buffer: ``doRead`` then moves to a
        new one."""
        at = 0
        while not self.dead and (frame := decode_frame(self.buf, at)) is not None:
            head, blobs, at = frame
            try:
                self.owner._answer(self, head, blobs)
            finally:
                for b in blobs:
                    b.release()
        return at

    # -- tasks ---------------------------------------------------------------

    def send(self, task: _Task, frame: bytes) -> None:
        if not self.inflight:
            self.waiting_since = time.monotonic()
        self.inflight.append(task)
        was_waiting = bool(self.out)
        self.out.append(memoryview(frame))
        if not was_waiting:
            self.flush()

    def flush(self) -> None:
        while self.out and not self.dead:
            chunk = self.out[0]
            try:
                n = os.write(self.task_fd, chunk)
            except BlockingIOError:
                n = 0
            except OSError:
                # The worker is gone. Its reader reads what it answered
                # before it died, then says so (``die``): dying here handed
                # back answered tasks as unanswered, and blamed the first of
                # them for the death (a page signed just before the one that
                # killed the worker failed with it).
                self.out.clear()
                self.reactor.removeWriter(self.writer)
                return
            if n < len(chunk):
                self.out[0] = chunk[n:]
                self.reactor.addWriter(self.writer)
                return
            self.out.popleft()
        if not self.dead:
            self.reactor.removeWriter(self.writer)

    def die(self, kill: bool = False) -> None:
        """The worker is gone (or is to go): close its pipes, reap it, and
        hand its tasks back to the owner."""
        if self.dead:
            return
        self.dead = True
        self.reactor.removeReader(self)
        self.reactor.removeWriter(self.writer)
        for fd in (self.task_fd, self.result_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if kill and self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)  # its pipe closed: it has exited or is exiting
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        tasks, self.inflight = list(self.inflight), deque()
        self.owner._worker_died(self, tasks)

    def close(self) -> None:
        """The crawl is done: the worker reads the end of its tasks and exits."""
        if self.dead:
            return
        self.dead = True
        self.reactor.removeReader(self)
        self.reactor.removeWriter(self.writer)
        for fd in (self.task_fd, self.result_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class _Shipped:
    token: int
    doc: dict = field(repr=False)


class ProcessCleaner:
    """``processes`` worker processes that clean pages and fit sites; the
    calls return Deferreds fired on the reactor thread."""

    def __init__(self, processes: int, reactor: Any = None, keep_bytes: int = _KEEP_PAGE_BYTES) -> None:
        if reactor is None:
            from twisted.internet import reactor
        self.processes = processes
        #: HTML (characters or bytes) of signed pages a worker keeps parsed.
        self.keep_bytes = keep_bytes
        self._reactor = reactor
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        # id of a model object -> its token and document, dropped with the
        # model (models are dataclasses: not hashable, weakly referable)
        self._shipped: dict[int, _Shipped] = {}
        self._urgent: deque[_Task] = deque()
        self._cleans: deque[_Task] = deque()
        self._closed = False
        #: Why the workers were given up (they die before answering anything).
        self.broken: str | None = None
        #: Workers that died (or were killed) and were replaced.
        self.deaths = 0
        self._unready_deaths = 0
        self._params: tuple[FitParams, dict] | None = None
        self._workers = [_Worker(self, reactor) for _ in range(processes)]

    # -- the pipeline's calls ----------------------------------------------

    def clean(self, html: str | bytes, url: str, encoding: str | None, model: SiteModel | None,
              params: FitParams, learn: bool, options: CleanOptions, *, ref: str | None = None,
              urgent: bool = False) -> Deferred:
        """A Deferred of (CleanResult, signatures or None): the arguments
        of ``_workplace.clean_one``, and by keyword ``ref``: the
        page was ``sign``-ed under that name (a worker that kept it parsed
        cleans it without the HTML); ``urgent``: before other cleans."""
        return self._submit(_Task("clean", self._params_doc(params), [(url, html, encoding)], Deferred(),
                                  options, learn, model, ref=ref,
                                  urgent=urgent))

    def sign(self, ref: str, html: str | bytes, url: str, encoding: str | None, params: FitParams,
             meta: bool = False) -> Deferred:
        """A Deferred of the page's signatures and, with ``meta``, its
        metadata summary (``page_summary``; else None); the worker keeps it
        parsed (some ``keep_bytes`` of pages) for a ``clean`` naming ``ref``."""
        return self._submit(_Task("sign", self._params_doc(params), [(url, html, encoding)], Deferred(), ref=ref,
                                  urgent=True, meta=meta))

    def fit(self, pages: list[PageData], params: FitParams, options: CleanOptions) -> Deferred:
        """A Deferred of (the model fitted on ``pages``, their CleanResults)."""
        return self._submit(_Task("fit", self._params_doc(params), pages, Deferred(),
                                  options, urgent=True))

    def _params_doc(self, params: FitParams) -> dict:
        """``params.to_json()``, once (``asdict`` copies deeply: 0.18 ms)."""
        if self._params is None or self._params[0] is not params:
            self._params = (params, params.to_json())
        return self._params[1]

    def shutdown(self) -> None:
        """Stop the workers; tasks not answered yet fail."""
        if self._closed:
            return
        self._closed = True
        for w in self._workers:
            w.close()
        left = [t for w in self._workers for t in w.inflight] + list(self._urgent) + list(self._cleans)
        self._urgent.clear()
        self._cleans.clear()
        for w in self._workers:
            w.inflight.clear()
        for t in left:
            t.done.errback(WorkersGone(self.broken) if self.broken
                           else WorkerError("the worker processes were stopped"))

    # -- dispatch ------------------------------------------------------------

    def _submit(self, task: _Task) -> Deferred:
        if self._closed:
            task.done.errback(WorkersGone(self.broken) if self.broken
                              else WorkerError("the worker processes were stopped"))
            return task.done
        task.id = next(self._ids)
        self._queue(task).append(task)
        self._dispatch()
        return task.done

    def _queue(self, task: _Task) -> deque[_Task]:
        return self._urgent if task.urgent else self._cleans

    def _dispatch(self) -> None:
        while self._urgent or self._cleans:
            free = [w for w in self._workers if not w.dead and len(w.inflight) < _IN_FLIGHT]
            if not free:
                return
            task = (self._urgent or self._cleans).popleft()
            ref = task.ref
            if ref is not None and task.kind == "clean":  # the worker that kept it, if free
                worker = min(free, key=lambda w: (ref not in w.pages, len(w.inflight)))
            else:
                worker = min(free, key=lambda w: len(w.inflight))
            worker.send(task, self._frame(worker, task))

    def _frame(self, worker: _Worker, task: _Task) -> bytes:
        """The task's message for ``worker``, whose caches (mirrored here)
        say whether it needs the model and the page."""
        if task.kind == "sign":
            assert task.ref is not None
            size = len(task.pages[0][1])
            worker.pages.keep(task.ref, None, size, self.keep_bytes)
            return task_frame(SignTask(task.id, task.params, task.ref, size, self.keep_bytes, task.pages[0],
                                       task.meta))
        assert task.options is not None
        if task.kind == "fit":
            return task_frame(FitTask(task.id, task.params, task.options, task.pages))
        page: PageData | None = task.pages[0]
        if task.ref is not None:
            had = worker.pages.drop(task.ref)  # the worker takes it out when it cleans
            if had and not task.resend:
                page = None
        token, doc = None, None
        if task.model is not None:
            shipped = self._ship(task.model)
            token = shipped.token
            if shipped.token not in worker.models or task.resend:
                doc = shipped.doc
                worker.models[shipped.token] = None
                if len(worker.models) > KEEP_MODELS:
                    worker.models.popitem(last=False)
            worker.models.move_to_end(shipped.token)
        return task_frame(CleanTask(task.id, task.params, task.options, task.learn, page, task.ref, token, doc))

    def _ship(self, model: SiteModel) -> _Shipped:
        key = id(model)
        shipped = self._shipped.get(key)
        if shipped is None:
            shipped = self._shipped[key] = _Shipped(next(self._tokens), model_to_json("", model, keys=False))
            weakref.finalize(model, self._forget, key, shipped.token)
        return shipped

    def _forget(self, key: int, token: int) -> None:
        """The model object is gone (its id may be reused): forget it."""
        shipped = self._shipped.get(key)
        if shipped is not None and shipped.token == token:
            del self._shipped[key]

    @property
    def pending(self) -> int:
        """Tasks not answered yet."""
        return len(self._urgent) + len(self._cleans) + sum(len(w.inflight) for w in self._workers)

    def kill_stalled(self, timeout: float) -> int:
        """Kill the workers that have answered nothing for ``timeout``
        seconds while they had tasks (a page that hangs the parser, a
        stopped process): the task each was on fails, the others go to its
        replacement. How many were killed."""
        now, killed = time.monotonic(), 0
        for worker in list(self._workers):
            since = worker.waiting_since
            if worker.dead or since is None or now - since < timeout or not worker.inflight:
                continue
            task = worker.inflight[0]
            where = task.pages[0][0] if task.pages else "?"
            what = f"{task.kind} of {len(task.pages)} pages from {where}" if task.kind == "fit" else where
            worker.killed_for = f"answered nothing for {now - since:.0f} s"
            logger.warning("deboiler: a worker process %s with %d pages given (the first: %s): killed; a new "
                           "one takes the others (DEBOILER_WORKER_TIMEOUT)", worker.killed_for,
                           len(worker.inflight), what)
            worker.die(kill=True)
            killed += 1
        return killed

    # -- answers -------------------------------------------------------------

    def _answer(self, worker: _Worker, head: dict, blobs: list[memoryview]) -> None:
        answer = read_answer(head, blobs)
        if isinstance(answer, Ready):  # the worker has started (see _worker_died)
            worker.ready = True
            self._unready_deaths = 0
            return
        task = worker.inflight.popleft()
        worker.waiting_since = time.monotonic() if worker.inflight else None
        if answer.i != task.id:
            task.done.errback(WorkerError(f"the worker answered task {answer.i!r} for {task.id}"))
            raise ValueError(f"answer {answer.i!r} for task {task.id}")
        if isinstance(answer, Missing):  # once more, with the model, ahead of the rest
            task.resend = True
            self._queue(task).appendleft(task)
            self._dispatch()
            return
        if isinstance(answer, Failed):
            self._dispatch()
            task.done.errback(WorkerError(answer.error))
            return
        try:
            value = _value(task, answer)
        except Exception as e:
            task.done.errback(WorkerError(f"unreadable answer from the worker: {type(e).__name__}: {e}"))
            raise
        self._dispatch()  # the worker's next task first, then the item goes on
        task.done.callback(value)

    def _worker_died(self, worker: _Worker, tasks: list[_Task]) -> None:
        """A worker died: the task it was working on goes to a new worker
        once more, and fails if it dies again (it may be what killed it; see
        ``_retried``), the ones waiting in its pipe go to the others, and a
        new worker takes its place; unless workers cannot run here at all."""
        if self._closed:
            return
        code = worker.proc.returncode
        self.deaths += 1
        # Before it said it was ready it had read no task: none killed it.
        killer = tasks[0] if tasks and worker.ready else None
        retry = killer is not None and _retried(killer, worker.killed_for)
        if not worker.ready:
            self._unready_deaths += 1
        elif worker.killed_for is None:  # (a kill for silence was logged already)
            logger.warning("deboiler: a worker process died (exit status %s)%s; a new one takes its place%s%s",
                           code, _doing(killer) if killer is not None and killer.pages else "",
                           f" and the {len(tasks) - 1} other pages it had" if len(tasks) > 1 else "",
                           " and tries that page once more" if retry else "")
        if retry:
            killer = None  # it goes again, first, with the others
        for task in reversed(tasks[1:] if killer else tasks):
            task.resend = False
            self._queue(task).appendleft(task)
        if killer is not None:
            why = worker.killed_for or f"died (exit status {code})"
            again = " again" if killer.died_once else ""
            killer.done.errback(WorkerError(f"the worker process {why}{again} on this page"))
        if self._unready_deaths >= _MAX_UNREADY_DEATHS:
            # Started again and again, they would only die again (an
            # interpreter that cannot import this package, a memory limit):
            # the tasks fail with WorkersGone, for the caller to do elsewhere.
            self.broken = (f"{self._unready_deaths} worker processes in a row died while starting"
                           f" (the last with exit status {code})")
            logger.error(
                "deboiler: %s; cleaning in the pipeline's threads instead (DEBOILER_PROCESSES = 0 says so"
                " from the start)", self.broken)
            self.shutdown()
            return
        self._workers[self._workers.index(worker)] = _Worker(self, self._reactor)
        self._dispatch()


def _retried(task: _Task, killed_for: str | None) -> bool:
    """Whether the task a worker died on goes to the new worker once more: a
    death may be the page's fault (a crash, a memory limit) or not (the OOM
    killer, an operator). Not a page that hung its worker (it would hang the
    next), nor a fit (its failure signs each page alone, finding the culprit)."""
    if task.died_once or killed_for is not None or task.kind == "fit":
        return False
    task.died_once = True
    return True


def _doing(task: _Task) -> str:
    """What a worker was doing with the task, for a log line: a fit's first
    page is not the page at fault."""
    if task.kind == "fit":
        return f" fitting {len(task.pages)} pages (the first: {task.pages[0][0]})"
    return f" {'signing' if task.kind == 'sign' else 'cleaning'} {task.pages[0][0]}"


def _value(task: _Task, answer: Signed | Cleaned | Fitted) -> Any:
    """What the task's Deferred fires with, from the worker's answer."""
    if task.kind == "clean" and isinstance(answer, Cleaned):
        return answer.result, frozenset(answer.signatures) if answer.signatures is not None else None
    if task.kind == "sign" and isinstance(answer, Signed):
        return frozenset(answer.signatures), answer.meta
    if task.kind == "fit" and isinstance(answer, Fitted):
        return model_from_json(answer.model)[1], answer.results
    raise ValueError(f"a {type(answer).__name__} answer to a {task.kind} task")
