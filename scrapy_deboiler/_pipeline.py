"""The Scrapy item pipeline: hold each site's items until its model can be
fitted, then clean them (and every later item of the site) in flight.

This module is the wiring: the steps an item goes through are the parts
``DeboilerPipeline`` is made of, each in its own module (docs/architecture.md):
``_intake`` (read, check, key), ``_cleaning`` (one clean a page),
``_releasing`` and ``_fitting`` (held sites let go, fitted on),
``_learning`` (provisional models), ``_output`` (fields and status),
``_sites`` (the site cache, models on disk), ``_cluster`` (Redis mode) and
``_watchdog`` (nothing held forever; the close); their shared state is
``_pipeline_state.PipelineBase``, and where work runs, ``_workplace``."""

from __future__ import annotations

import logging

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.python.threadpool import ThreadPool

from ._cleaning import Cleaning
from ._cluster import Cluster
from ._fitting import Fitting
from ._intake import Intake
from ._learning import Learning
from ._output import Output
from ._releasing import Releasing
from ._sites import Sites
from ._watchdog import Watchdog

__all__ = ["DeboilerPipeline"]

logger = logging.getLogger(__name__)


class DeboilerPipeline(Intake, Cleaning, Releasing, Fitting, Learning, Output, Sites, Cluster, Watchdog):
    """Adds ``clean_text`` and ``clean_html`` to items, learning each site's
    boilerplate from its first ``DEBOILER_MIN_PAGES`` distinct pages.

    Items of a site without a model are held (their pipeline chain waits)
    until the site has enough distinct pages (URL and content: the items of
    one response count once), then its model is fitted and saved, and the
    held items go on cleaned. A site released earlier (the crawl went quiet,
    stopped, ran out of memory budget) gets a *provisional* model that keeps
    learning from its later pages, in this crawl and the next, until it has
    seen ``DEBOILER_MIN_PAGES``. A watchdog releases held items when the
    crawl would otherwise stall or end with them inside (see
    docs/scrapy-engine.md): every item leaves.

    Pages are parsed and cleaned in worker processes (DEBOILER_PROCESSES,
    the default on two cores or more), small ones on the reactor thread,
    or in a small thread pool (DEBOILER_THREADS), once per distinct page,
    so the reactor thread keeps running Scrapy.

    With DEBOILER_REDIS_URL, crawling processes share one model a site: held
    pages' signatures are pooled in Redis and the pool is fitted once full
    (docs/scaling-out.md). Which site waits and when it goes is
    ``_holding.HoldingPolicy``'s, in both modes.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "DeboilerPipeline":
        return cls(crawler)

    async def open_spider(self, spider: Spider | None = None) -> None:
        """Start the threads and the watchdog. An error here fails the
        crawl: a crawl without its watchdog could hold items forever."""
        from twisted.internet import reactor

        self.store_io.start()
        # Optional, not part of SignatureStoreProtocol: a store without it is not swept.
        sweep = getattr(self.store, "sweep", None)
        if sweep is not None:
            try:
                await maybe_deferred_to_future(self.store_io.run(sweep))
            except Exception:
                logger.exception("deboiler: cannot sweep %s", self.directory)
        self.work.start()
        if self.redis is not None:
            self._redis_threads = ThreadPool(minthreads=0, maxthreads=2, name="deboiler-redis")
            self._redis_threads.start()
            await maybe_deferred_to_future(self._redis_connect())
        self._loop = create_looping_call(self._tick)
        self._loop.start(self.interval, now=False)
        # (type: ignore: Twisted's reactor interfaces declare no self, so mypy
        # reads their arguments one off.)
        self._shutdown_trigger = reactor.addSystemEventTrigger("before", "shutdown",  # type: ignore[arg-type]
                                                               self._before_shutdown)
        # A reactor stopped without closing the spider (a second Ctrl-C) must
        # not leave the threads behind: Python would wait for them at exit.
        self._pool_trigger = reactor.addSystemEventTrigger("during", "shutdown",  # type: ignore[arg-type]
                                                           self._stop_pool)

    def _stop_pool(self) -> None:
        self.work.stop()
        self.store_io.stop()
        if self._redis_threads is not None:
            self._redis_threads.stop()
            self._redis_threads = None
            if self.redis is not None:
                self.redis.close()
