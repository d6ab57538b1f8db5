"""Which held sites go, when, and why: the pipeline's holding policy.

Free of Scrapy and of Redis, so it can be tested with plain numbers. The
pipeline tells it what each site with held items looks like (``Hold``) and
what the crawl is doing (``CrawlState``), and gets back the sites to release
with a reason (a stat: ``deboiler/released/{reason}``):

* ``threshold``: a site holds ``min_pages`` distinct pages (local mode);
* ``pool_full``: the site's cluster pool holds ``min_pages`` pages: fit it;
* ``budget``: held HTML is over the budget, oldest sites first;
* ``timeout``: a site's oldest held item has waited ``max_hold`` seconds
  (a small site in a long crawl, whose pages never reach the threshold);
* ``closing``, ``starved``: the crawl is closing, or would stall;
* ``quiet``: nothing else can arrive here (two quiet ticks in a row); a
  pooled site waits until its pool has not grown for ``pool_wait`` seconds,
  since other workers may still be fetching it (``pool_quiet``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol

__all__ = ["CrawlStatus", "Hold", "HoldingPolicy"]


class CrawlStatus(Protocol):
    """What the watchdog knows of the crawl (``_engine.CrawlState``)."""

    closing: bool
    quiet: bool
    starved: bool


@dataclass
class Hold:
    """A site with held items, as the policy sees it."""

    name: str
    #: Distinct pages held here.
    pages: int = 0
    #: Bytes of HTML waiting for the threshold (what the budget bounds).
    bytes: int = 0
    #: Arrival number of its oldest held item (budget releases oldest first).
    first: int = 0
    #: When its oldest held item arrived, in the caller's clock.
    since: float = 0.0
    #: A fit runs for it: its items wait for that.
    busy: bool = False
    #: Its pages go to a cluster pool (Redis mode, Redis reachable).
    pooled: bool = False
    #: The pool's size when last seen.
    pool_size: int = 0
    #: When the pool was last seen to grow (or first seen), in the caller's clock.
    pool_grew: float = 0.0


class HoldingPolicy:
    """The rules, with the one bit of memory they need (quiet ticks)."""

    def __init__(self, min_pages: int, max_held_bytes: int, pool_wait: float = 5.0,
                 quiet_ticks: int = 2, max_hold: float = float("inf")) -> None:
        self.min_pages = min_pages
        self.max_held_bytes = max_held_bytes
        self.max_hold = max_hold
        self.pool_wait = pool_wait
        self.quiet_ticks = quiet_ticks
        self._quiet = 0

    def at_arrival(self, site: Hold) -> str | None:
        """A page was held: release its site now? Pooled sites go by their
        pool (``at_pool``), not by what this worker holds."""
        if site.busy or site.pooled:
            return None
        return "threshold" if site.pages >= self.min_pages else None

    def at_pool(self, site: Hold, size: int, now: float) -> str | None:
        """The site's pool was seen with ``size`` pages: note growth; fit it
        once full."""
        if size != site.pool_size or not site.pool_grew:
            site.pool_size = size
            site.pool_grew = now
        if site.pooled and not site.busy and size >= self.min_pages:
            return "pool_full"
        return None

    def over_budget(self, sites: Iterable[Hold], held_bytes: int) -> list[Hold]:
        """The sites to release, oldest first, until what stays held fits
        the budget."""
        excess = held_bytes - self.max_held_bytes
        out = []
        for site in sorted((s for s in sites if s.pages and not s.busy), key=lambda s: s.first):
            if excess <= 0:
                break
            excess -= site.bytes
            out.append(site)
        return out

    def at_tick(self, sites: Iterable[Hold], crawl: CrawlStatus, busy: bool,
                now: float) -> list[tuple[Hold, str]]:
        """The watchdog's tick: which sites go and why. ``busy``: some fit
        runs (it may release items itself)."""
        sites = [s for s in sites if s.pages]
        if not sites:
            self._quiet = 0
            return []
        if crawl.closing:
            self._quiet = 0
            return [(s, "closing") for s in sites]
        if crawl.starved and not busy:
            self._quiet = 0
            return [(s, "starved") for s in sites]
        if not crawl.quiet or busy:
            self._quiet = 0
            return [(s, "timeout") for s in sites
                    if not s.pooled and not s.busy and now - s.since >= self.max_hold]
        self._quiet += 1
        if self._quiet < self.quiet_ticks:
            return []
        out = []
        for s in sites:
            if not s.pooled:
                out.append((s, "quiet"))
            elif not s.busy and now - s.pool_grew >= self.pool_wait:
                out.append((s, "pool_quiet"))
        if len(out) == len(sites):
            self._quiet = 0
        return out
