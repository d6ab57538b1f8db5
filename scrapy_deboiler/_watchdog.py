"""Every item leaves: the watchdog releases held items when the crawl would
stall or end with them inside, and the close says what happened."""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Spider
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from ._engine import crawl_state, flush_feeds, scraper_busy
from ._holding import Release
from ._model import SiteModel
from ._pipeline_state import PipelineBase
from ._report import write_report

__all__ = ["Watchdog"]

logger = logging.getLogger(__name__)

#: How long a stopping reactor waits for released items to leave the pipelines.
_SHUTDOWN_WAIT = 10.0
#: ... then for the pages of a hung worker's replacement, then for the items
#: of the pages the workers never answered.
_SHUTDOWN_AFTER_WORKERS = 3.0
#: A closing crawl waits at most this long (or DEBOILER_WORKER_TIMEOUT if
#: shorter) for a worker process that answers nothing.
_CLOSING_WORKER_TIMEOUT = 10.0


class Watchdog(PipelineBase):
    """Releases held items when the crawl would stall or close with them
    inside, and sums the crawl up when it closes."""

    def _pipeline_error(self, failure: Any) -> None:
        logger.error("deboiler: error in a callback (Redis, the store): %s", failure.getTraceback())
        self._inc("errors")

    def _tick(self) -> None:
        try:
            if self.work.cleaner is not None:
                self._check_workers()
            if self.redis is not None:
                self._redis_tick()
            self._store_waited(time.monotonic())
            holds = [s.hold for s in self.sites.values() if s.held] if self.held else []
            state = crawl_state(self.crawler, self.held) if holds else None
            for hold, reason in self.policy.at_tick(holds, state, bool(self.busy), time.monotonic()):
                self._release_site(self.sites[hold.name], reason)
        except Exception:  # the watchdog must keep running, and never strand items
            logger.exception("deboiler: watchdog error; releasing held items")
            self._inc("errors")
            self._release_all(Release.WATCHDOG_ERROR)

    def _check_workers(self) -> None:
        """A worker process that answers nothing for DEBOILER_WORKER_TIMEOUT
        seconds (a closing crawl: at most 10) while it has pages is killed:
        the page it was on passes with status error, the others go to its
        replacement. A stopped or hung worker stalled the crawl for good."""
        cleaner = self.work.cleaner
        assert cleaner is not None
        if cleaner.pending:
            timeout = self.worker_timeout
            if timeout > _CLOSING_WORKER_TIMEOUT and crawl_state(self.crawler, self.held).closing:
                timeout = _CLOSING_WORKER_TIMEOUT
            cleaner.kill_stalled(timeout)
        if cleaner.deaths:
            self.stats.set_value("deboiler/worker_restarts", cleaner.deaths)

    def _release_all(self, reason: Release) -> None:
        for site in list(self.sites.values()):
            self._release(site, reason)

    def _before_shutdown(self) -> Deferred | None:
        """The reactor is stopping (a second Ctrl-C, ``reactor.stop()``):
        release every held item now and keep the reactor running until the
        responses and items inside the scraper have left the item pipelines
        (so feeds get them), for at most ``_SHUTDOWN_WAIT`` seconds, then
        flush the feeds' files (nothing closes them on this path). Downloads
        still running are not waited for."""
        from twisted.internet import reactor

        if self.held:
            self._release_all(Release.SHUTDOWN)
        if not self._inflight and not self.busy and not scraper_busy(self.crawler):
            flush_feeds(self.crawler)
            return None
        done: Deferred = Deferred()
        # Phases: waiting; a hung worker killed (its other pages go to a new
        # one); the pages still with the workers failed (they would never
        # come back: their items go on unchanged and reach the feeds).
        phase = [0, time.monotonic() + _SHUTDOWN_WAIT]

        def check() -> None:
            if self.held:  # came in meanwhile (a response whose callback ran)
                self._release_all(Release.SHUTDOWN)
            idle = not self._inflight and not self.busy and not scraper_busy(self.crawler)
            now = time.monotonic()
            cleaner = self.work.cleaner
            if not idle and now > phase[1] and phase[0] < 2:
                phase[:] = [phase[0] + 1, now + _SHUTDOWN_AFTER_WORKERS]
                if cleaner is not None and cleaner.pending:
                    if phase[0] == 1:
                        cleaner.kill_stalled(_SHUTDOWN_AFTER_WORKERS)
                    else:
                        logger.warning("deboiler: the worker processes did not finish their %d pages as the "
                                       "reactor stopped; their items pass unchanged (status error)",
                                       cleaner.pending)
                        cleaner.shutdown()
            if idle or now > phase[1]:
                flush_feeds(self.crawler)
                done.callback(None)
            else:
                # Twisted's reactor interfaces declare no self (mypy reads them one argument off)
                reactor.callLater(0.02, check)  # type: ignore[arg-type]

        check()
        return done

    async def _spider_closed(self, spider: Spider) -> None:
        from twisted.internet import reactor

        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for trigger in (self._shutdown_trigger, self._pool_trigger):
            if trigger is not None:
                try:
                    # Twisted's reactor interfaces declare no self (mypy reads them one argument off)
                    reactor.removeSystemEventTrigger(trigger)  # type: ignore[call-arg, misc]
                except (ValueError, KeyError):
                    pass
        self._shutdown_trigger = self._pool_trigger = None
        if self.redis is not None:
            await self._settle_redis()
        # Anything still held (a close that skipped our watchdog) goes now.
        for site in self.sites.values():
            for p in site.held.values():
                for h in p.items:
                    self._pass_unchanged(site, h, "spider closed")
            site.held = {}
            site.held_items = site.hold.pages = 0
            self._flush_learning(site)
        # The saves just asked for, and the report (which reads forgotten
        # sites' models from the store), on the store's thread; then the summary.
        d = self.store_io.drain()
        if self.report_path:
            report_path = self.report_path
            d.addCallback(lambda _: self.store_io.run(self._write_report, report_path))
            d.addErrback(self._report_failed)
        d.addCallback(lambda _: self._sum_up())
        await maybe_deferred_to_future(d)

    def _report_failed(self, failure: Any) -> None:
        logger.error("deboiler: cannot write the report %s", self.report_path,
                     exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        self._inc("errors")

    def _sum_up(self) -> None:
        """The close's summary: a line for each of the largest sites, one for the crawl."""
        self._stop_pool()
        # One line per site for the largest 20 sites in memory, then the whole crawl.
        largest = sorted((s for s in self.sites.values() if s.pages), key=lambda s: (-s.pages, s.name))
        for site in largest[:20]:
            model = site.model
            what = "no model" if model is None else f"model {site.source}" + (
                f", provisional ({len(model.page_keys)} pages)" if model.provisional else "")
            # Boilerplate mode without a model removes nothing; its clean_html
            # differs from the page only as serialized (the doctype, say).
            removed = "nothing removed" if model is None and self.mode != "content" else (
                f"{100 * (1 - site.bytes_out / max(1, site.bytes_in)):.0f}% of its items' HTML removed")
            logger.info("deboiler: %s: %d items, %s, %s", site.name or "?", site.pages, what, removed)
        get = self.stats.get_value
        failed_saves = get("deboiler/saves_failed", 0)
        logger.log(logging.WARNING if failed_saves else logging.INFO,
                   "deboiler: %d sites, %d items: %d cleaned, %d emptied, %d single pages, %d unchanged, "
                   "%d skipped, %d errors%s%s%s", get("deboiler/sites", 0), get("deboiler/items_seen", 0),
                   get("deboiler/items_cleaned", 0), get("deboiler/items_emptied", 0),
                   get("deboiler/items_single_page", 0),
                   get("deboiler/items_unchanged", 0), get("deboiler/items_skipped", 0),
                   get("deboiler/items_error", 0),
                   f", {get('deboiler/items_unwritable')} that cannot hold the clean fields (passed on "
                   "unchanged)" if get("deboiler/items_unwritable") else "",
                   f"; {failed_saves} failed saves of signature files ({len({s for s, _ in self._save_failures})} "
                   f"sites: their models were not kept for the next crawl)" if failed_saves else "",
                   f"; {get('deboiler/saves_refused_emptied')} models not saved: they emptied their fit pages"
                   if get("deboiler/saves_refused_emptied") else "")

    def _write_report(self, path: str) -> None:
        """DEBOILER_REPORT (``path``): the report, and beside it marked-up
        views of the pages kept as samples."""
        def model_of(name: str) -> SiteModel | None:
            site = self.sites.get(name)
            if site is not None:
                self._describe(site)
                return site.model
            try:  # forgotten (DEBOILER_MAX_SITES): its model is in the store
                return self.store.load(name)
            except Exception:
                return None

        stats = {k: v for k, v in self.stats.get_stats().items() if k.startswith("deboiler/")}
        write_report(path, list(self.reports.values()), model_of, mode=self.mode,
                     limits=self.limits, scheme=self.params.scheme, stats=stats)
        logger.info("deboiler: report written to %s", path)
