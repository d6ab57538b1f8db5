"""The worker processes' side of ``_executor``: tasks read from a pipe,
answers written to another, in order. It imports neither Twisted nor
Scrapy: a worker starts with what cleaning needs.

The messages and their frames are ``_wire``'s.
"""

from __future__ import annotations

import os
import signal
from collections import OrderedDict
from typing import Any

from ._clean import Page, clean_page, summary_of
from ._fit_clean import clean_pages, fit_pages
from ._model import FitParams, SiteModel
from ._store import model_from_json, model_to_json
from ._wire import (FRAME_HEAD, KEEP_MODELS, PIPE_BYTES, SHUTDOWN_SIGNALS, Answer, Cleaned, CleanTask, Failed,
                    Fitted, Missing, PageCache, PageData, Ready, Signed, SignTask, Task, answer_frame,
                    decode_frame, frame_sizes, read_task)

__all__ = ["worker_main"]


class _Missing(Exception):
    """The task names a model or a kept page this worker does not have."""


class _WorkerState:
    def __init__(self) -> None:
        self.models: OrderedDict[int, SiteModel] = OrderedDict()
        self.pages = PageCache()
        self._params: tuple[Any, FitParams] | None = None

    def params(self, doc: dict) -> FitParams:
        if self._params is None or self._params[0] != doc:
            self._params = (doc, FitParams.from_json(doc))
        return self._params[1]

    def model(self, task: CleanTask) -> SiteModel | None:
        """The task's model; the crawl's mirror of this cache evicts the
        same way, in the same order."""
        if task.token is None:
            return None
        model = self.models.get(task.token)
        if task.model is not None:
            model = self.models[task.token] = model_from_json(task.model)[1]
            if len(self.models) > KEEP_MODELS:
                self.models.popitem(last=False)
        elif model is None:
            raise _Missing(task.token)
        self.models.move_to_end(task.token)
        return model

    def handle(self, head: dict, blobs: list[memoryview]) -> bytes:
        i = head.get("i", 0)
        try:
            task = read_task(head, blobs)
            return answer_frame(self.answer(task))
        except _Missing as e:
            return answer_frame(Missing(i, e.args[0]))
        except Exception as e:  # the page fails, the worker goes on
            return answer_frame(Failed(i, f"{type(e).__name__}: {e}"))

    def answer(self, task: Task) -> Answer:
        params = self.params(task.params)
        if isinstance(task, SignTask):
            self.pages.pop(task.ref)  # a page failing here is not kept
            page = _parse(task.page, params)
            sigs = sorted(page.signatures)
            meta = summary_of(page) if task.meta and page.skipped is None else None
            self.pages.keep(task.ref, page, task.size, task.cap)
            return Signed(task.i, sigs, meta)
        o = task.options
        if isinstance(task, CleanTask):
            model = self.model(task)
            kept: Page | None = self.pages.pop(task.ref) if task.ref is not None else None
            if kept is None:
                if task.page is None:  # sent as kept here, and it is not
                    raise _Missing(task.ref or "")
                kept = _parse(task.page, params)
            learnt = sorted(kept.signatures) if task.learn else None
            result = clean_page(kept, model, **o.kwargs())
            return Cleaned(task.i, result, learnt)
        parsed = [_parse(p, params) for p in task.pages]
        fitted = fit_pages(parsed, params, o.metadata)
        return Fitted(task.i, model_to_json("", fitted),
                      clean_pages(parsed, fitted, **o.kwargs()))


def _parse(page: PageData, params: FitParams) -> Page:
    url, html, encoding = page
    return Page(html, url, encoding, params.scheme, limits=None)


def worker_main(task_fd: int, result_fd: int) -> None:
    """A worker: read tasks from ``task_fd`` and answer each on
    ``result_fd``, in order, until the parent closes the tasks' pipe.

    Ctrl-C and SIGTERM are the crawl's to handle: a worker that died of one
    failed the page it was cleaning while Scrapy closed gracefully. Workers
    are born with both blocked (``ProcessCleaner._spawn``), so one arriving
    while the worker starts waits here to be ignored."""
    for sig in SHUTDOWN_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SHUTDOWN_SIGNALS)
    try:
        _serve(task_fd, result_fd)
    except BrokenPipeError:  # the crawl closed its end first: it is done with us
        pass


def _serve(task_fd: int, result_fd: int) -> None:
    state = _WorkerState()
    os.write(result_fd, answer_frame(Ready()))
    with os.fdopen(task_fd, "rb", buffering=PIPE_BYTES) as tasks:
        while True:
            head = tasks.read(FRAME_HEAD)
            if len(head) < FRAME_HEAD:
                return  # the crawl is done with us
            hlen, blen = frame_sizes(head)
            body = tasks.read(hlen + blen)
            if len(body) < hlen + blen:
                return
            frame = decode_frame(head + body, 0)
            assert frame is not None
            out = memoryview(state.handle(frame[0], frame[1]))
            while out:
                out = out[os.write(result_fd, out):]
