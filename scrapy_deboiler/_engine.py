"""What the pipeline's watchdog needs to know about the running crawl.

Scrapy has no public API for this: these checks read engine internals
(``engine._slot``, ``engine._start``, ``scraper.slot``), kept here in one
place and tested on every supported Scrapy version by real crawls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["CrawlState", "crawl_state", "flush_feeds", "items_in_pipelines", "scraper_busy"]

logger = logging.getLogger(__name__)
_warned = False


@dataclass(frozen=True)
class CrawlState:
    #: The engine is closing or stopped: nothing more will arrive.
    closing: bool
    #: Nothing downloading or scheduled, start requests exhausted, no
    #: response waiting for its callback, and every item in the pipelines is
    #: one the pipeline holds: only releasing them lets the crawl end.
    quiet: bool
    #: The scraper slot is over SCRAPER_SLOT_MAX_ACTIVE_SIZE and nothing is
    #: downloading: the engine schedules nothing until held items go.
    starved: bool


def crawl_state(crawler: Any, held: int) -> CrawlState:
    """The crawl's state, given how many items the pipeline holds. If the
    internals cannot be read (a Scrapy version that changed them), say
    "starved" so held items are released rather than risk a hang."""
    global _warned
    engine = crawler.engine
    try:
        if engine is None or not engine.running:
            return CrawlState(True, False, False)
        slot = engine._slot
        sslot = engine.scraper.slot
        if slot is None or sslot is None or slot.closing is not None or sslot.closing is not None:
            return CrawlState(True, False, False)
        downloading = bool(engine.downloader.active)
        quiet = (
            not downloading
            and engine._start is None
            and not _pending(slot.scheduler)
            and not sslot.queue
            and sslot.itemproc_size <= held
        )
        starved = not downloading and sslot.needs_backout()
        return CrawlState(False, quiet, starved)
    except AttributeError as e:
        if not _warned:
            _warned = True
            logger.warning(
                "scrapy-deboiler cannot read this Scrapy version's engine state (%s); "
                "held items are released at once", e
            )
        return CrawlState(False, False, True)


_warned_scheduler = False


def _pending(scheduler: Any) -> bool:
    """Whether the scheduler has requests. One that cannot say (scrapy-redis's
    when Redis is down) cannot give any either: none, with one warning."""
    global _warned_scheduler
    try:
        return bool(scheduler.has_pending_requests())
    except AttributeError:
        raise
    except Exception as e:
        if not _warned_scheduler:
            _warned_scheduler = True
            logger.warning("scrapy-deboiler: the scheduler cannot say whether it has requests (%s: %s); "
                           "taken as none while that lasts", type(e).__name__, str(e)[:200])
        return False


def items_in_pipelines(crawler: Any) -> int | None:
    """Items between the spider and the end of the item pipelines (the
    scraper slot's ``itemproc_size``), or None when that cannot be read."""
    try:
        sslot = crawler.engine.scraper.slot
        return None if sslot is None else int(sslot.itemproc_size)
    except (AttributeError, TypeError, ValueError):
        return None


def scraper_busy(crawler: Any) -> bool:
    """Whether responses or items are still inside the scraper (a callback
    to run, items on their way to or through the item pipelines). False
    when that cannot be read."""
    try:
        sslot = crawler.engine.scraper.slot
        return sslot is not None and (not sslot.is_idle() or sslot.itemproc_size > 0)
    except (AttributeError, TypeError):
        return False


def flush_feeds(crawler: Any) -> int:
    """Flush the files Scrapy's FEEDS write to (``FeedExporter.slots``);
    returns how many. A reactor stopped by a second Ctrl-C never closes
    them, and Python does not promise to flush buffers at exit: the items
    written last (those the pipeline held until then) would be lost."""
    try:
        from scrapy.extensions.feedexport import FeedExporter

        extensions = crawler.extensions.middlewares
    except (ImportError, AttributeError):
        return 0
    flushed = 0
    for ext in extensions:
        if not isinstance(ext, FeedExporter):
            continue
        for slot in getattr(ext, "slots", None) or ():
            # Text formats (CSV, XML) buffer in a wrapper around the file.
            for f in (getattr(getattr(slot, "exporter", None), "stream", None), getattr(slot, "file", None)):
                flush = getattr(f, "flush", None)
                if flush is None:
                    continue
                try:
                    flush()
                    flushed += 1
                except Exception:  # closed already, or a storage that cannot
                    pass
    return flushed
