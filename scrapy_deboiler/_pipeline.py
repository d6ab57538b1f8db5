"""The Scrapy item pipeline: hold each site's items until its model can be
fitted, then clean them (and every later item of the site) in flight."""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy.utils.project import data_path
from twisted.internet.defer import Deferred, DeferredList, fail, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from ._clean import CleanResult, Page, clean_page, emptied_reason, empties_many
from ._content import default_model
from ._executor import ProcessCleaner, WorkerError, WorkersGone
from ._engine import crawl_state, flush_feeds, scraper_busy
from ._holding import Hold, HoldingPolicy
from ._limits import Limits, Skip, check_page
from ._middleware import _lacks, response_url
from ._model import FIT_MIN_PAGES, FitParams, SiteModel
from ._report import SiteReport, write_report
from ._settings import DEFAULTS, enabled, read_settings
from ._store import SignatureFileError, SignatureStore
from ._redis import FINAL_RANK, RedisCoordinator, model_rank, pack_signatures, unpack_signatures
from ._redis import page_key as pooled_page_key
from ._urls import site_of_url

__all__ = ["DeboilerPipeline"]

logger = logging.getLogger(__name__)

#: Pages larger than this are not kept for the report's views.
_VIEW_MAX_CHARS = 1024 * 1024
#: Clean results kept for items of the same page that come later (a
#: response yielding more items than CONCURRENT_ITEMS), by count and size.
_RESULTS_KEPT = 64
_RESULTS_MAX_CHARS = 32 * 1024 * 1024
#: Notes of a page whose declared encoding could not read it: its raw HTML
#: stays in the item whatever DEBOILER_KEEP_HTML says.
_LOSSY = frozenset(("decode-errors", "encoding-fallback"))
#: hashlib releases the GIL for updates of 2048 bytes or more.
_HASH_PIECE = 2047
#: Releases that come before a site could have all its pages, and what the
#: status reason says of them.
_RELEASED_EARLY = {"budget": "held HTML over DEBOILER_MAX_HELD_BYTES",
                   "timeout": "held for DEBOILER_MAX_HOLD_SECONDS",
                   "starved": "Scrapy's scraper slot was full"}
#: Lines about single sites or pages logged at INFO before DEBUG takes over.
_SITE_LINES = 50
#: How long a stopping reactor waits for released items to leave the pipelines.
_SHUTDOWN_WAIT = 10.0
#: ... then for the pages of a hung worker's replacement, then for the items
#: of the pages the workers never answered.
_SHUTDOWN_AFTER_WORKERS = 3.0
#: A closing crawl waits at most this long (or DEBOILER_WORKER_TIMEOUT if
#: shorter) for a worker process that answers nothing.
_CLOSING_WORKER_TIMEOUT = 10.0


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

    def __post_init__(self) -> None:
        self.hold.name = self.name


def _clean_one(html: str | bytes, url: str, encoding: str | None, model: SiteModel | None,
               params: FitParams, learn: bool, mode: str, explain: bool = False, markdown: bool = False,
               body_only: bool = False) -> tuple[CleanResult, frozenset[str] | None]:
    """One page of a site with a model (or none, in content mode); with
    ``learn`` also its signatures. Pages reach it checked against the
    limits already (``_process``). Runs in the pipeline's threads."""
    return _clean_parsed(Page(html, url, encoding, params.scheme, limits=None), model, params, learn,
                         mode, explain, markdown, body_only)


def _fit_site(pages: list[tuple[str, str | bytes, str | None]], params: FitParams,
              mode: str, explain: bool = False, markdown: bool = False,
              body_only: bool = False) -> tuple[SiteModel, list[CleanResult]]:
    """Runs in a worker thread: fit a site's model and clean its pages,
    parsing each page once (checked against the limits already)."""
    parsed = [Page(html, url, enc, params.scheme, limits=None) for url, html, enc in pages]
    model = SiteModel.fit(parsed, params)
    return model, [clean_page(p, model, mode=mode, explain=explain, markdown=markdown, body_only=body_only)
                   for p in parsed]


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


def _sign_page(html: str | bytes, url: str, encoding: str | None, params: FitParams) -> Page:
    """A held page parsed and signed, to pool its signatures (Redis mode).
    Runs in the pipeline's threads."""
    page = Page(html, url, encoding, params.scheme, limits=None)
    page.signatures  # noqa: B018 (computed here, off the reactor thread)
    return page


def _clean_parsed(page: Page, model: SiteModel | None, params: FitParams, learn: bool, mode: str,
                  explain: bool = False, markdown: bool = False,
                  body_only: bool = False) -> tuple[CleanResult, frozenset[str] | None]:
    """``_clean_one`` for a page parsed already (``_sign_page``)."""
    sigs = page.signatures if learn else None
    return clean_page(page, model, mode=mode, explain=explain, markdown=markdown, body_only=body_only), sigs


def _is_redis_error(e: BaseException) -> bool:
    try:
        from redis.exceptions import RedisError
    except ImportError:
        return False
    return isinstance(e, RedisError)


class DeboilerPipeline:
    """Adds ``clean_text`` and ``clean_html`` to items, learning each site's
    boilerplate from its first ``DEBOILER_MIN_PAGES`` distinct pages.

    Items of a site without a model are held (their pipeline chain waits)
    until the site has enough distinct pages (URL and content: the items of
    one response count once), then its model is fitted in a worker thread
    and saved, and the held items go on cleaned. A site released earlier
    (the crawl went quiet, stopped, ran out of memory budget) gets a
    *provisional* model that keeps learning from its later pages, in this
    crawl and the next, until it has seen ``DEBOILER_MIN_PAGES``. A watchdog
    releases held items when the crawl would otherwise stall or end with them
    inside (see docs/scrapy-engine.md): every item leaves.

    Pages are parsed and cleaned in a small thread pool (DEBOILER_THREADS),
    once per distinct page, so the reactor thread keeps running Scrapy.

    With DEBOILER_REDIS_URL, crawling processes share one model a site: held
    pages' signatures are pooled in Redis and the pool is fitted once full
    (docs/scaling-out.md). Which site waits and when it goes is
    ``_holding.HoldingPolicy``'s, in both modes; this class is the glue.
    """

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        if not enabled(s):
            raise NotConfigured("DEBOILER_ENABLED is off")
        cfg = read_settings(s, where=_data_path)
        self.crawler = crawler
        self.stats = crawler.stats
        self.min_pages = cfg.min_pages
        self.url_field = cfg.url_field
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
        self.inline_max = cfg.inline_max_bytes
        self.interval = cfg.watchdog_interval
        self.threads = cfg.threads
        self.processes = cfg.processes
        self.worker_timeout = cfg.worker_timeout
        self.markdown = cfg.markdown
        self.markdown_field = cfg.markdown_field
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
        self._viewed_sites = 0
        self.directory = cfg.signatures_dir
        self.store = cfg.store(self.directory)
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
                                    max_hold=cfg.max_hold_seconds)
        # Redis mode (DEBOILER_REDIS_URL): the cluster's pools and models.
        self.redis: RedisCoordinator | None = None
        if cfg.redis_url:
            self.redis = RedisCoordinator(cfg.redis_url, min_pages=self.min_pages, prefix=cfg.redis_prefix,
                                          pool_ttl=cfg.redis_pool_ttl, timeout=cfg.redis_timeout,
                                          params=self.params)
        self.redis_up = False
        self._redis_threads: ThreadPool | None = None
        self._redis_retry = cfg.redis_retry_interval
        self._redis_retry_at = 0.0
        self._redis_polling = False
        self._redis_refused = 0
        self._redis_warned = False
        self._loop: Any = None
        self._pool: ThreadPool | None = None
        self._cleaner: ProcessCleaner | None = None
        self._shutdown_trigger: Any = None
        self._pool_trigger: Any = None
        self._unwritable: set[type] = set()
        self._save_failures: set[tuple[str, str]] = set()  # (site, cause) warned of
        self._untitled: set[type] = set()
        self._warned_no_html = False
        self._warned_min_pages = False
        self._site_lines = 0
        self._warned_bytes_kept = False
        # Items of one response share one parse and one clean.
        self._inflight: dict[str, list[Deferred]] = {}
        self._results: OrderedDict[str, tuple[CleanResult, SiteModel | None]] = OrderedDict()
        self._results_chars = 0
        self._digests: OrderedDict[int, tuple[Any, bytes, str]] = OrderedDict()
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "DeboilerPipeline":
        return cls(crawler)

    # -- stats -----------------------------------------------------------

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

    # -- opening ---------------------------------------------------------

    async def open_spider(self, spider: Spider | None = None) -> None:
        """Start the threads and the watchdog. An error here fails the
        crawl: a crawl without its watchdog could hold items forever."""
        from twisted.internet import reactor

        sweep = getattr(self.store, "sweep", None)
        if sweep is not None:
            try:
                sweep()
            except Exception:
                logger.exception("deboiler: cannot sweep %s", self.directory)
        self._pool = ThreadPool(minthreads=0, maxthreads=self.threads, name="deboiler")
        self._pool.start()
        if self.processes:
            self._cleaner = ProcessCleaner(self.processes)
        if self.redis is not None:
            self._redis_threads = ThreadPool(minthreads=0, maxthreads=2, name="deboiler-redis")
            self._redis_threads.start()
            await maybe_deferred_to_future(self._redis_connect())
        self._loop = create_looping_call(self._tick)
        self._loop.start(self.interval, now=False)
        self._shutdown_trigger = reactor.addSystemEventTrigger("before", "shutdown", self._before_shutdown)
        # A reactor stopped without closing the spider (a second Ctrl-C) must
        # not leave the threads behind: Python would wait for them at exit.
        self._pool_trigger = reactor.addSystemEventTrigger("during", "shutdown", self._stop_pool)

    def _stop_pool(self) -> None:
        if self._pool is not None:
            self._pool.stop()
            self._pool = None
        if self._redis_threads is not None:
            self._redis_threads.stop()
            self._redis_threads = None
            if self.redis is not None:
                self.redis.close()
        if self._cleaner is not None:
            self._cleaner.shutdown()
            self._cleaner = None

    def _cleaning(self, *args: Any, ref: str | None = None) -> Deferred:
        """``_clean_one(*args)`` in a worker process (DEBOILER_PROCESSES) or
        in the threads. ``ref``: a held page a worker signed and keeps
        parsed (``_sign_held``), cleaned before newly arrived pages."""
        if self._cleaner is not None and self._cleaner.broken is None:
            return self._cleaner.clean(*args, ref=ref, urgent=ref is not None).addErrback(
                self._elsewhere, _clean_one, args)
        return self._in_pool(_clean_one, *args)

    def _fitting(self, *args: Any) -> Deferred:
        """``_fit_site(*args)`` in a worker process or in the threads."""
        if self._cleaner is not None and self._cleaner.broken is None:
            return self._cleaner.fit(*args).addErrback(self._elsewhere, _fit_site, args)
        return self._in_pool(_fit_site, *args)

    def _elsewhere(self, failure: Failure, f: Any, args: tuple) -> Any:
        """A task the worker processes were given up with (they could not
        start; it never reached one) goes to the threads."""
        if failure.check(WorkersGone) and self._pool is not None:
            return self._in_pool(f, *args)
        return failure

    def _inline_or(self, size: int, f: Any, args: tuple, elsewhere: Any) -> Deferred:
        """``f(*args)`` on the reactor thread for pages up to
        DEBOILER_INLINE_MAX_BYTES, else ``elsewhere(*args)``."""
        if size <= self.inline_max:
            try:
                return succeed(f(*args))
            except Exception:
                return fail()
        return elsewhere(*args)

    def _in_pool(self, f: Any, *args: Any) -> Deferred:
        from twisted.internet import reactor

        if self._pool is None:  # used before open_spider (or after close): a one-off pool
            return deferToThreadPool(reactor, reactor.getThreadPool(), f, *args)
        return deferToThreadPool(reactor, self._pool, f, *args)

    # -- items -----------------------------------------------------------

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        self._inc("items_seen")
        try:
            return await self._process(item)
        except Exception as e:  # a bug here must cost no item
            logger.exception("deboiler: item passed on unchanged after an error")
            self._inc("errors")
            return self._unchanged(item, "error", f"{type(e).__name__}: {e}")

    async def _process(self, item: Any) -> Any:
        try:
            adapter = ItemAdapter(item)
            url = adapter.get(self.url_field)
            html = adapter.get(self.html_field)
            encoding = (adapter.get(self.encoding_field)
                        if self.encoding_field and self.encoding_field in adapter else None)
            prior = adapter.get(self.status_field) if self.status_field in adapter else None
        except Exception as e:  # not an item ItemAdapter knows
            return self._unchanged(item, "error", f"cannot read item: {type(e).__name__}: {e}")
        if not isinstance(html, (str, bytes)):
            if isinstance(prior, dict) and prior.get("status") == "not_html":  # the middleware's mark
                self._inc("skipped/not-html")
                ctype = prior.get("content_type")
                return self._unchanged(item, "skipped", f"not an HTML response ({ctype or 'no Content-Type'})",
                                       kind="not-html")
            if html is not None:  # a number, a list ...: the spider put something else there
                self._inc("items_html_not_text")
                return self._unchanged(item, "unchanged", f"{self.html_field!r} holds {type(html).__name__}, "
                                                          "not the page's HTML (str or bytes)")
            self._no_html()
            return self._unchanged(item, "unchanged", f"no {self.html_field!r} in item")
        url = url if isinstance(url, str) else ""
        skip = check_page(html, self.limits)
        if skip is not None:
            return self._skipped(item, url, skip)
        # The page's identity and URL: the response's, for all the items of
        # one response, even when each carries its own URL (a listing's items
        # with their detail links): a page counts once, is cleaned once and
        # is placed among its site's pages by where it was fetched.
        key, url = self._page_key(url, html)
        name = site_of_url(url)
        site = self.sites.get(name)
        if site is None:
            site = self._new_site(name)
        else:
            self.sites.move_to_end(name)
        encoding = encoding if isinstance(encoding, str) else None
        # The middleware's notes on decoding the response (a wrong declared encoding).
        notes = [n for n in prior.get("notes", ()) if isinstance(n, str)] if (
            isinstance(prior, dict) and prior.get("status") == "decoded") else []
        self._inc("bytes_in", len(html))
        site.bytes_in += len(html)
        rep = site.report
        if rep is not None and rep.samples is not None and len(html) <= _VIEW_MAX_CHARS and not any(
                s[0] == url for s in rep.samples):  # also pages cleaned on arrival (a model from a file)
            rep.sample(url, html, encoding, self.report_views)
        if site.model is not None or not name:
            return await self._clean_now(site, item, key, url, html, encoding, notes)
        page = site.held.get(key)
        if page is None:
            page = site.held[key] = _HeldPage(key, url, html, encoding, notes)
            site.hold.pages = len(site.held)
            if site.hold.pooled and site.model is None:
                self._pool_page(site, page)
            elif not site.hold.busy and (signing := self._sign_held(page)) is not None:
                signing.addErrback(lambda _: None)  # logged; the fit parses the page
            if not site.hold.busy:  # waiting for the threshold: what DEBOILER_MAX_HELD_BYTES bounds
                self.held_bytes += len(html)
                site.hold.bytes += len(html)
        waiter: Deferred = Deferred()
        if not site.held_items:
            site.hold.first = self._arrivals
            site.hold.since = time.monotonic()
        self._arrivals += 1
        page.items.append(_Held(item, waiter, page))
        site.held_items += 1
        self.held += 1
        self._inc("items_held")
        self.stats.max_value("deboiler/max_held", self.held)
        reason = self.policy.at_arrival(site.hold) if site.model is None and not site.lookup else None
        if reason is not None:
            self._release(site, reason)
        elif self.held_bytes > self.max_held_bytes:
            try:
                self._over_budget()
            except Exception:  # the item is held already: its waiter answers for it
                logger.exception("deboiler: releasing sites over DEBOILER_MAX_HELD_BYTES failed")
                self._inc("errors")
        self.stats.max_value("deboiler/max_held_bytes", self.held_bytes)
        return await maybe_deferred_to_future(waiter)

    def _page_key(self, url: str, html: str | bytes) -> tuple[str, str]:
        """A page's identity (its URL without fragment and a digest of its
        content) and its URL. The items of one response share one HTML
        object: its digest is computed once, and they all take the URL the
        middleware fetched it from, else the first of them's (a few recent
        objects are remembered)."""
        hit = self._digests.get(id(html))
        if hit is not None and hit[0] is html:
            digest, url = hit[1], hit[2]
        else:
            url = response_url(html) or url
            data = memoryview(html if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass"))
            h = blake2b(digest_size=16)
            # In pieces hashlib hashes without releasing the GIL: on the
            # reactor thread, getting it back from the cleaning threads
            # costs more than the hashing (up to sys.getswitchinterval()).
            for i in range(0, len(data), _HASH_PIECE):
                h.update(data[i:i + _HASH_PIECE])
            digest = h.digest()
            self._digests[id(html)] = (html, digest, url)  # the reference keeps id() unique
            if len(self._digests) > 16:
                self._digests.popitem(last=False)
        base = url.split("#", 1)[0].encode("utf-8", "surrogatepass")
        return blake2b(base + b"\0" + digest, digest_size=8).hexdigest(), url

    def _no_html(self) -> None:
        """One WARNING a crawl, with the likely cause, when items come without HTML."""
        self._inc("items_without_html")
        if self._warned_no_html:
            return
        self._warned_no_html = True
        from ._middleware import DeboilerSpiderMiddleware

        try:
            paths = build_component_list(self.crawler.settings.getwithbase("SPIDER_MIDDLEWARES"))
            classes = [load_object(p) if isinstance(p, str) else p for p in paths]
            has_mw = any(isinstance(c, type) and issubclass(c, DeboilerSpiderMiddleware) for c in classes)
        except Exception:
            has_mw = True  # cannot tell: name the other causes
        if not has_mw:
            cause = ("DeboilerSpiderMiddleware is not enabled, so nothing gives items their page's "
                     "HTML: enable it in SPIDER_MIDDLEWARES (or use ADDONS = "
                     "{'scrapy_deboiler.Addon': 100}), or put the HTML in the items yourself")
        else:
            cause = ("the middleware gives HTML only to items a callback yields from an HTML "
                     "response: items from start(), spider_idle or other signals, from non-HTML "
                     "responses (JSON, XML, text), of a class without that field (a scrapy.Item "
                     "declaring no Field for it: the middleware names such classes in its own "
                     "WARNING), or whose field an earlier component removed, carry none")
        logger.warning("deboiler: items reach the pipeline without %r and pass unchanged; "
                       "likely cause: %s (stat deboiler/items_without_html counts them)",
                       self.html_field, cause)

    def _over_budget(self) -> None:
        """DEBOILER_MAX_HELD_BYTES: release the sites holding the oldest
        items until what stays held fits the budget (broad crawls meet
        thousands of sites that never reach DEBOILER_MIN_PAGES)."""
        for hold in self.policy.over_budget([s.hold for s in self.sites.values()], self.held_bytes):
            self._release_site(self.sites[hold.name], "budget")

    def _skipped(self, item: Any, url: str, skip: Skip) -> Any:
        """A page that is not parsed (too large, not HTML) goes on at once,
        without the HTML unless DEBOILER_KEEP_HTML asks for it."""
        self._site_log("deboiler: %s not cleaned: %s", url or "an item", skip)
        self._inc(f"skipped/{skip.kind}")
        self._unchanged(item, "skipped", skip.reason, kind=skip.kind)
        if not self.keep_html:
            self._drop_html(ItemAdapter(item))
        return item

    def _new_site(self, name: str) -> _Site:
        site = self.sites[name] = _Site(name)
        self._inc("sites")
        if not name:
            # Items whose URL has no host (none, or relative, and no response
            # to take one from) are not one website's pages: each is a
            # single page, and nothing is fitted or saved for them.
            site.reason = "no site: the URL has no host"
        elif self.redis is not None and self.redis_up:
            self._redis_lookup(site)
        else:
            if self.redis is not None:
                self._inc("redis/sites_local")
            self._load(site)
        if self.explain:
            site.report = self.reports.get(name)
            if site.report is None:
                site.report = self.reports[name] = SiteReport(name)
                if self._viewed_sites < self.report_view_sites:
                    self._viewed_sites += 1
                    site.report.samples = []
        if len(self.sites) > self.max_sites:
            self._evict()
        return site

    def _evict(self) -> None:
        """Forget the least recently seen idle sites beyond DEBOILER_MAX_SITES.
        Their models are in the store and are read again if they come back."""
        for name in list(self.sites)[:-1]:  # never the site just seen
            if len(self.sites) <= self.max_sites:
                break
            site = self.sites[name]
            if site.held or site.hold.busy or site.inflight:
                continue
            self._flush_learning(site)
            self._describe(site)
            if site.report is not None:
                site.report.compact()
            del self.sites[name]
            self._inc("sites_evicted")

    def _describe(self, site: _Site) -> None:
        """Copy what the report says of a site's model into its report."""
        rep = site.report
        if rep is not None and site.model is not None:
            rep.model_source, rep.model_pages = site.source, site.model.pages
            rep.model_provisional = site.model.provisional
            rep.signatures, rep.boilerplate_signatures = len(site.model.support), len(site.model.boilerplate)

    def _load(self, site: _Site) -> None:
        try:
            model = self.store.load(site.name)
        except SignatureFileError as e:
            logger.warning("deboiler: %s; the site will be fitted again", e)
            self._inc("store_errors")
            return
        except Exception:
            logger.exception("deboiler: cannot read the signatures of %r", site.name)
            self._inc("store_errors")
            return
        if model is None:
            return
        if model.provisional and len(model.page_keys) >= self.min_pages:
            model.provisional = False  # fitted on enough pages for this crawl's threshold
        site.model, site.source = model, "file"
        self._inc("sites_reused")
        if model.provisional:
            self._inc("sites_reused_provisional")
            self._site_log("deboiler: %s uses its provisional signature file (%d pages; it learns "
                           "until it has seen %d)", site.name or "?", len(model.page_keys), self.min_pages)
        else:
            self._site_log("deboiler: %s uses its signature file (%d pages)", site.name or "?", model.pages)

    # -- cleaning ----------------------------------------------------------

    async def _clean_now(self, site: _Site, item: Any, key: str, url: str, html: str | bytes,
                         encoding: str | None, notes: list[str]) -> Any:
        try:
            cleaned = await maybe_deferred_to_future(self._clean_shared(site, key, url, html, encoding))
        except Exception as e:
            logger.error("deboiler: cleaning %s failed: %s: %s", url, type(e).__name__, e)
            self._inc("errors")
            return self._unchanged(item, "error", f"{type(e).__name__}: {e}", site=site.name)
        return self._finish(site, item, cleaned, html, notes)

    def _clean_shared(self, site: _Site, key: str, url: str, html: str | bytes,
                      encoding: str | None, parsed: Page | None = None, sign: bool = False,
                      kept: bool = False, fitted_on: bool = False) -> Deferred:
        """A Deferred of the page's (CleanResult, model it was cleaned with):
        one clean per distinct page, shared by all its items (those in flight
        wait for it, later ones get it from a small cache). ``sign``: also
        keep the signatures of a page cleaned without a model (``_alone``);
        ``kept``: a worker keeps the page parsed (``_sign_held``);
        ``fitted_on``: the model was fitted on it (no evidence to learn)."""
        hit = self._results.get(key)
        if hit is not None:
            self._results.move_to_end(key)
            self._inc("items_shared_clean")
            return succeed(hit)
        d: Deferred = Deferred()
        waiters = self._inflight.get(key)
        if waiters is not None:
            waiters.append(d)
            self._inc("items_shared_clean")
            return d
        self._inflight[key] = [d]
        site.inflight += 1
        model = site.model
        want_sigs = sign if model is None else (self.learn or model.provisional) and not fitted_on
        args = (html, url, encoding, model, self.params, want_sigs, self.mode, self.explain, self.markdown,
                self.body_only)
        if parsed is not None and (self._cleaner is None or self._cleaner.broken is not None):
            job = self._in_pool(_clean_parsed, parsed, *args[3:])
        elif kept:
            job = self._cleaning(*args, ref=key)
        else:
            job = self._inline_or(len(html), _clean_one, args, self._cleaning)

        def done(r: tuple[CleanResult, frozenset[str] | None]) -> None:
            result, sigs = r
            site.inflight -= 1
            self._inc("pages_cleaned")
            if sigs is not None:
                try:
                    if model is None:
                        self._alone(site, key, url, sigs)
                    else:
                        self._absorb(site, key, url, sigs)
                except Exception:  # learning is optional; the items are not
                    logger.exception("deboiler: learning from %s failed", url)
                    self._inc("errors")
            cleaned = (result, model)
            self._remember(key, cleaned)
            for w in self._inflight.pop(key, []):
                w.callback(cleaned)

        def failed(f: Any) -> None:
            # The job failed, or ``done`` did before answering its waiters.
            waiters = self._inflight.pop(key, None)
            if waiters is not None:
                site.inflight = max(0, site.inflight - 1)
                for w in waiters:
                    w.errback(f)

        job.addCallback(done)
        job.addErrback(failed)
        return d

    def _remember(self, key: str, cleaned: tuple[CleanResult, SiteModel | None]) -> None:
        self._results[key] = cleaned
        self._results_chars += len(cleaned[0].text) + len(cleaned[0].html)
        while self._results and (len(self._results) > _RESULTS_KEPT
                                 or self._results_chars > _RESULTS_MAX_CHARS):
            _, (old, _) = self._results.popitem(last=False)
            self._results_chars -= len(old.text) + len(old.html)

    def _absorb(self, site: _Site, key: str, url: str, sigs: frozenset[str]) -> None:
        """A cleaned page's signatures: evidence for a provisional model
        until it has seen DEBOILER_MIN_PAGES pages, then (DEBOILER_LEARN)
        for extending a finished one."""
        model = site.model
        if model is None:
            return
        if model.provisional and site.hold.pooled and self.redis_up:
            self._offer(site, url, sigs)
            return
        if model.provisional:
            # A model fitted on a Redis pool keys its pages by URL alone.
            if key in model.page_keys or key in site.pending_keys or (
                    pooled_page_key(url.split("#", 1)[0]) in model.page_keys):
                return
            site.pending.append((url, sigs))
            site.pending_keys.add(key)
            if len(model.page_keys) + len(site.pending_keys) >= self.min_pages:
                self._complete(site)
        elif self.learn and key not in site.learned_keys:
            site.learned.append((url, sigs))
            site.learned_keys.add(key)
            if len(site.learned) >= self.min_pages:
                self._learn(site)

    def _alone(self, site: _Site, key: str, url: str, sigs: frozenset[str]) -> None:
        """The signatures of a page released without a model. The site's
        first such page is remembered; the next distinct one gives the site a
        provisional model from both (then it learns from later pages until it
        has seen DEBOILER_MIN_PAGES), fitted here on the reactor thread: two
        pages' shared signatures take a fraction of a millisecond."""
        if not sigs:  # an empty page shares nothing
            return
        if site.model is not None:  # fitted meanwhile: evidence for it
            self._absorb(site, key, url, sigs)
            return
        first = site.alone
        if first is None or first[0] == key or site.hold.busy:
            site.alone = (key, url, pack_signatures(sigs))  # a running fit takes it when done
            return
        site.alone = None
        model = SiteModel.fit([(first[1], unpack_signatures(first[2])), (url, sigs)], self.params)
        self._fitted(site, model, frozenset((first[0], key)))
        self._save(site, model)  # its two pages went on already, without a model
        self._inc("sites_fitted_alone")
        self._site_log("deboiler: fitted %s on %d pages released one at a time%s: %d boilerplate signatures",
                       site.name or "?", model.pages,
                       f" (provisional: it learns until it has seen {self.min_pages})" if model.provisional else "",
                       len(model.boilerplate))
        if site.held:  # pages held since: the model is here
            self._release(site, "after_fit")

    def _complete(self, site: _Site) -> None:
        """Add a provisional model's new pages to it (compared among
        themselves, as DEBOILER_LEARN does) and save it: finished once it has
        seen DEBOILER_MIN_PAGES distinct pages, provisional still otherwise
        (the crawl ended first). Runs on the reactor thread: counting shared
        signatures of a few pages takes about a millisecond."""
        if not site.pending or site.model is None:
            return
        batch, site.pending = site.pending, []
        keys, site.pending_keys = site.pending_keys, set()
        old = site.model
        model = old.with_params().update(batch)
        model.page_keys = old.page_keys | keys
        model.provisional = len(model.page_keys) < self.min_pages
        if not model.provisional:
            model.page_keys = frozenset()
            self._inc("sites_completed")
            self._site_log("deboiler: %s: provisional model completed on %d pages: %d boilerplate "
                           "signatures", site.name or "?", model.pages, len(model.boilerplate))
        else:
            self._inc("sites_updated")
        site.model = model
        self._save(site, model)

    def _finish(self, site: _Site, item: Any, cleaned: tuple[CleanResult, SiteModel | None],
                html: str | bytes, notes: list[str] = ()) -> Any:
        """Write the clean fields; never lose the item. ``cleaned``: the
        result and the model it was cleaned with (the site's may have
        changed since); ``notes``: the middleware's, on decoding the response."""
        result, model = cleaned
        # Without a model content mode extracts the page on its own; boilerplate
        # mode removes nothing (no template is known) and writes all its text.
        alone = "single_page" if self.mode == "content" else "unchanged"
        state = "cleaned" if model else alone
        if model is not None and result.fallback == "emptied":
            state = "emptied"  # cleaned as without its model: keeps its text
        status: dict[str, Any] = {"status": state, "site": site.name,
                                  "html_chars": len(html), "clean_html_chars": len(result.html)}
        if model is not None:
            status.update(model=site.source, fit_pages=model.pages, removed=result.removed)
            if model.provisional:
                status["provisional"] = True
            if state == "emptied":
                status["reason"] = emptied_reason(result)
            elif result.fallback:
                status["fallback"] = result.fallback
                self._inc(f"fallback/{result.fallback}")
        else:
            status["reason"] = site.reason
        all_notes = [*notes, *(n for n in result.notes if n not in notes)]
        if all_notes:
            status["notes"] = all_notes
            for note in all_notes:
                self._inc(f"notes/{note}")
        site.pages += 1
        site.bytes_out += len(result.html)
        fields = {self.text_field: result.text, self.clean_html_field: result.html,
                  self.status_field: status}
        if self.comments_field:
            fields[self.comments_field] = result.comments
        if self.markdown:
            fields[self.markdown_field] = result.markdown
        if site.report is not None:
            site.report.add_page(status["status"], len(html), len(result.html), result.removed_blocks)
        lossy = not _LOSSY.isdisjoint(all_notes)
        if not self._write(item, fields, keep_raw=lossy):
            return item
        self._write_title(item, result.title)
        if lossy and not self.keep_html:
            self._keep_raw(item, html, status)
        self._inc(f"items_{state}")
        self._inc("bytes_out", len(result.html))
        return item

    def _write_title(self, item: Any, title: str) -> None:
        """The page's headline, unless the item holds a title of its own
        (not missing, None or empty: many spiders yield their own, and
        DEBOILER_TITLE_FIELD may name it), which stays. An item class that
        cannot take the field gets the other fields as before, with one
        INFO line: nobody asked for this field, so no warning."""
        adapter = ItemAdapter(item)
        try:
            if not _lacks(adapter.get(self.title_field)):
                self._inc("items_title_kept")
                return
            adapter[self.title_field] = title
        except (KeyError, TypeError, AttributeError) as e:
            self._inc("items_without_title")
            if type(item) not in self._untitled:
                self._untitled.add(type(item))
                logger.info("deboiler: %s items cannot hold %s (%s): declare it to get the page's headline",
                            type(item).__name__, self.title_field, e)

    def _keep_raw(self, item: Any, html: str | bytes, status: dict) -> None:
        """A page the declared encoding could not read keeps its raw HTML,
        so it can be decoded again. Bytes are kept as latin-1 text (one
        character a byte, ``.encode("latin-1")`` gives them back): JSON
        feeds cannot store bytes, and without DEBOILER_KEEP_HTML nothing
        downstream expects this field."""
        self._inc("items_raw_html_kept")
        if isinstance(html, bytes):
            try:
                ItemAdapter(item)[self.html_field] = html.decode("latin-1")
            except (KeyError, TypeError, AttributeError):
                return
            status["raw_html"] = "latin-1"
        else:
            status["raw_html"] = "kept"

    def _write(self, item: Any, fields: dict[str, Any], keep_raw: bool = False) -> bool:
        """Write the clean fields the item's class can hold. An item that
        cannot hold the text passes on unchanged (what was written is taken
        back); one that lacks only other fields (a class declaring all but
        ``clean_markdown``) gets the rest. Either way one WARNING a class."""
        adapter = ItemAdapter(item)
        written: list[tuple[str, bool, Any]] = []
        missing: list[str] = []
        error: Exception | None = None
        for key, value in fields.items():
            try:
                had = key in adapter
                old = adapter[key] if had else None
                adapter[key] = value
                written.append((key, had, old))
            except (KeyError, TypeError, AttributeError) as e:
                missing.append(key)
                error = error or e
        if not missing:
            if not self.keep_html and not keep_raw:
                self._drop_html(adapter)
            return True
        whole = self.text_field in missing
        if type(item) not in self._unwritable:
            self._unwritable.add(type(item))
            logger.warning(
                "deboiler: cannot add %s to %s items (%s): declare %s, or rename the fields with "
                "DEBOILER_TEXT_FIELD, DEBOILER_CLEAN_HTML_FIELD, DEBOILER_STATUS_FIELD ...; %s",
                ", ".join(missing), type(item).__name__, error, "them" if len(missing) > 1 else "it",
                "such items pass through unchanged" if whole else "the other fields are written")
        if not whole:
            self._inc("items_partly_written")
            if not self.keep_html and not keep_raw:
                self._drop_html(adapter)
            return True
        for key, had, old in reversed(written):  # nothing half-written
            try:
                if had:
                    adapter[key] = old
                else:
                    del adapter[key]
            except (KeyError, TypeError, AttributeError, NotImplementedError):
                pass
        self._inc("items_unwritable")
        return False

    def _drop_html(self, adapter: ItemAdapter) -> None:
        """The HTML field goes from mappings (dicts, scrapy.Item); objects
        (dataclasses, attrs, pydantic) keep the attribute as None, since
        their generated methods (repr, asdict, eq) expect every field."""
        if self.html_field not in adapter:
            return
        if isinstance(adapter.item, MutableMapping):
            try:
                del adapter[self.html_field]
                return
            except (KeyError, TypeError, AttributeError, NotImplementedError):
                pass
        try:
            adapter[self.html_field] = None
        except Exception:
            pass

    def _unchanged(self, item: Any, state: str, reason: str, **extra: Any) -> Any:
        """Pass ``item`` on without clean fields; ``state`` is error,
        unchanged or skipped (each with its items_ stat)."""
        self._inc(f"items_{state}")
        try:
            ItemAdapter(item)[self.status_field] = {"status": state, **extra, "reason": reason}
        except Exception:
            pass
        return item

    # -- releasing held items --------------------------------------------

    def _release(self, site: _Site, reason: str) -> None:
        """Let a site's held items go: cleaned when it has (or gets) a model,
        unchanged with a reason when it cannot have one."""
        if site.hold.busy or not site.held:
            return
        pages, site.held = list(site.held.values()), {}
        site.held_items = site.hold.pages = 0
        self.held_bytes -= site.hold.bytes
        site.hold.bytes = 0
        try:
            self._release_held(site, pages, reason)
        except Exception as e:  # held items must never be stranded
            logger.exception("deboiler: releasing %d pages of %r failed", len(pages), site.name)
            self._inc("errors")
            for p in pages:
                for h in p.items:
                    if not h.waiter.called:
                        self.held -= 1
                        h.waiter.callback(self._unchanged(h.item, "error", f"{type(e).__name__}: {e}"))

    def _release_held(self, site: _Site, pages: list[_HeldPage], reason: str) -> None:
        self._inc(f"released/{reason}", sum(len(p.items) for p in pages))
        self._clean_or_fit(site, pages, reason)

    def _clean_or_fit(self, site: _Site, pages: list[_HeldPage], reason: str) -> None:
        """Released pages: cleaned with the site's model, each alone (too few
        for one), or fitted on. Pages that failed in a worker fail alone first."""
        pages = self._without_failed(site, pages)
        if not pages:
            return
        alone = site.model is None and len(pages) < FIT_MIN_PAGES
        remember = alone and not site.hold.pooled and reason != "shutdown"
        if alone:
            # Too few pages for a model: remember their signatures (with the
            # site's next page released so, they give it one), and extract
            # each page on its own (content mode) or take all its text
            # (boilerplate mode, as the command line does).
            site.reason = self._alone_reason(site, len(pages), reason)
        if site.model is not None or alone:
            # Arrived while a fit ran: clean with its model. Or a site too
            # small for one: each page on its own.
            for p in pages:
                # A page still being signed is kept by the time its clean
                # comes: the worker takes tasks in order.
                d = self._clean_shared(site, p.key, p.url, p.html, p.encoding, p.parsed, sign=remember,
                                       kept=p.sigs is not None or p.signing is not None)
                p.parsed = None
                d.addCallbacks(lambda r, p=p: self._resolve_page(site, p, r),
                               errback=lambda f, p=p: self._fail(site, p.items, f))
            return
        self._start_fit(site, pages, reason)

    def _without_failed(self, site: _Site, pages: list[_HeldPage]) -> list[_HeldPage]:
        """Fail the items of the pages whose signing failed in a worker (it
        died on the page: a memory limit, an OOM kill; or raised), each page
        on its own, and return the others. Sending such a page again would
        kill the next worker, and a fit that includes it fails for all."""
        ok = []
        for p in pages:
            if p.failed is None:
                ok.append(p)
            else:
                self._inc("pages_failed_held")
                self._fail(site, p.items, p.failed)
        return ok

    def _alone_reason(self, site: _Site, n: int, reason: str) -> str:
        """Why a site's released pages have no model: the site has too few,
        or it was released before it held enough at once (``n`` counts the
        pages released now, not the site's)."""
        earlier = site.alone is not None or site.pages > 0 or site.inflight > 0
        if reason not in _RELEASED_EARLY and not earlier:
            return f"site has {n} page(s); fitting needs {FIT_MIN_PAGES}"
        why = _RELEASED_EARLY.get(reason, reason)
        return f"released with {n} page(s) held ({why}); fitting needs {FIT_MIN_PAGES}"

    def _fitted(self, site: _Site, model: SiteModel, keys: frozenset[str]) -> None:
        """A model fitted here on the pages ``keys`` becomes the site's:
        provisional when they are fewer than DEBOILER_MIN_PAGES, or when the
        site is pooled (the cluster's model is to replace it). It is saved
        once those pages are cleaned (``_save_fitted``)."""
        model.provisional = len(keys) < self.min_pages or (site.hold.pooled and self.redis_up)
        if model.provisional:
            model.page_keys = keys
        site.model, site.source = model, "fitted"
        self._inc("sites_fitted")
        if model.provisional:
            self._inc("sites_provisional")

    def _save_fitted(self, site: _Site, model: SiteModel, results: list[CleanResult | None]) -> None:
        """Save a model fitted on held pages once they are cleaned
        (``results``, None where a page failed), unless it emptied many of
        them (``empties_many``): those pages keep their text (``emptied``),
        but a file would hand the model to the next crawl. The site keeps
        it in memory, and none of its models is saved in this crawl."""
        done = [r for r in results if r is not None]
        emptied = sum(r.fallback == "emptied" for r in done)
        if empties_many(emptied, len(done)):
            site.unsaved = f"it emptied {emptied} of its {len(done)} fit pages"
            self._inc("saves_refused_emptied")
            logger.warning("deboiler: %s: the model fitted on %d pages is not saved: %s (its pages keep their "
                           "text, status 'emptied'); the pages may be copies of one another that the copy "
                           "test missed", site.name or "?", len(done), site.unsaved)
            return
        self._save(site, model)

    def _sign_held(self, page: _HeldPage, force: bool = False) -> Deferred | None:
        """Worker processes: a page held for its site's threshold is parsed
        and signed by a worker as it arrives, and kept there parsed. At the
        threshold the model is then counted here from the signatures, and
        the pages are cleaned from those parses one by one, each item going
        on as its page is done. A fit that parsed, signed and cleaned them
        all in one task kept the site's items, and those arriving meanwhile,
        waiting for all of it (docs/pipeline.md, "Signing held pages").
        Returns a Deferred of the signatures (or of why there are none),
        None where no worker signs it. ``force``: pages up to
        DEBOILER_INLINE_MAX_BYTES too (a fit task that failed is split)."""
        cleaner = self._cleaner
        if cleaner is None or cleaner.broken is not None or (len(page.html) <= self.inline_max and not force):
            return None
        page.signing = done = Deferred()  # fires once ``page.sigs`` is known or cannot be

        def signed(sigs: frozenset[str]) -> frozenset[str]:
            page.sigs, page.signing = sigs, None
            self._inc("pages_signed")
            done.callback(None)
            return sigs

        def unsigned(f: Failure) -> Failure:
            page.signing = None
            if f.check(WorkerError) and not f.check(WorkersGone):
                page.failed = f  # it fails alone (``_without_failed``)
            # (else the workers were given up: its fit parses it in the threads)
            logger.debug("deboiler: signing %s in a worker failed: %s", page.url, f.getErrorMessage())
            done.callback(None)
            return f

        return cleaner.sign(page.key, page.html, page.url, page.encoding, self.params).addCallbacks(
            signed, unsigned)

    def _start_fit(self, site: _Site, pages: list[_HeldPage], reason: str) -> None:
        cleaner = self._cleaner
        if all(p.sigs is not None or p.signing is not None for p in pages) and (
                (cleaner is not None and cleaner.broken is None) or all(p.sigs is not None for p in pages)):
            self._fit_signed(site, pages, reason)
        else:
            self._fit_whole(site, pages, reason)

    def _fit_signed(self, site: _Site, pages: list[_HeldPage], reason: str) -> None:
        """Fit a site on the signatures workers sent for its held pages
        (waiting for those still signing), then clean the pages where they
        are kept parsed. A page whose signing failed in a worker fails alone
        and the site is fitted on the others; one left unsigned because the
        workers were given up: the whole fit goes to the threads
        (``_fit_whole``)."""
        site.hold.busy = True
        self.busy += 1
        started = time.perf_counter()
        waiting = [p.signing for p in pages if p.signing is not None]
        items = [h for p in pages for h in p.items]

        def fit(_: Any) -> None:
            site.hold.busy = False
            self.busy -= 1
            try:
                if any(p.sigs is None for p in pages):
                    self._clean_or_fit(site, pages, reason)
                    return
                model = SiteModel.fit([(p.url, p.sigs) for p in pages], self.params)
                self._fitted(site, model, frozenset(p.key for p in pages))
                cleans = []
                for p in pages:
                    d = self._clean_shared(site, p.key, p.url, p.html, p.encoding, p.parsed, kept=True,
                                           fitted_on=True)
                    p.parsed = None
                    d.addCallbacks(lambda r, p=p: self._resolve_page(site, p, r) or r[0],
                                   errback=lambda f, p=p: self._fail(site, p.items, f))
                    cleans.append(d)
                self._after_fit(site, pages)
                DeferredList(cleans).addCallback(lambda results: self._fit_done(
                    site, model, pages, [r for _, r in results], reason, started))
            finally:
                if site.held:  # items that came in while the signatures were awaited
                    self._release(site, "after_fit")

        d = DeferredList(waiting) if waiting else succeed(None)
        d.addCallback(fit)
        d.addErrback(lambda f: self._fail(site, [h for h in items if not h.waiter.called], f))

    def _after_fit(self, site: _Site, pages: list[_HeldPage]) -> None:
        """A page released alone before the fit is evidence for its model."""
        if site.alone is not None:
            key, url, sigs = site.alone
            site.alone = None
            if key not in {p.key for p in pages}:
                self._absorb(site, key, url, unpack_signatures(sigs))

    def _fit_done(self, site: _Site, model: SiteModel, pages: list[_HeldPage],
                  results: list[CleanResult | None], reason: str, started: float) -> None:
        """A fit's pages are cleaned (``results``: each page's, None where it
        failed): its line, and its model saved. The items have gone on: a
        fault here is logged and counted, never theirs."""
        try:
            self._log_fit(site, model, pages, results, reason, started)
            self._save_fitted(site, model, results)
        except Exception:
            logger.exception("deboiler: saving the model of %s failed", site.name or "?")
            self._inc("errors")

    def _log_fit(self, site: _Site, model: SiteModel, pages: list[_HeldPage],
                 results: list[CleanResult | None], reason: str, started: float) -> None:
        """The fit's line; ``results``: each page's clean, None where it failed."""
        done = [(p, r) for p, r in zip(pages, results) if r is not None]
        removed = 1 - sum(len(r.html) for _, r in done) / max(1, sum(len(p.html) for p, _ in done))
        early = f"released early: {_RELEASED_EARLY[reason]}; " if reason in _RELEASED_EARLY else ""
        failed = f", {len(pages) - len(done)} failed" if len(done) < len(pages) else ""
        self._site_log("deboiler: fitted %s on %d pages in %.2fs%s: %d boilerplate signatures, "
                       "%.0f%% of HTML removed%s", site.name or "?", len(pages),
                       time.perf_counter() - started,
                       f" ({early}provisional: it learns until it has seen {self.min_pages})"
                       if model.provisional else "", len(model.boilerplate), 100 * removed, failed)

    def _fit_whole(self, site: _Site, pages: list[_HeldPage], reason: str) -> None:
        """Parse, fit and clean a site's held pages in one task (threads, or
        a worker process where some page was not signed ahead)."""
        site.hold.busy = True
        self.busy += 1
        started = time.perf_counter()
        d = self._fitting([(p.url, p.html, p.encoding) for p in pages], self.params,
                          self.mode, self.explain, self.markdown, self.body_only)

        def done(result: tuple[SiteModel, list[CleanResult]]) -> None:
            model, results = result
            self._fitted(site, model, frozenset(p.key for p in pages))
            for p, r in zip(pages, results):
                self._inc("pages_cleaned")
                self._remember(p.key, (r, model))
                self._resolve_page(site, p, (r, model))
            self._after_fit(site, pages)
            self._fit_done(site, model, pages, list(results), reason, started)

        split: list[Failure] = []

        def failed(f: Failure) -> None:
            cleaner = self._cleaner
            in_worker = f.check(WorkerError) is not None
            if len(pages) > 1 and not f.check(WorkersGone) and (
                    not in_worker or (cleaner is not None and cleaner.broken is None)):
                split.append(f)  # which page failed is not known: each is signed alone
            else:
                self._fail(site, items, f)

        def finally_(_: Any) -> None:
            site.hold.busy = False
            self.busy -= 1
            if split:
                self._split_fit(site, pages, reason, split[0])
            elif site.held:  # items that came in while fitting
                self._release(site, "after_fit")

        items = [h for p in pages for h in p.items]
        d.addCallbacks(done, failed)
        d.addErrback(lambda f: self._fail(site, [h for h in items if not h.waiter.called], f))
        d.addBoth(finally_)

    def _split_fit(self, site: _Site, pages: list[_HeldPage], reason: str, failure: Failure) -> None:
        """A fit task failed (in a worker it died on some page: a memory
        limit, an OOM kill; or a page raised, there or in the threads): each
        page is signed in a task of its own, then cleaned alone, so the one
        that fails fails alone (``_without_failed``, ``_fit_signed``) and
        the site is fitted on the others. Whole, it failed every held item."""
        self._inc("fits_split")
        where = "a worker process" if failure.check(WorkerError) else "the threads"
        logger.warning("deboiler: fitting %d pages of %s in %s failed (%s); each page is signed alone, so "
                       "that only the page at fault fails", len(pages), site.name or "?", where,
                       failure.getErrorMessage())
        try:
            for p in pages:
                if p.sigs is None and p.signing is None and p.failed is None:
                    signing = self._sign_held(p, force=True)
                    if signing is not None:
                        signing.addErrback(lambda _: None)  # the page's own failure, kept in it
                    else:
                        self._sign_in_threads(p)
            self._fit_signed(site, pages, reason)
        except Exception:  # held items must never be stranded
            self._fail(site, [h for p in pages for h in p.items if not h.waiter.called], Failure())

    def _sign_in_threads(self, page: _HeldPage) -> None:
        """``_sign_held`` in the threads, for a fit that failed there: the
        page is kept parsed for its clean (``page.parsed``), or fails alone."""
        page.signing = done = Deferred()

        def signed(parsed: Page) -> None:
            page.sigs, page.parsed, page.signing = parsed.signatures, parsed, None
            done.callback(None)

        def unsigned(f: Failure) -> None:
            page.signing, page.failed = None, f
            logger.debug("deboiler: signing %s failed: %s", page.url, f.getErrorMessage())
            done.callback(None)

        self._in_pool(_sign_page, page.html, page.url, page.encoding, self.params).addCallbacks(signed, unsigned)

    def _learn(self, site: _Site) -> None:
        """DEBOILER_LEARN: extend the model with the pages cleaned since, and
        save it. Counting shared signatures of a few pages takes about a
        millisecond, so it runs here, on a copy that is then swapped in."""
        batch, site.learned = site.learned, []
        site.learned_keys = set()
        assert site.model is not None
        site.model = site.model.with_params().update(batch)
        self._inc("sites_updated")
        self._save(site, site.model)

    def _flush_learning(self, site: _Site) -> None:
        """Before a site is forgotten or the crawl ends: what it learned."""
        if site.pending and site.model is not None:
            self._complete(site)
        if len(site.learned) >= 2 and site.model is not None:
            self._learn(site)

    def _save(self, site: _Site, model: SiteModel) -> None:
        """Save the site's model. A store that keeps a better model (its
        file has a finished one, or one of more pages: another crawl's)
        returns None. A failed save is one WARNING a site and cause, without
        a traceback for an OSError (a full disk, an unwritable folder: each
        save of a broad crawl logged 20 lines), and counted. A site whose
        fit emptied many of its pages saves nothing (``_save_fitted``)."""
        if site.unsaved:
            return
        try:
            written = self.store.save(site.name, model)
        except Exception as e:
            self._inc("store_errors")
            self._inc("saves_failed")
            cause = f"{type(e).__name__}: {e.strerror}" if isinstance(e, OSError) and e.strerror else (
                f"{type(e).__name__}: {e}")
            if (site.name, cause) in self._save_failures:
                return
            self._save_failures.add((site.name, cause))
            if not isinstance(e, OSError):  # a bug: its traceback, once
                logger.exception("deboiler: cannot save the signatures of %r", site.name)
                return
            logger.warning("deboiler: cannot save the signatures of %s: %s; it goes on with its model in "
                           "memory (its later failed saves for this cause are counted in deboiler/saves_failed)",
                           site.name or "?", e)
            return
        if written is None and isinstance(self.store, SignatureStore):
            self._inc("saves_kept_better")
            self._site_log("deboiler: %s: its signature file holds a better model (another crawl's: finished, "
                           "or fitted on more pages), which stays; this one (%d pages%s) is not saved",
                           site.name or "?", model.pages, ", provisional" if model.provisional else "")
            if site.model is model:  # and the site's later pages are cleaned with it
                try:
                    kept = self.store.load(site.name)
                except Exception:  # (it was read a moment ago; a bad file now is the next crawl's)
                    kept = None
                if kept is not None and model_rank(kept) > model_rank(model):
                    if kept.provisional and len(kept.page_keys) >= self.min_pages:
                        kept.provisional = False
                    site.model, site.source = kept, "file"
                    site.pending, site.pending_keys = [], set()

    def _pass_unchanged(self, site: _Site, h: _Held, reason: str) -> None:
        """Release a held item without cleaning it (no model can be had)."""
        if h.waiter.called:
            return
        self.held -= 1
        self._inc("items_unchanged")
        if site.report is not None:
            site.report.add_page("unchanged", len(h.page.html), len(h.page.html), [])
        site.pages += 1
        site.bytes_out += len(h.page.html)
        try:
            ItemAdapter(h.item)[self.status_field] = {
                "status": "unchanged", "site": site.name, "reason": reason}
        except Exception:
            pass
        h.waiter.callback(h.item)

    def _resolve_page(self, site: _Site, page: _HeldPage,
                      cleaned: tuple[CleanResult, SiteModel | None]) -> None:
        shared = sum(1 for h in page.items if not h.waiter.called) - 1
        if shared > 0:  # the page's other items held with it: one clean for all
            self._inc("items_shared_clean", shared)
        for h in page.items:
            self._resolve(site, h, cleaned)

    def _resolve(self, site: _Site, h: _Held, cleaned: tuple[CleanResult, SiteModel | None]) -> None:
        if h.waiter.called:
            return
        self.held -= 1
        try:
            item = self._finish(site, h.item, cleaned, h.page.html, h.page.notes)
        except Exception as e:  # never lose the item
            logger.exception("deboiler: writing %s failed", h.page.url)
            self._inc("errors")
            item = self._unchanged(h.item, "error", f"{type(e).__name__}: {e}")
        h.waiter.callback(item)

    def _fail(self, site: _Site, held: list[_Held], failure: Any) -> None:
        urls = list(dict.fromkeys(h.page.url for h in held)) or ["?"]
        pages = urls[0] if len(urls) == 1 else f"{len(urls)} pages of {site.name or '?'} (the first: {urls[0]})"
        # A worker's error carries its own message; anything else is a bug here: its traceback.
        why = (f"{failure.type.__name__}: {failure.getErrorMessage()}" if failure.check(WorkerError)
               else failure.getTraceback())
        logger.error("deboiler: fitting or cleaning %s failed; %d item(s) go on unchanged: %s", pages, len(held), why)
        self._inc("errors")
        for h in held:
            if not h.waiter.called:
                self.held -= 1
                h.waiter.callback(self._unchanged(
                    h.item, "error", f"{failure.type.__name__}: {failure.getErrorMessage()}", site=site.name))

    # -- Redis mode: the cluster's pools and models -----------------------

    def _release_site(self, site: _Site, reason: str) -> None:
        """Release a site the policy let go: a pooled one is fitted on the
        cluster's pool (what every worker sees), others on what they hold."""
        if site.hold.pooled and self.redis_up and site.model is None and reason != "shutdown":
            self._fit_pool(site, reason)
        else:
            self._release(site, reason)

    def _in_redis(self, f: Any, *args: Any) -> Deferred:
        """``f(*args)`` in the Redis threads: never on the reactor thread."""
        from twisted.internet import reactor

        if self._redis_threads is None:  # closed: fail like an unreachable Redis
            return fail(ConnectionError("the pipeline is closed"))
        return deferToThreadPool(reactor, self._redis_threads, f, *args)

    def _redis_connect(self) -> Deferred:
        assert self.redis is not None
        redis = self.redis

        def up(_: Any) -> None:
            again = self._redis_retry_at > 0
            self.redis_up = True
            self._redis_warned = False
            self._inc("redis/connects")
            logger.info("deboiler: %s site models in Redis at %s (keys %s*)",
                        "pooling again" if again else "pooling", redis.where(), redis.base)
            if redis.rejoined:
                self._inc("redis/wiped")
                logger.warning("deboiler: Redis at %s was wiped while it could not be reached "
                               "(restarted without persistence?): the cluster's pools and models "
                               "are gone; new sites pool again", redis.where())

        d = self._in_redis(redis.connect)
        d.addCallbacks(up, self._redis_failed)
        return d

    def _redis_failed(self, failure: Any) -> None:
        """A Redis call failed: every pooled site falls back to the local
        rules at once (a site holding enough pages is fitted on them now);
        new sites run locally until a retry connects. One warning an outage."""
        self._redis_retry_at = time.monotonic() + self._redis_retry
        self._inc("redis/errors")
        was_up, self.redis_up = self.redis_up, False
        held = [s for s in self.sites.values() if s.hold.pooled or s.lookup]
        self._go_local(held)
        if self._redis_warned:
            return
        self._redis_warned = True
        assert self.redis is not None
        logger.warning("deboiler: Redis at %s %s (%s: %s): %d sites with held items fall back to "
                       "local rules; new sites retry Redis every %gs", self.redis.where(),
                       "failed" if was_up else "cannot be reached", failure.type.__name__,
                       failure.getErrorMessage()[:200], len([s for s in held if s.held]), self._redis_retry)
        self._inc("redis/outages")

    def _go_local(self, sites: list[_Site]) -> None:
        for site in sites:
            if site.lookup:
                site.lookup = False
                if site.model is None:
                    self._load(site)
            site.hold.pooled = False
            self._inc("redis/sites_local")
            if site.model is not None:
                self._release(site, "model")
                continue
            reason = self.policy.at_arrival(site.hold)
            if reason is not None:
                self._release(site, reason)

    def _redis_lookup(self, site: _Site) -> None:
        """A new site: its published model, then its signature file, else
        its pages go to the pool. Items wait for the answer."""
        assert self.redis is not None
        site.lookup = True
        site.hold.pooled = True

        def found(model: SiteModel | None) -> None:
            if not site.lookup:  # Redis failed meanwhile: the site went local
                return
            site.lookup = False
            self._count_refused()
            if model is not None:
                self._adopt(site, model, "lookup")
                return
            self._load(site)  # pages were pooled as they came: nothing else to do
            if site.model is not None:
                site.hold.pooled = False
                if not site.model.provisional:
                    self._publish_file(site, site.model)
                self._release(site, "model")

        d = self._in_redis(self.redis.model, site.name)
        d.addCallbacks(found, self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _publish_file(self, site: _Site, model: SiteModel) -> None:
        """A finished model from this worker's signature file, which Redis
        lacks, becomes the cluster's: a worker without the file (a new
        machine) would pool and fit the site again. (A provisional one goes
        on learning here; Redis ranks models by their pages.)"""
        assert self.redis is not None

        def done(reply: tuple[bool, SiteModel]) -> None:
            if reply[0]:
                self._inc("redis/files_published")

        d = self._in_redis(self.redis.publish, site.name, model)
        d.addCallbacks(done, self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _pool_page(self, site: _Site, page: _HeldPage) -> None:
        """Sign a held page (in a worker process that keeps it parsed, else
        in the cleaning threads) and offer its signatures to the site's
        pool (in the Redis threads)."""
        assert self.redis is not None
        redis = self.redis
        url = page.url.split("#", 1)[0]
        d = self._sign_held(page)
        if d is not None:
            d.addCallback(lambda sigs: self._in_redis(redis.offer, site.name, url, sigs))
        else:
            d = self._in_pool(_sign_page, page.html, page.url, page.encoding, self.params)

            def signed(parsed: Page) -> Deferred:
                if site.held.get(page.key) is page:
                    page.parsed = parsed  # still held: cleaned from this parse
                return self._in_redis(redis.offer, site.name, url, parsed.signatures)

            d.addCallback(signed)

        def failed(f: Any) -> None:
            if f.check(ConnectionError, TimeoutError, OSError) or _is_redis_error(f.value):
                self._redis_failed(f)
            else:  # signing failed: the page is cleaned (or not) when released
                logger.warning("deboiler: cannot pool %s: %s: %s", url, f.type.__name__, f.getErrorMessage())
                self._inc("redis/pool_errors")

        d.addCallbacks(lambda offer: self._offered(site, offer), failed)
        d.addErrback(self._pipeline_error)

    def _offer(self, site: _Site, url: str, sigs: frozenset[str]) -> None:
        """A page cleaned with a provisional model of the cluster: its
        signatures join the pool, which completes the model once full."""
        assert self.redis is not None
        d = self._in_redis(self.redis.offer, site.name, url.split("#", 1)[0], sigs)
        d.addCallbacks(lambda offer: self._offered(site, offer), self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _offered(self, site: _Site, offer: Any) -> None:
        self._count_refused()
        if offer.status == "added":
            self._inc("redis/pages_pooled")
        if not site.hold.pooled or (site.model is not None and not site.model.provisional):
            return
        if site.hold.busy:
            # Our own fit of the pool is running and may have published the
            # model this offer carries: its result (the model that stays) is
            # adopted when it comes, and said to be fitted here, not taken.
            return
        mine = model_rank(site.model) if site.model is not None else -1
        if offer.model is not None and model_rank(offer.model) > mine:
            self._adopt(site, offer.model, "pool_model")
            return
        reason = self.policy.at_pool(site.hold, offer.size, time.monotonic())
        if reason is not None:
            self._fit_pool(site, reason)

    def _fit_pool(self, site: _Site, reason: str) -> None:
        """Fit the site's pool (any worker gets the same model), publish it
        unless a model as good is there, and release the held items with the
        model that stays. A pool too small or unreachable: the local rules."""
        assert self.redis is not None
        if site.hold.busy:
            return
        site.hold.busy = True
        self.busy += 1
        started = time.perf_counter()

        def done(result: tuple[SiteModel | None, int]) -> None:
            site.hold.busy = False
            self.busy -= 1
            self._count_refused()
            model, pooled = result
            if model is None:  # under two usable pages in the pool, or a refused model
                if reason in ("pool_full", "pool_model"):
                    self._go_local([site])  # nothing to use from Redis: the local rules
                else:
                    # Released early (budget, timeout, closing) before the
                    # pool could be fitted (its pages' offers may be on their
                    # way): fitted here on what it holds, provisionally, it
                    # keeps pooling and takes the cluster's model when one is
                    # fitted. Made local, it kept a model of its own for good.
                    self._release(site, reason)
                return
            if site.model is not None and model_rank(model) <= model_rank(site.model):
                self._release(site, reason)  # nothing better than what it has
                return
            self._site_log("deboiler: %s: the cluster's model (%d pooled pages, %d boilerplate signatures%s) "
                           "in %.2fs", site.name or "?", model.pages, len(model.boilerplate),
                           ", provisional" if model.provisional else "", time.perf_counter() - started)
            self._adopt(site, model, reason, logged=True)

        def failed(f: Any) -> None:
            site.hold.busy = False
            self.busy -= 1
            self._redis_failed(f)
            if site.held and site.model is None:
                self._release(site, reason)

        d = self._in_redis(self.redis.fit_pool, site.name)
        d.addCallbacks(done, failed)
        d.addErrback(self._pipeline_error)

    def _adopt(self, site: _Site, model: SiteModel, reason: str, logged: bool = False) -> None:
        """The site's model came from Redis: use it, save it in the file
        store too (what a worker without Redis reads), release held items.
        ``logged``: the caller said so already (it fitted the pool)."""
        if model.provisional and len(model.page_keys) >= self.min_pages:
            model.provisional = False
        if not logged:  # another worker's: one line, as a model from a file gets
            self._site_log("deboiler: %s uses the cluster's model from Redis (%d pages, %d boilerplate "
                           "signatures%s)", site.name or "?", model.pages, len(model.boilerplate),
                           ", provisional" if model.provisional else "")
        if not model.provisional and model.pages < self.min_pages:
            # Finished on fewer pages than this worker would fit on: another
            # worker (or an earlier crawl) runs with a smaller setting, and its
            # models are the cluster's. Said once: every site shows it.
            self._inc("redis/models_under_min_pages")
            if not self._warned_min_pages:
                self._warned_min_pages = True
                logger.warning("deboiler: the cluster's model of %s was fitted on %d pages, fewer than this "
                               "worker's DEBOILER_MIN_PAGES (%d): another worker, or an earlier crawl, runs "
                               "with a smaller one, and the cluster uses its models; give every worker the "
                               "same (stat deboiler/redis/models_under_min_pages counts such sites)",
                               site.name or "?", model.pages, self.min_pages)
        site.model, site.source = model, "redis"
        site.hold.pooled = model.provisional and self.redis_up
        self._inc("redis/models_provisional" if model.provisional else "redis/models")
        self._save(site, model)
        if site.held:
            self._release(site, reason)

    def _redis_tick(self) -> None:
        """Each watchdog tick: retry an unreachable Redis; else look at the
        pools of sites that hold items (growth, a model published by another
        worker) and whether Redis was wiped. One job at a time."""
        assert self.redis is not None
        if self._redis_polling:
            return
        if not self.redis_up:
            if time.monotonic() >= self._redis_retry_at:
                self._redis_polling = True
                self._redis_retry_at = time.monotonic() + self._redis_retry
                d = self._redis_connect()
                d.addBoth(self._polled)
            return
        sites = [s.name for s in self.sites.values()
                 if s.hold.pooled and not s.lookup and (s.held or (s.model is not None and s.model.provisional))]
        redis = self.redis

        def poll() -> tuple[bool, dict[str, tuple[int, int]]]:
            return redis.wiped(), redis.sizes(sites) if sites else {}

        self._redis_polling = True
        d = self._in_redis(poll)
        d.addCallbacks(self._polled_sites, self._redis_failed)
        d.addErrback(self._pipeline_error)
        d.addBoth(self._polled)

    def _polled(self, _: Any) -> None:
        self._redis_polling = False

    def _polled_sites(self, result: tuple[bool, dict[str, tuple[int, int]]]) -> None:
        wiped, sizes = result
        if wiped:
            self._inc("redis/wiped")
            pooled = [s for s in self.sites.values() if s.hold.pooled and s.held]
            logger.warning("deboiler: Redis at %s was wiped (restarted without persistence, flushed or "
                           "evicted): the pools and models of the cluster are gone; %d sites with held "
                           "items fall back to local rules, new sites pool again",
                           self.redis.where() if self.redis else "?", len(pooled))
            self._go_local(pooled)
            return
        now = time.monotonic()
        for name, (size, rank) in sizes.items():
            site = self.sites.get(name)
            if site is None or not site.hold.pooled or site.hold.busy:
                continue
            mine = model_rank(site.model) if site.model is not None else -1
            if rank > mine and (rank >= FINAL_RANK or site.model is not None):
                # A better model was published (another worker filled the pool).
                self._fit_pool(site, "pool_model")
                continue
            reason = self.policy.at_pool(site.hold, size, now)
            if reason is not None:
                self._fit_pool(site, reason)

    def _count_refused(self) -> None:
        """Pool entries and models refused since last asked: a stat."""
        if self.redis is not None and self.redis.refused != self._redis_refused:
            self._inc("redis/refused", self.redis.refused - self._redis_refused)
            self._redis_refused = self.redis.refused

    def _pipeline_error(self, failure: Any) -> None:
        logger.error("deboiler: error in the Redis glue: %s", failure.getTraceback())
        self._inc("errors")

    # -- watchdog --------------------------------------------------------

    def _tick(self) -> None:
        try:
            if self._cleaner is not None:
                self._check_workers()
            if self.redis is not None:
                self._redis_tick()
            holds = [s.hold for s in self.sites.values() if s.held] if self.held else []
            state = crawl_state(self.crawler, self.held) if holds else None
            for hold, reason in self.policy.at_tick(holds, state, bool(self.busy), time.monotonic()):
                self._release_site(self.sites[hold.name], reason)
        except Exception:  # the watchdog must keep running, and never strand items
            logger.exception("deboiler: watchdog error; releasing held items")
            self._inc("errors")
            self._release_all("watchdog_error")

    def _check_workers(self) -> None:
        """A worker process that answers nothing for DEBOILER_WORKER_TIMEOUT
        seconds (a closing crawl: at most 10) while it has pages is killed:
        the page it was on passes with status error, the others go to its
        replacement. A stopped or hung worker stalled the crawl for good."""
        cleaner = self._cleaner
        assert cleaner is not None
        if cleaner.pending:
            timeout = self.worker_timeout
            if timeout > _CLOSING_WORKER_TIMEOUT and crawl_state(self.crawler, self.held).closing:
                timeout = _CLOSING_WORKER_TIMEOUT
            cleaner.kill_stalled(timeout)
        if cleaner.deaths:
            self.stats.set_value("deboiler/worker_restarts", cleaner.deaths)

    def _release_all(self, reason: str) -> None:
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
            self._release_all("shutdown")
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
                self._release_all("shutdown")
            idle = not self._inflight and not self.busy and not scraper_busy(self.crawler)
            now = time.monotonic()
            cleaner = self._cleaner
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
                reactor.callLater(0.02, check)

        check()
        return done

    def _spider_closed(self, spider: Spider) -> None:
        from twisted.internet import reactor

        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for trigger in (self._shutdown_trigger, self._pool_trigger):
            if trigger is not None:
                try:
                    reactor.removeSystemEventTrigger(trigger)
                except (ValueError, KeyError):
                    pass
        self._shutdown_trigger = self._pool_trigger = None
        # Anything still held (a close that skipped our watchdog) goes now.
        for site in self.sites.values():
            for p in site.held.values():
                for h in p.items:
                    self._pass_unchanged(site, h, "spider closed")
            site.held = {}
            site.held_items = site.hold.pages = 0
            self._flush_learning(site)
        self._stop_pool()
        if self.report_path:
            try:
                self._write_report()
            except Exception:
                logger.exception("deboiler: cannot write the report %s", self.report_path)
                self._inc("errors")
        # One line per site for the largest 20 sites in memory, then the whole crawl.
        largest = sorted((s for s in self.sites.values() if s.pages), key=lambda s: (-s.pages, s.name))
        for site in largest[:20]:
            model = site.model
            what = "no model" if model is None else f"model {site.source}" + (
                f", provisional ({len(model.page_keys)} pages)" if model.provisional else "")
            # Boilerplate mode without a model removes nothing; its clean_html
            # differs from the page only as serialized (the doctype, say).
            removed = "nothing removed" if model is None and self.mode != "content" else (
                f"{100 * (1 - site.bytes_out / max(1, site.bytes_in)):.0f}% of HTML removed")
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

    # -- report ----------------------------------------------------------

    def _write_report(self) -> None:
        """DEBOILER_REPORT: the report, and beside it marked-up views of the
        pages kept as samples."""
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
        write_report(self.report_path, list(self.reports.values()), model_of, mode=self.mode,
                     limits=self.limits, scheme=self.params.scheme, stats=stats)
        logger.info("deboiler: report written to %s", self.report_path)
