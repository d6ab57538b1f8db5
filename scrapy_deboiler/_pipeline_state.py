"""The state a crawl's pipeline keeps, which its parts (``_intake``,
``_cleaning``, ``_releasing``, ``_fitting``, ``_learning``, ``_output``,
``_sites``, ``_cluster``, ``_watchdog``) share: the settings as read once,
the sites with their held pages, and the counters. Each part is a class of
methods over this state; ``DeboilerPipeline`` is all of them."""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.project import data_path
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from ._clean import CleanResult, Page
from ._content import default_model
from ._handoff import handoff
from ._holding import Hold, HoldingPolicy, Release
from ._limits import Limits
from ._model import FitParams, SiteModel
from ._redis import RedisCoordinator
from ._report import SiteReport
from ._settings import enabled, read_settings
from ._store import SignatureStoreProtocol
from ._store_io import StoreIO
from ._wire import CleanOptions
from ._workplace import Workplace

if TYPE_CHECKING:
    from itemadapter import ItemAdapter
    from scrapy import Spider

__all__ = ["PipelineBase"]

logger = logging.getLogger(__name__)

#: Lines about single sites or pages logged at INFO before DEBUG takes over.
_SITE_LINES = 50


@dataclass
class _HeldPage:
    """A distinct page (URL and content) waiting for its site's model, with
    the items that came from it."""

    key: str
    url: str
    html: str | bytes
    encoding: str | None
    notes: list[str]  # from the spider middleware's decoding
    items: list[_Held] = field(default_factory=list)
    #: Redis mode: the page as parsed and signed for the pool, kept to be
    #: cleaned without a second parse (threads only; a page is cleaned once).
    parsed: Page | None = None
    #: Worker processes: the page's signatures, from a worker that keeps it
    #: parsed for its clean (``_sign_held``), and the Deferred while it signs.
    sigs: frozenset[str] | None = None
    signing: Deferred | None = None
    #: With DEBOILER_METADATA, its metadata summary, signed with it.
    meta: dict | None = None
    #: Its signing failed in a worker (the worker died on it, or raised): it
    #: fails alone, and its site is fitted on the other pages.
    failed: Failure | None = None


@dataclass
class _Held:
    item: Any
    waiter: Deferred
    page: _HeldPage


@dataclass
class _Site:
    name: str
    model: SiteModel | None = None
    source: str | None = None  # "fitted", "file" or "redis"
    held: dict[str, _HeldPage] = field(default_factory=dict)  # by page key
    held_items: int = 0
    inflight: int = 0  # pages being cleaned
    #: What the holding policy sees, and the one place it is kept: distinct
    #: pages and bytes of HTML waiting for the threshold, the arrival number
    #: of the oldest held item, a fit running (``busy``: items wait for it),
    #: the cluster pool.
    hold: Hold = field(default_factory=lambda: Hold(""))
    reason: str = ""  # why the site has no model
    #: Redis mode: the published model is being looked up (items wait).
    lookup: bool = False
    #: Its signature file is being read (``_sites.Sites._load``): the
    #: Deferreds of the items that wait for it; None once read. ``waiting``:
    #: items between arriving and going on after the read (never evicted).
    loading: list[Deferred] | None = None
    load_since: float = 0.0
    waiting: int = 0
    learned: list[tuple[str, frozenset[str]]] = field(default_factory=list)  # DEBOILER_LEARN
    learned_keys: set[str] = field(default_factory=set)
    pending: list[tuple[str, frozenset[str]]] = field(default_factory=list)  # a provisional model's new pages
    pending_keys: set[str] = field(default_factory=set)
    #: The last page released without a model (key, URL, signatures packed
    #: as the Redis pools pack them, 8 bytes each):
    #: with the site's next such page it gives the site a provisional model,
    #: so a site released one page at a time (a broad crawl over the
    #: held-bytes budget) is not extracted page by page forever.
    alone: tuple[str, str, bytes] | None = None
    report: SiteReport | None = None
    pages: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    #: Why the site's model is not saved (it emptied many of its fit pages).
    unsaved: str = ""
    #: Characters the model matched on its first pages cleaned (the
    #: baseline), and of the later ones, how many were checked and how
    #: many had far fewer matched (``Output._coverage``).
    removed_first: list[int] = field(default_factory=list)
    checked: int = 0
    unmatched: int = 0
    told_unmatched: bool = False

    def __post_init__(self) -> None:
        self.hold.name = self.name


def _data_path(path: str) -> str:
    """Scrapy's ``data_path``. With a settings module named
    (SCRAPY_SETTINGS_MODULE) but no scrapy.cfg found, Scrapy raises
    NotConfigured, which would switch the pipeline off while the middleware
    still gives items their HTML: the folder goes where Scrapy puts it
    outside a project, with a warning."""
    try:
        return data_path(path, createdir=False)
    except NotConfigured:
        where = os.path.abspath(os.path.join(".scrapy", path))
        logger.warning("deboiler: no scrapy.cfg to find the project's data folder by (Scrapy's data_path): "
                       "signature files go to %s (DEBOILER_SIGNATURES_DIR chooses)", where)
        return where


class PipelineBase:
    """The pipeline's state and its counters (``_inc``) and site lines
    (``_site_log``); see the module's docstring."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        if not enabled(s):
            raise NotConfigured("DEBOILER_ENABLED is off")
        cfg = read_settings(s, where=_data_path)
        self.crawler = crawler
        self.stats = crawler.stats
        self.min_pages = cfg.min_pages
        self.url_field = cfg.url_field
        self.site_field = cfg.site_field
        self.html_field = cfg.html_field
        self.encoding_field = cfg.encoding_field
        self.text_field = cfg.text_field
        self.clean_html_field = cfg.clean_html_field
        self.status_field = cfg.status_field
        self.comments_field = cfg.comments_field
        self.title_field = cfg.title_field
        self.body_only = cfg.body_only
        self.keep_html = cfg.keep_html
        self.mode = cfg.mode
        if self.mode == "content":
            # A missing or broken content model (ContentModelError) stops the
            # crawl as it opens, before the spider runs, instead of marking
            # every item ``error``.
            default_model()
        self.learn = cfg.learn
        self.interval = cfg.watchdog_interval
        #: Where page work runs: inline, worker processes or threads.
        self.work = Workplace(cfg.threads, cfg.processes, cfg.inline_max_bytes)
        self.worker_timeout = cfg.worker_timeout
        self.markdown = cfg.markdown
        self.markdown_field = cfg.markdown_field
        self.metadata = cfg.metadata
        self.metadata_field = cfg.metadata_field
        self.params = FitParams()
        self.limits = Limits(max_bytes=cfg.max_page_bytes, max_elements=cfg.max_page_elements)
        # Held items keep their responses in Scrapy's scraper slot; a full slot
        # stops all downloads until the watchdog notices. Releasing the oldest
        # sites before half the slot is held avoids those stalls.
        self.max_held_bytes = min(cfg.max_held_bytes, s.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE", 5_000_000) // 2)
        self.report_path = cfg.report
        self.explain = bool(self.report_path)
        self.report_views = cfg.report_views
        self.report_view_sites = cfg.report_view_sites
        #: What every clean is asked for (the worker protocol's own type).
        self.options = CleanOptions(self.mode, self.explain, self.markdown, self.body_only, self.metadata)
        self._viewed_sites = 0
        self.directory = cfg.signatures_dir
        # DEBOILER_STORE: the class, called with the folder.
        self.store: SignatureStoreProtocol = cfg.store(self.directory)
        #: The store's reads and writes, on a thread of their own.
        self.store_io = StoreIO()
        # Least recently used first: idle sites beyond DEBOILER_MAX_SITES are
        # forgotten (their models are in the store) so broad crawls stay flat.
        self.sites: OrderedDict[str, _Site] = OrderedDict()
        self.max_sites = cfg.max_sites
        self.reports: dict[str, SiteReport] = {}
        self.held = 0  # items
        self.held_bytes = 0
        self._arrivals = 0
        self.busy = 0
        self.policy = HoldingPolicy(self.min_pages, self.max_held_bytes, cfg.redis_pool_wait,
                                    max_hold=cfg.max_hold_seconds, look_gap=max(2 * self.interval, 1.0))
        # Redis mode (DEBOILER_REDIS_URL): the cluster's pools and models.
        self.redis: RedisCoordinator | None = None
        if cfg.redis_url:
            self.redis = RedisCoordinator(cfg.redis_url, min_pages=self.min_pages, prefix=cfg.redis_prefix,
                                          pool_ttl=cfg.redis_pool_ttl, timeout=cfg.redis_timeout,
                                          params=self.params)
        self.redis_up = False
        self._redis_threads: ThreadPool | None = None
        #: Redis calls not answered yet: the close waits for them.
        self._redis_calls: set[Deferred] = set()
        self._redis_retry = cfg.redis_retry_interval
        self._redis_retry_at = 0.0
        self._redis_polling = False
        self._redis_refused = 0
        self._redis_warned = False
        self._loop: Any = None
        self._shutdown_trigger: Any = None
        self._pool_trigger: Any = None
        self._unwritable: set[type] = set()
        self._save_failures: set[tuple[str, str]] = set()  # (site, cause) warned of
        self._untitled: set[tuple[type, str]] = set()
        self._warned_no_html = False
        self._warned_min_pages = False
        self._site_lines = 0
        self._warned_bytes_kept = False
        # Items of one response share one parse and one clean.
        self._inflight: dict[str, list[Deferred]] = {}
        self._results: OrderedDict[str, tuple[CleanResult, SiteModel | None]] = OrderedDict()
        self._results_chars = 0
        self._digests: OrderedDict[str | bytes, tuple[str | bytes, bytes, str]] = OrderedDict()
        #: What the crawl's spider middleware says of the pages it gave items.
        self.handoff = handoff(crawler)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    def _site_log(self, msg: str, *args: Any) -> None:
        """A line about one site or page: INFO for the first few, then DEBUG.
        A broad crawl meets thousands of sites; the stats count them all and
        the closing summary names the largest."""
        if self._site_lines < _SITE_LINES:
            self._site_lines += 1
            logger.info(msg, *args)
            if self._site_lines == _SITE_LINES:
                logger.info("deboiler: %d lines about single sites and pages so far: more go to DEBUG "
                            "(the deboiler/ stats count them all)", _SITE_LINES)
        else:
            logger.debug(msg, *args)

    def _inc(self, key: str, n: int = 1) -> None:
        self.stats.inc_value(f"deboiler/{key}", n)

    if TYPE_CHECKING:  # the parts' methods that other parts call (each defined in its own module)
        async def _clean_now(
            self,
            site: _Site,
            item: Any,
            key: str,
            url: str,
            html: str | bytes,
            encoding: str | None,
            notes: list[str],
        ) -> Any: ...
        def _clean_shared(
            self,
            site: _Site,
            key: str,
            url: str,
            html: str | bytes,
            encoding: str | None,
            parsed: Page | None = None,
            sign: bool = False,
            kept: bool = False,
            fitted_on: bool = False,
        ) -> Deferred: ...
        def _remember(self, key: str, cleaned: tuple[CleanResult, SiteModel | None]) -> None: ...
        def _release(self, site: _Site, reason: Release) -> None: ...
        def _clean_or_fit(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None: ...
        def _fitted(self, site: _Site, model: SiteModel, keys: frozenset[str]) -> None: ...
        def _sign_held(self, page: _HeldPage, force: bool = False) -> Deferred | None: ...
        def _start_fit(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None: ...
        def _absorb(self, site: _Site, key: str, url: str, sigs: frozenset[str]) -> None: ...
        def _alone(self, site: _Site, key: str, url: str, sigs: frozenset[str]) -> None: ...
        def _flush_learning(self, site: _Site) -> None: ...
        def _finish(
            self,
            site: _Site,
            item: Any,
            cleaned: tuple[CleanResult, SiteModel | None],
            html: str | bytes,
            notes: Sequence[str] = (),
        ) -> Any: ...
        def _drop_html(self, adapter: ItemAdapter) -> None: ...
        def _unchanged(self, item: Any, state: str, reason: str, **extra: Any) -> Any: ...
        def _pass_unchanged(self, site: _Site, h: _Held, reason: str) -> None: ...
        def _resolve_page(
            self, site: _Site, page: _HeldPage, cleaned: tuple[CleanResult, SiteModel | None]
        ) -> None: ...
        def _fail(self, site: _Site, held: list[_Held], failure: Any) -> None: ...
        def _new_site(self, name: str) -> _Site: ...
        def _describe(self, site: _Site) -> None: ...
        def _load(self, site: _Site) -> Deferred: ...
        def _save(self, site: _Site, model: SiteModel) -> None: ...
        def _release_site(self, site: _Site, reason: Release) -> None: ...
        def _redis_lookup(self, site: _Site) -> None: ...
        def _pool_page(self, site: _Site, page: _HeldPage) -> None: ...
        def _offer(self, site: _Site, url: str, sigs: frozenset[str]) -> None: ...
        def _redis_tick(self) -> None: ...
        def _store_waited(self, now: float) -> None: ...
        def _pipeline_error(self, failure: Any) -> None: ...
        async def _spider_closed(self, spider: Spider) -> None: ...
        def _stop_pool(self) -> None: ...
        async def _settle_redis(self) -> None: ...
