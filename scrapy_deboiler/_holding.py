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
  since other workers may still be fetching it (``pool_quiet``). Those
  seconds are the ones it watched: a gap between two looks longer than
  ``look_gap`` (this process stalled: a long garbage collection, a starved
  machine) counts as ``look_gap``, so a stall of the whole process, which
  stalled the pages on their way to the pool too, is not taken for quiet.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Protocol

__all__ = ["CrawlStatus", "Hold", "HoldingPolicy", "Release"]


class Release(str, Enum):
    """Why a site's held items go (the module's docstring says when). The
    value is the stat's key, ``deboiler/released/{value}``: a reason is
    named here once, so a misspelt one fails instead of making a new stat."""

    THRESHOLD = "threshold"
    POOL_FULL = "pool_full"
    POOL_QUIET = "pool_quiet"
    #: Redis mode: the cluster published the site's model.
    POOL_MODEL = "pool_model"
    BUDGET = "budget"
    TIMEOUT = "timeout"
    CLOSING = "closing"
    STARVED = "starved"
    QUIET = "quiet"
    #: Items that arrived while the site's fit ran.
    AFTER_FIT = "after_fit"
    #: Redis mode: the cluster had the site's model when it was looked up.
    LOOKUP = "lookup"
    #: Redis mode: no model in the cluster, but a signature file had one.
    MODEL = "model"
    #: The reactor is stopping (Ctrl-C).
    SHUTDOWN = "shutdown"
    #: The watchdog's tick failed: everything held goes.
    WATCHDOG_ERROR = "watchdog_error"

    # Written as its value, in any Python (as 3.11's StrEnum is).
    __str__ = str.__str__

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)


class CrawlStatus(Protocol):
    """What the watchdog knows of the crawl (``_engine.CrawlState``, a
    frozen dataclass: read only)."""

    @property
    def closing(self) -> bool: ...
    @property
    def quiet(self) -> bool: ...
    @property
    def starved(self) -> bool: ...


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
    #: When the pool was last looked at.
    pool_seen: float = 0.0
    #: Seconds the pool was watched since it last grew (gaps capped).
    pool_watched: float = 0.0


class HoldingPolicy:
    """The rules, with the one bit of memory they need (quiet ticks)."""

    def __init__(self, min_pages: int, max_held_bytes: int, pool_wait: float = 5.0,
                 quiet_ticks: int = 2, max_hold: float = float("inf"),
                 look_gap: float = float("inf")) -> None:
        self.min_pages = min_pages
        self.look_gap = look_gap
        self.max_held_bytes = max_held_bytes
        self.max_hold = max_hold
        self.pool_wait = pool_wait
        self.quiet_ticks = quiet_ticks
        self._quiet = 0

    def at_arrival(self, site: Hold) -> Release | None:
        """A page was held: release its site now? Pooled sites go by their
        pool (``at_pool``), not by what this worker holds."""
        if site.busy or site.pooled:
            return None
        return Release.THRESHOLD if site.pages >= self.min_pages else None

    def at_pool(self, site: Hold, size: int, now: float) -> Release | None:
        """The site's pool was seen with ``size`` pages: note growth; fit it
        once full."""
        if size != site.pool_size or not site.pool_grew:
            site.pool_size = size
            site.pool_grew = now
            site.pool_watched = 0.0
        else:
            site.pool_watched += min(max(now - site.pool_seen, 0.0), self.look_gap)
        site.pool_seen = now
        if site.pooled and not site.busy and size >= self.min_pages:
            return Release.POOL_FULL
        return None

    def _watched(self, site: Hold, now: float) -> float:
        """Seconds the site's pool was watched without growing, up to now."""
        return site.pool_watched + min(max(now - site.pool_seen, 0.0), self.look_gap)

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

    def at_tick(self, sites: Iterable[Hold], crawl: CrawlStatus | None, busy: bool,
                now: float) -> list[tuple[Hold, Release]]:
        """The watchdog's tick: which sites go and why. ``busy``: some fit
        runs (it may release items itself). ``crawl`` may be None only
        when no site holds items (the watchdog then does not look)."""
        sites = [s for s in sites if s.pages]
        if not sites:
            self._quiet = 0
            return []
        assert crawl is not None, "held items need the crawl's state"
        if crawl.closing:
            self._quiet = 0
            return [(s, Release.CLOSING) for s in sites]
        if crawl.starved and not busy:
            self._quiet = 0
            return [(s, Release.STARVED) for s in sites]
        if not crawl.quiet or busy:
            self._quiet = 0
            return [(s, Release.TIMEOUT) for s in sites
                    if not s.pooled and not s.busy and now - s.since >= self.max_hold]
        self._quiet += 1
        if self._quiet < self.quiet_ticks:
            return []
        out = []
        for s in sites:
            if not s.pooled:
                out.append((s, Release.QUIET))
            elif not s.busy and self._watched(s, now) >= self.pool_wait:
                out.append((s, Release.POOL_QUIET))
        if len(out) == len(sites):
            self._quiet = 0
        return out
