"""Cleaning in worker processes, for crawls on more than one core.

The compiled walks release the GIL, but content mode's per-block Python
still holds it for most of a page's cleaning (2.2 of 3.5 ms on a 66 KB
page): threads leave the second core idle while Scrapy waits for the GIL
(docs/pipeline.md). Worker processes take that work off the crawl's
process entirely; pages go out as text, results come back as plain data.

A site's model goes to a worker once, not with every page: each worker
keeps the models it has seen (by a token naming the model object), and a
worker that has not seen one asks for it again.
"""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
import signal
import weakref
from collections import OrderedDict
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from typing import Any

from ._clean import CleanResult, Page, clean_page
from ._model import FitParams, SiteModel

__all__ = ["ModelMissing", "ProcessCleaner"]


class ModelMissing(Exception):
    """A worker was sent a model token it has not seen (send the model)."""


_MODELS: OrderedDict[int, SiteModel] = OrderedDict()
_KEEP_MODELS = 256


def _model(token: int | None, blob: bytes | None) -> SiteModel | None:
    if token is None:
        return None
    model = _MODELS.get(token)
    if model is None:
        if blob is None:
            raise ModelMissing(token)
        model = _MODELS[token] = pickle.loads(blob)  # our own process's object
        if len(_MODELS) > _KEEP_MODELS:
            _MODELS.popitem(last=False)
    else:
        _MODELS.move_to_end(token)
    return model


def _clean_remote(html: str | bytes, url: str, encoding: str | None, token: int | None, blob: bytes | None,
                  params: FitParams, learn: bool, mode: str, explain: bool, markdown: bool,
                  ) -> tuple[CleanResult, frozenset[str] | None]:
    page = Page(html, url, encoding, params.scheme, limits=None)
    sigs = page.signatures if learn else None
    return clean_page(page, _model(token, blob), mode=mode, explain=explain, markdown=markdown), sigs


def _fit_remote(pages: list[tuple[str, str | bytes, str | None]], params: FitParams, mode: str,
                explain: bool, markdown: bool) -> tuple[SiteModel, list[CleanResult]]:
    parsed = [Page(html, url, enc, params.scheme, limits=None) for url, html, enc in pages]
    model = SiteModel.fit(parsed, params)
    return model, [clean_page(p, model, mode=mode, explain=explain, markdown=markdown) for p in parsed]


#: What a terminal's Ctrl-C (to the whole process group) and systemd's stop
#: (SIGTERM to the whole unit) send the workers too.
_SHUTDOWN_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _worker_start() -> None:
    """Workers leave Ctrl-C and SIGTERM to the crawl's process: a worker
    that died of one failed the pages it was cleaning (``status: error``)
    while Scrapy closed gracefully. They are born with both blocked
    (``_spawn``), so one arriving while the worker starts waits here to be
    ignored. A worker ends when the crawl closes the pool, or dies."""
    for sig in _SHUTDOWN_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SHUTDOWN_SIGNALS)


def _ready() -> None:
    """A first task, so that every worker is started at once."""


class ProcessCleaner:
    """``processes`` workers (spawned, never forked: the crawl's process
    runs threads) that clean pages and fit sites."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._ctx = multiprocessing.get_context("spawn")
        self._pool = self._new_pool()
        self._closed = False
        self._tokens = itertools.count(1)
        # id of a model object -> [token, pickled model, sends so far], dropped
        # with the model (models are dataclasses: not hashable, weakly referable)
        self._shipped: dict[int, list] = {}

    def _ship(self, model: SiteModel | None) -> tuple[int | None, bytes | None, bytes | None]:
        """The model's token, the model itself until each worker has
        probably been sent it (a worker without it asks: ``ModelMissing``),
        and the model for that retry."""
        if model is None:
            return None, None, None
        key = id(model)
        entry = self._shipped.get(key)
        if entry is None:
            entry = self._shipped[key] = [next(self._tokens), pickle.dumps(model, pickle.HIGHEST_PROTOCOL), 0]
            weakref.finalize(model, self._forget, key, entry[0])
        entry[2] += 1
        return entry[0], entry[1] if entry[2] <= 2 * self.processes else None, entry[1]

    def _forget(self, key: int, token: int) -> None:
        """The model object is gone (its id may be reused): forget it."""
        entry = self._shipped.get(key)
        if entry is not None and entry[0] == token:
            del self._shipped[key]

    def clean(self, html: str | bytes, url: str, encoding: str | None, model: SiteModel | None,
              params: FitParams, learn: bool, mode: str, explain: bool = False, markdown: bool = False,
              ) -> Future:
        token, blob, full = self._ship(model)
        args = (html, url, encoding, token, blob, params, learn, mode, explain, markdown)
        future: Future = Future()

        def done(f: Future) -> None:
            if isinstance(f.exception(), ModelMissing):  # once more, with the model
                try:
                    retry = self._submit(_clean_remote, *args[:4], full, *args[5:])
                except Exception as e:
                    future.set_exception(e)
                    return
                retry.add_done_callback(lambda g: _copy(g, future))
            else:
                _copy(f, future)

        self._submit(_clean_remote, *args).add_done_callback(done)
        return future

    def _new_pool(self) -> ProcessPoolExecutor:
        """A pool whose workers are started now, with the shutdown signals
        blocked in this thread meanwhile: a child inherits the blocked mask
        through exec, so a Ctrl-C while it starts cannot kill it (here, a
        blocked signal waits and arrives once unblocked)."""
        pool = ProcessPoolExecutor(self.processes, mp_context=self._ctx, initializer=_worker_start)
        masked = hasattr(signal, "pthread_sigmask")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SHUTDOWN_SIGNALS) if masked else None
        try:
            for _ in range(self.processes):  # each submit starts a worker while none is idle
                pool.submit(_ready)
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return pool

    def fit(self, pages: list[tuple[str, str | bytes, str | None]], params: FitParams, mode: str,
            explain: bool = False, markdown: bool = False) -> Future:
        return self._submit(_fit_remote, pages, params, mode, explain, markdown)

    def _submit(self, fn: Any, *args: Any) -> Future:
        try:
            return self._pool.submit(fn, *args)
        except BrokenExecutor:  # a worker died (a crash on some page): start new ones
            if self._closed:
                raise
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            self._shipped = {}  # the new workers know no model
            return self._pool.submit(fn, *args)

    def shutdown(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)


def _copy(src: Future, dst: Future) -> None:
    e = src.exception()
    if e is not None:
        dst.set_exception(e)
    else:
        dst.set_result(src.result())
