"""The worker processes of a batch run with ``jobs`` > 1: each serves a
``_Work`` of its own; message i goes to worker i % jobs, and the answers
come back in the order of the messages."""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Iterator
from typing import Any

from ._batch_options import BatchOptions
from ._batch_pages import _Work
from ._sitedb import SiteDB

__all__: list[str] = []


def _serve(options: BatchOptions, inbox: multiprocessing.Queue, outbox: multiprocessing.Queue) -> None:
    """A worker process: answers messages in order."""
    work = _Work(options)
    while True:
        msg = inbox.get()
        if msg is None:
            if options.retain_kept:  # the kept pages are not freed one by one
                os._exit(0)
            return
        kind, args = msg
        try:
            if kind == "sign":
                outbox.put(work.sign(*args))
            elif kind == "clean":
                outbox.put(work.clean(*args))
            elif kind == "open":
                work.db = SiteDB.reader(*args)
                outbox.put(None)
        except BaseException as e:  # reported, so the main process does not wait forever
            outbox.put(RuntimeError(f"worker failed: {type(e).__name__}: {e}"))
            raise


class _Workers:
    """``jobs`` worker processes; message i goes to worker i % jobs, and
    answers come back in the order of the messages."""

    def __init__(self, options: BatchOptions) -> None:
        ctx = multiprocessing.get_context("spawn") if os.name == "nt" else multiprocessing.get_context("fork")
        self.n = options.jobs
        self.inboxes = [ctx.Queue() for _ in range(self.n)]
        self.outboxes = [ctx.Queue() for _ in range(self.n)]
        self.procs = [ctx.Process(target=_serve, args=(options, i, o), daemon=True)
                      for i, o in zip(self.inboxes, self.outboxes)]
        for p in self.procs:
            p.start()

    def _get(self, w: int) -> Any:
        while True:
            try:
                answer = self.outboxes[w].get(timeout=1)
            except queue.Empty:
                if not self.procs[w].is_alive():
                    raise RuntimeError(f"worker {w} died (exit code {self.procs[w].exitcode})") from None
                continue
            if isinstance(answer, Exception):
                raise answer
            return answer

    def ordered(self, messages: Iterator[tuple[int, str, tuple]], ahead: int = 4) -> Iterator[Any]:
        """Send (batch number, kind, args) messages, keeping up to ``ahead``
        per worker in flight; yield the answers in message order."""
        pending: list[int] = []
        for b, kind, args in messages:
            w = b % self.n
            self.inboxes[w].put((kind, args))
            pending.append(w)
            if len(pending) >= ahead * self.n:
                yield self._get(pending.pop(0))
        for w in pending:
            yield self._get(w)

    def broadcast(self, kind: str, args: Any) -> None:
        for box in self.inboxes:
            box.put((kind, args))
        for w in range(self.n):
            self._get(w)

    def close(self) -> None:
        for box in self.inboxes:
            box.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
