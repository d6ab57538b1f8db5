"""The worker processes of a batch run with ``jobs`` > 1: each serves a
``_Work`` of its own; message i goes to worker i % jobs, and the answers
come back in the order of the messages.

A worker that dies (the OOM killer, an operator's kill, a crash) is
replaced: the messages it had not answered go to its replacement, after the
run's ``revive`` hook has amended them (the pages the dead worker kept for
the clean pass are read again from the input), so that the output is the
one the run would have written without the death. A worker that dies twice
on the same message stops the run with ``WorkerDied``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from ._batch_options import BatchOptions
from ._batch_pages import _Work
from ._sitedb import SiteDB
from ._wire import widen_pipe

__all__: list[str] = []

logger = logging.getLogger(__name__)

#: (batch number, kind, args): a message to a worker.
Message = tuple[int, str, Any]


class WorkerDied(RuntimeError):
    """A worker process died twice on the same records: the run stops."""


def _serve(options: BatchOptions, inbox: multiprocessing.Queue, outbox: Connection) -> None:
    """A worker process: answers messages in order. Answers go over a pipe
    whose writing end only the worker holds: a worker killed halfway through
    an answer leaves its reader an end of file, where a ``Queue`` (whose
    pipe the parent holds both ends of) left it waiting for the rest. Each
    answer is written before the next message is read (a ``Queue``'s
    feeder thread sent them later: a worker that died could take answers
    it had made with it, and the message it died on was not the first one
    unanswered); the pipe holds ``_wire.PIPE_BYTES``, so the worker seldom waits
    for the parent to read."""
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
                outbox.send(work.sign(*args))
            elif kind == "clean":
                outbox.send(work.clean(*args))
            elif kind == "open":
                work.db = SiteDB.reader(*args)
                outbox.send(None)
        except BaseException as e:  # reported, so the main process does not wait forever
            outbox.send(RuntimeError(f"worker failed: {type(e).__name__}: {e}"))
            raise


class _Workers:
    """``jobs`` worker processes; message i goes to worker i % jobs, and
    answers come back in the order of the messages, of ``batch`` records
    each (message b holds records b * batch on). ``revive(w, pending)``:
    worker ``w`` died with the ``pending`` messages unanswered; returns
    them as its replacement is to be sent them."""

    def __init__(self, options: BatchOptions, batch: int,
                 revive: Callable[[int, list[Message]], list[Message]] | None = None) -> None:
        self.ctx = multiprocessing.get_context("spawn") if os.name == "nt" else multiprocessing.get_context("fork")
        self.options = options
        self.n = options.jobs
        self.batch = batch  # records a message
        self.revive = revive
        self.inboxes: list[Any] = [None] * self.n
        self.outboxes: list[Any] = [None] * self.n
        self.procs: list[Any] = [None] * self.n
        #: Messages sent to each worker and not answered yet.
        self.sent: list[deque[Message]] = [deque() for _ in range(self.n)]
        #: The database the workers read models from (``broadcast("open")``).
        self.opened: Any = None
        #: (batch number, kind) of the message a worker last died on.
        self.died_on: tuple[int, str] | None = None
        for w in range(self.n):
            self._start(w)

    def _start(self, w: int) -> None:
        self.inboxes[w] = self.ctx.Queue()
        self.outboxes[w], writer = self.ctx.Pipe(duplex=False)
        widen_pipe(writer.fileno())
        self.procs[w] = self.ctx.Process(target=_serve, args=(self.options, self.inboxes[w], writer), daemon=True)
        self.procs[w].start()
        writer.close()  # the worker's alone (see _serve)

    def _send(self, w: int, msg: Message) -> None:
        self.inboxes[w].put(msg[1:])
        self.sent[w].append(msg)

    def _get(self, w: int) -> Any:
        while True:
            try:
                if not self.outboxes[w].poll(1):
                    if not self.procs[w].is_alive():
                        raise EOFError
                    continue
                answer = self.outboxes[w].recv()
            except (EOFError, OSError):  # it died, maybe halfway through an answer
                self.procs[w].join()
                self._replace(w)
                continue
            self.sent[w].popleft()
            if isinstance(answer, Exception):
                raise answer
            return answer

    def _replace(self, w: int) -> None:
        """Worker ``w`` died: a new one takes its place and is sent what the
        dead one had not answered (amended by ``revive``)."""
        code = self.procs[w].exitcode
        pending = list(self.sent[w])
        self.sent[w].clear()
        head = (pending[0][0], pending[0][1]) if pending else None
        if head is not None and head == self.died_on:
            first = head[0] * self.batch + 1
            raise WorkerDied(f"a worker process died twice (exit code {code}) on records {first} to "
                             f"{first + self.batch - 1} ({'reading' if head[1] == 'sign' else 'cleaning'} them)")
        self.died_on = head
        logger.warning("a worker process died (exit code %s); a new one takes its place and is given its %d "
                       "unanswered batches again", code, len(pending))
        self.inboxes[w].cancel_join_thread()  # nothing reads the dead one's pipe: exiting must not wait on it
        self.inboxes[w].close()
        self.outboxes[w].close()
        self._start(w)
        if self.revive is not None:
            pending = self.revive(w, pending)
        if self.opened is not None and not any(m[1] == "open" for m in pending):
            self._send(w, (-1, "open", self.opened))
            self._get(w)
        for msg in pending:
            self._send(w, msg)

    def ordered(self, messages: Iterator[Message], ahead: int = 4) -> Iterator[Any]:
        """Send (batch number, kind, args) messages, keeping up to ``ahead``
        per worker in flight; yield the answers in message order."""
        pending: list[int] = []
        for msg in messages:
            w = msg[0] % self.n
            self._send(w, msg)
            pending.append(w)
            if len(pending) >= ahead * self.n:
                yield self._get(pending.pop(0))
        for w in pending:
            yield self._get(w)

    def broadcast(self, kind: str, args: Any) -> None:
        if kind == "open":
            self.opened = args
        for w in range(self.n):
            self._send(w, (-1, kind, args))
        for w in range(self.n):
            self._get(w)

    def close(self) -> None:
        for box in self.inboxes:
            box.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
