"""Signature-store reads and writes off the reactor thread.

A store's ``load`` reads and parses a file, its ``save`` writes, ``fsync``s
and renames one under a folder lock: on a slow or network disk that is tens
of milliseconds to seconds, during which the reactor thread would fetch and
parse nothing. Here they run on one thread of their own, in the order they
were asked for, so a site's read after its save sees the save.

The thread is a daemon and nothing joins it for longer than ``wait``
seconds: a store stuck on a hung disk must not keep the crawl from closing
(Twisted's thread pools join their threads for good).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.python.failure import Failure

__all__ = ["STORE_WAIT", "StoreIO"]

logger = logging.getLogger(__name__)

#: Seconds a site's items wait for its signature file to be read, and a
#: closing crawl for the store's last writes.
STORE_WAIT = 30.0

_Call = tuple[Callable[..., Any], tuple[Any, ...], Deferred]


class StoreIO:
    """One thread for a crawl's store calls. Before ``start`` and after
    ``stop`` a call runs at once on the caller's thread (a crawl that never
    opened, the last saves of one stopped by a second Ctrl-C)."""

    def __init__(self, wait: float | None = None) -> None:
        self.wait = STORE_WAIT if wait is None else wait
        self._calls: queue.SimpleQueue[_Call | None] | None = None
        self._thread: threading.Thread | None = None
        #: Calls not answered yet (``drain`` waits for them).
        self.pending: set[Deferred] = set()

    def start(self) -> None:
        calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._calls = calls
        self._thread = threading.Thread(target=self._serve, args=(calls,), name="deboiler-store", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread once the calls asked for are done, waiting at most
        ``wait`` seconds for it (a stuck call is left to the daemon thread)."""
        if self._calls is None or self._thread is None:
            return
        self._calls.put(None)
        self._thread.join(self.wait)
        self._calls = self._thread = None

    def run(self, f: Callable[..., Any], *args: Any) -> Deferred:
        """``f(*args)`` on the store's thread; a Deferred of its result,
        fired on the reactor thread."""
        if self._calls is None:
            return maybeDeferred(f, *args)
        d: Deferred = Deferred()
        self.pending.add(d)

        def done(result: Any) -> Any:
            self.pending.discard(d)
            return result

        d.addBoth(done)
        self._calls.put((f, args, d))
        return d

    @staticmethod
    def _serve(calls: queue.SimpleQueue[_Call | None]) -> None:
        reactor = _reactor()

        while (call := calls.get()) is not None:
            f, args, d = call
            try:
                result: Any = f(*args)
            except BaseException:
                result = Failure()
            reactor.callFromThread(_fire, d, result)

    def drain(self) -> Deferred:
        """A Deferred that fires once every call asked for so far is
        answered (their callbacks have run), whatever the answers, or after
        ``wait`` seconds with a warning."""
        reactor = _reactor()

        waits = list(self.pending)
        out: Deferred = Deferred()
        if not waits:
            out.callback(None)
            return out
        left = [len(waits)]

        def one(result: Any) -> Any:
            left[0] -= 1
            if not left[0] and not out.called:
                timer.cancel()
                out.callback(None)
            return result

        def late() -> None:
            if not out.called:
                logger.warning("deboiler: %d reads or writes of signature files did not end in %gs; the crawl "
                               "closes without them", left[0], self.wait)
                out.callback(None)

        timer = reactor.callLater(self.wait, late)
        for d in waits:
            d.addBoth(one)
        return out


def _reactor() -> Any:
    """The global reactor (typed Any: Twisted's module-level reactor is
    installed at run time, and its interfaces do not type-check as methods)."""
    from twisted.internet import reactor

    return reactor


def _fire(d: Deferred, result: Any) -> None:
    if isinstance(result, Failure):
        d.errback(result)
    else:
        d.callback(result)
