"""The Scrapy item pipeline: hold each site's items until its model can be
fitted, then clean them (and every later item of the site) in flight."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy.utils.project import data_path
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

from ._clean import CleanResult, Page, clean_page
from ._content import default_model
from ._engine import crawl_state
from ._limits import Limits, Skip, check_page
from ._model import FitParams, SiteModel
from ._report import SiteReport, write_report
from ._store import SignatureFileError
from ._urls import site_of_url

__all__ = ["DeboilerPipeline"]

logger = logging.getLogger(__name__)

#: Defaults of the DEBOILER_* settings (README, "Scrapy settings").
DEFAULTS: dict[str, Any] = {
    "DEBOILER_ENABLED": True,
    "DEBOILER_MIN_PAGES": 20,
    "DEBOILER_URL_FIELD": "url",
    "DEBOILER_HTML_FIELD": "html",
    "DEBOILER_ENCODING_FIELD": "encoding",
    "DEBOILER_TEXT_FIELD": "clean_text",
    "DEBOILER_CLEAN_HTML_FIELD": "clean_html",
    "DEBOILER_STATUS_FIELD": "deboiler",
    "DEBOILER_KEEP_HTML": False,
    "DEBOILER_SIGNATURES_DIR": "deboiler",
    "DEBOILER_STORE": "scrapy_deboiler.SignatureStore",
    "DEBOILER_LEARN": False,
    "DEBOILER_WATCHDOG_INTERVAL": 0.5,
    "DEBOILER_INLINE_MAX_BYTES": 262_144,
    "DEBOILER_MODE": "content",
    "DEBOILER_COMMENTS_FIELD": None,
    "DEBOILER_MAX_PAGE_BYTES": Limits.max_bytes,
    "DEBOILER_MAX_PAGE_ELEMENTS": Limits.max_elements,
    "DEBOILER_MAX_HELD_BYTES": 128 * 1024 * 1024,
    "DEBOILER_MAX_SITES": 10_000,
    "DEBOILER_REPORT": None,
    "DEBOILER_REPORT_VIEWS": 3,
    "DEBOILER_REPORT_VIEW_SITES": 20,
}
#: Pages larger than this are not kept for the report's views.
_VIEW_MAX_CHARS = 1024 * 1024


@dataclass
class _Held:
    item: Any
    url: str
    html: str | bytes
    encoding: str | None
    waiter: Deferred


@dataclass
class _Site:
    name: str
    model: SiteModel | None = None
    source: str | None = None  # "fitted" or "file"
    checked_store: bool = False
    held: list[_Held] = field(default_factory=list)
    busy: bool = False  # the first fit is running: items wait for it
    reason: str = ""  # why the site has no model
    learned: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    first_held: int = 0  # arrival number of its oldest held item
    held_bytes: int = 0  # of items waiting for the threshold (not for a fit in progress)
    report: SiteReport | None = None
    pages: int = 0
    bytes_in: int = 0
    bytes_out: int = 0


def _clean_one(html: str | bytes, url: str, encoding: str | None, model: SiteModel | None,
               params: FitParams, learn: bool, mode: str, explain: bool = False,
               ) -> tuple[CleanResult, frozenset[str] | None]:
    """One page of a site with a model (or none, in content mode). Pages
    reach it checked against the limits already (``_process``)."""
    page = Page(html, url, encoding, params.scheme, limits=None)
    sigs = page.signatures if learn else None
    return clean_page(page, model, mode=mode, explain=explain), sigs


def _fit_site(pages: list[tuple[str, str | bytes, str | None]], params: FitParams,
              mode: str, explain: bool = False) -> tuple[SiteModel, list[CleanResult]]:
    """Runs in a worker thread: fit a site's model and clean its pages,
    parsing each page once (checked against the limits already)."""
    parsed = [Page(html, url, enc, params.scheme, limits=None) for url, html, enc in pages]
    model = SiteModel.fit(parsed, params)
    return model, [clean_page(p, model, mode=mode, explain=explain) for p in parsed]


class DeboilerPipeline:
    """Adds ``clean_text`` and ``clean_html`` to items, learning each site's
    boilerplate from its first ``DEBOILER_MIN_PAGES`` pages.

    Items of a site without a model are held (their pipeline chain waits)
    until the site has enough pages, then its model is fitted in a worker
    thread and saved, and the held items go on cleaned. A watchdog releases
    held items when the crawl would otherwise stall or end with them inside
    (see docs/scrapy-engine.md): every item leaves.
    """

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        if not s.getbool("DEBOILER_ENABLED", DEFAULTS["DEBOILER_ENABLED"]):
            raise NotConfigured("DEBOILER_ENABLED is off")

        def get(name: str) -> Any:
            return s.get(name, DEFAULTS[name])

        self.crawler = crawler
        self.stats = crawler.stats
        self.min_pages = max(2, s.getint("DEBOILER_MIN_PAGES", DEFAULTS["DEBOILER_MIN_PAGES"]))
        self.url_field = get("DEBOILER_URL_FIELD")
        self.html_field = get("DEBOILER_HTML_FIELD")
        self.encoding_field = get("DEBOILER_ENCODING_FIELD")
        self.text_field = get("DEBOILER_TEXT_FIELD")
        self.clean_html_field = get("DEBOILER_CLEAN_HTML_FIELD")
        self.status_field = get("DEBOILER_STATUS_FIELD")
        self.comments_field = get("DEBOILER_COMMENTS_FIELD")
        self.keep_html = s.getbool("DEBOILER_KEEP_HTML", DEFAULTS["DEBOILER_KEEP_HTML"])
        self.mode = get("DEBOILER_MODE")
        if self.mode not in ("boilerplate", "content"):
            raise ValueError(f"DEBOILER_MODE must be 'boilerplate' or 'content', not {self.mode!r}")
        if self.mode == "content":
            # A missing or broken content model (ContentModelError) stops the
            # crawl as it opens, before the spider runs, instead of marking
            # every item ``error``.
            default_model()
        self.learn = s.getbool("DEBOILER_LEARN", DEFAULTS["DEBOILER_LEARN"])
        self.inline_max = s.getint("DEBOILER_INLINE_MAX_BYTES", DEFAULTS["DEBOILER_INLINE_MAX_BYTES"])
        self.interval = s.getfloat("DEBOILER_WATCHDOG_INTERVAL", DEFAULTS["DEBOILER_WATCHDOG_INTERVAL"])
        self.params = FitParams()
        self.limits = Limits(
            max_bytes=s.getint("DEBOILER_MAX_PAGE_BYTES", DEFAULTS["DEBOILER_MAX_PAGE_BYTES"]),
            max_elements=s.getint("DEBOILER_MAX_PAGE_ELEMENTS", DEFAULTS["DEBOILER_MAX_PAGE_ELEMENTS"]))
        # Held items keep their responses in Scrapy's scraper slot; a full slot
        # stops all downloads until the watchdog notices. Releasing the oldest
        # sites before half the slot is held avoids those stalls.
        self.max_held_bytes = min(
            s.getint("DEBOILER_MAX_HELD_BYTES", DEFAULTS["DEBOILER_MAX_HELD_BYTES"]),
            s.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE", 5_000_000) // 2)
        self.report_path = get("DEBOILER_REPORT")
        self.explain = bool(self.report_path)
        self.report_views = s.getint("DEBOILER_REPORT_VIEWS", DEFAULTS["DEBOILER_REPORT_VIEWS"])
        self.report_view_sites = s.getint("DEBOILER_REPORT_VIEW_SITES", DEFAULTS["DEBOILER_REPORT_VIEW_SITES"])
        self._viewed_sites = 0
        directory = data_path(get("DEBOILER_SIGNATURES_DIR"), createdir=True)
        self.store = load_object(get("DEBOILER_STORE"))(directory)
        self.directory = directory
        # Least recently used first: idle sites beyond DEBOILER_MAX_SITES are
        # forgotten (their models are in the store) so broad crawls stay flat.
        self.sites: OrderedDict[str, _Site] = OrderedDict()
        self.max_sites = max(1, s.getint("DEBOILER_MAX_SITES", DEFAULTS["DEBOILER_MAX_SITES"]))
        self.reports: dict[str, SiteReport] = {}
        self.held = 0
        self.held_bytes = 0
        self._arrivals = 0
        self.busy = 0
        self._quiet_ticks = 0
        self._loop: Any = None
        self._unwritable: set[type] = set()
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "DeboilerPipeline":
        return cls(crawler)

    # -- stats -----------------------------------------------------------

    def _inc(self, key: str, n: int = 1) -> None:
        self.stats.inc_value(f"deboiler/{key}", n)

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
            encoding = adapter.get(self.encoding_field) if self.encoding_field in adapter else None
        except Exception as e:  # not an item ItemAdapter knows
            return self._unchanged(item, "error", f"cannot read item: {type(e).__name__}: {e}")
        if not isinstance(html, (str, bytes)):
            self._inc("items_without_html")
            return self._unchanged(item, "unchanged", f"no {self.html_field!r} in item")
        url = url if isinstance(url, str) else ""
        skip = check_page(html, self.limits)
        if skip is not None:
            return self._skipped(item, url, skip)
        name = site_of_url(url)
        site = self.sites.get(name)
        if site is None:
            site = self._new_site(name)
        else:
            self.sites.move_to_end(name)
        rep = site.report
        if rep is not None and rep.samples is not None and len(html) <= _VIEW_MAX_CHARS:
            rep.sample(url, html, encoding if isinstance(encoding, str) else None, self.report_views)
        self._inc("bytes_in", len(html))
        site.bytes_in += len(html)
        if site.model is not None:
            return await self._clean_now(site, item, url, html, encoding)
        waiter: Deferred = Deferred()
        if not site.held:
            site.first_held = self._arrivals
        self._arrivals += 1
        site.held.append(_Held(item, url, html, encoding if isinstance(encoding, str) else None, waiter))
        self.held += 1
        if not site.busy:  # waiting for the threshold: what DEBOILER_MAX_HELD_BYTES bounds
            self.held_bytes += len(html)
            site.held_bytes += len(html)
        self._inc("items_held")
        self.stats.max_value("deboiler/max_held", self.held)
        if not site.busy and site.model is None and len(site.held) >= self.min_pages:
            self._release(site, "threshold")
        elif self.held_bytes > self.max_held_bytes:
            try:
                self._over_budget()
            except Exception:  # the item is held already: its waiter answers for it
                logger.exception("deboiler: releasing sites over DEBOILER_MAX_HELD_BYTES failed")
                self._inc("errors")
        self.stats.max_value("deboiler/max_held_bytes", self.held_bytes)
        return await maybe_deferred_to_future(waiter)

    def _over_budget(self) -> None:
        """DEBOILER_MAX_HELD_BYTES: release the sites holding the oldest
        items until what stays held fits the budget (broad crawls meet
        thousands of sites that never reach DEBOILER_MIN_PAGES)."""
        excess = self.held_bytes - self.max_held_bytes
        waiting = [s for s in self.sites.values() if s.held and not s.busy]
        for site in sorted(waiting, key=lambda s: s.first_held):
            if excess <= 0:
                break
            excess -= site.held_bytes
            self._release(site, "budget")

    def _skipped(self, item: Any, url: str, skip: Skip) -> Any:
        """A page that is not parsed (too large, not HTML) goes on at once."""
        logger.info("deboiler: %s not cleaned: %s", url or "an item", skip)
        self._inc(f"skipped/{skip.kind}")
        return self._unchanged(item, "skipped", skip.reason, kind=skip.kind)

    def _new_site(self, name: str) -> _Site:
        site = self.sites[name] = _Site(name)
        self._inc("sites")
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
            if site.held or site.busy:
                continue
            if len(site.learned) >= 2 and site.model is not None:
                self._learn(site)
            self._describe(site)
            del self.sites[name]
            self._inc("sites_evicted")

    def _describe(self, site: _Site) -> None:
        """Copy what the report says of a site's model into its report."""
        rep = site.report
        if rep is not None and site.model is not None:
            rep.model_source, rep.model_pages = site.source, site.model.pages
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
        if model is not None:
            site.model, site.source = model, "file"
            self._inc("sites_reused")
            logger.info("deboiler: %s uses its signature file (%d pages)", site.name or "?", model.pages)

    async def _clean_now(self, site: _Site, item: Any, url: str, html: str | bytes,
                         encoding: Any) -> Any:
        model = site.model
        assert model is not None
        try:
            args = (html, url, encoding if isinstance(encoding, str) else None,
                    model, self.params, self.learn, self.mode, self.explain)
            if len(html) <= self.inline_max:
                # A page costs a few ms: a thread hop and GIL hand-offs cost
                # more crawl throughput than that (benchmarks/bench_crawl.py).
                result, sigs = _clean_one(*args)
            else:
                result, sigs = await maybe_deferred_to_future(deferToThread(_clean_one, *args))
        except Exception as e:
            logger.exception("deboiler: cleaning %s failed", url)
            self._inc("errors")
            return self._unchanged(item, "error", f"{type(e).__name__}: {e}")
        if sigs is not None:
            site.learned.append((url, sigs))
            if len(site.learned) >= self.min_pages:
                self._learn(site)
        return self._finish(site, item, result, len(html))

    def _finish(self, site: _Site, item: Any, result: CleanResult, html_bytes: int) -> Any:
        """Write the clean fields; never lose the item."""
        model = site.model
        status: dict[str, Any] = {"status": "cleaned" if model else "single_page", "site": site.name,
                                  "html_chars": html_bytes, "clean_html_chars": len(result.html)}
        if model is not None:
            status.update(model=site.source, fit_pages=model.pages, removed=result.removed)
        else:
            status["reason"] = site.reason
        if result.notes:
            status["notes"] = result.notes
            for note in result.notes:
                self._inc(f"notes/{note}")
        site.pages += 1
        site.bytes_out += len(result.html)
        fields = {self.text_field: result.text, self.clean_html_field: result.html,
                  self.status_field: status}
        if self.comments_field:
            fields[self.comments_field] = result.comments
        if site.report is not None:
            site.report.add_page(status["status"], html_bytes, len(result.html), result.removed_blocks)
        if not self._write(item, fields):
            return item
        self._inc("items_cleaned" if model else "items_single_page")
        self._inc("bytes_out", len(result.html))
        return item

    def _write(self, item: Any, fields: dict[str, Any]) -> bool:
        adapter = ItemAdapter(item)
        try:
            for key, value in fields.items():
                adapter[key] = value
        except (KeyError, TypeError, AttributeError) as e:
            if type(item) not in self._unwritable:
                self._unwritable.add(type(item))
                logger.warning(
                    "deboiler: cannot add %s to %s items (%s): declare these fields, or rename "
                    "them with DEBOILER_TEXT_FIELD, DEBOILER_CLEAN_HTML_FIELD and "
                    "DEBOILER_STATUS_FIELD; such items pass through unchanged",
                    ", ".join(fields), type(item).__name__, e)
            self._inc("items_unwritable")
            return False
        if not self.keep_html and self.html_field in adapter:
            try:
                del adapter[self.html_field]
            except (KeyError, TypeError, AttributeError, NotImplementedError):
                adapter[self.html_field] = None
        return True

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
        if site.busy or not site.held:
            return
        held, site.held = site.held, []
        self.held_bytes -= site.held_bytes
        site.held_bytes = 0
        try:
            self._release_held(site, held, reason)
        except Exception as e:  # held items must never be stranded
            logger.exception("deboiler: releasing %d items of %r failed", len(held), site.name)
            self._inc("errors")
            for h in held:
                if not h.waiter.called:
                    self.held -= 1
                    h.waiter.callback(self._unchanged(h.item, "error", f"{type(e).__name__}: {e}"))

    def _release_held(self, site: _Site, held: list[_Held], reason: str) -> None:
        self._inc(f"released/{reason}", len(held))
        if site.model is None and len(held) < 2:
            reason = site.reason = f"site has {len(held)} page(s); fitting needs 2"
            if self.mode != "content":
                for h in held:
                    self._pass_unchanged(site, h, reason)
                return
        if site.model is not None or len(held) < 2:
            # Arrived while a fit ran: clean with its model. Or a site too
            # small for one, in content mode: extract each page on its own.
            for h in held:
                d = deferToThread(_clean_one, h.html, h.url, h.encoding, site.model, self.params,
                                  False, self.mode, self.explain)
                d.addCallbacks(lambda r, h=h: self._resolve(site, h, r[0]),
                               errback=lambda f, h=h: self._fail(site, [h], f))
            return
        self._start_fit(site, held)

    def _start_fit(self, site: _Site, held: list[_Held]) -> None:
        site.busy = True
        self.busy += 1
        started = time.perf_counter()
        pages = [(h.url, h.html, h.encoding) for h in held]
        d = deferToThread(_fit_site, pages, self.params, self.mode, self.explain)

        def done(result: tuple[SiteModel, list[CleanResult]]) -> None:
            model, results = result
            site.model, site.source = model, "fitted"
            self._inc("sites_fitted")
            self._save(site, model)
            for h, r in zip(held, results):
                self._resolve(site, h, r)
            removed = 1 - sum(len(r.html) for r in results) / max(1, sum(len(h.html) for h in held))
            logger.info("deboiler: fitted %s on %d pages in %.2fs: %d boilerplate signatures, "
                        "%.0f%% of HTML removed", site.name or "?", len(held),
                        time.perf_counter() - started, len(model.boilerplate), 100 * removed)

        def finally_(_: Any) -> None:
            site.busy = False
            self.busy -= 1
            if site.held:  # items that came in while fitting
                self._release(site, "after_fit")

        d.addCallbacks(done, lambda f: self._fail(site, held, f))
        d.addErrback(lambda f: self._fail(site, [h for h in held if not h.waiter.called], f))
        d.addBoth(finally_)

    def _learn(self, site: _Site) -> None:
        """DEBOILER_LEARN: extend the model with the pages cleaned since, and
        save it. Counting shared signatures of a few pages takes about a
        millisecond, so it runs here, on a copy that is then swapped in."""
        batch, site.learned = site.learned, []
        assert site.model is not None
        site.model = site.model.with_params().update(batch)
        self._inc("sites_updated")
        self._save(site, site.model)

    def _save(self, site: _Site, model: SiteModel) -> None:
        try:
            self.store.save(site.name, model)
        except Exception:
            logger.exception("deboiler: cannot save the signatures of %r", site.name)
            self._inc("store_errors")

    def _pass_unchanged(self, site: _Site, h: _Held, reason: str) -> None:
        """Release a held item without cleaning it (no model can be had)."""
        if h.waiter.called:
            return
        self.held -= 1
        self._inc("items_unchanged")
        if site.report is not None:
            site.report.add_page("unchanged", len(h.html), len(h.html), [])
        site.pages += 1
        site.bytes_out += len(h.html)
        try:
            ItemAdapter(h.item)[self.status_field] = {
                "status": "unchanged", "site": site.name, "reason": reason}
        except Exception:
            pass
        h.waiter.callback(h.item)

    def _resolve(self, site: _Site, h: _Held, result: CleanResult) -> None:
        if h.waiter.called:
            return
        self.held -= 1
        try:
            item = self._finish(site, h.item, result, len(h.html))
        except Exception as e:  # never lose the item
            logger.exception("deboiler: writing %s failed", h.url)
            self._inc("errors")
            item = self._unchanged(h.item, "error", f"{type(e).__name__}: {e}")
        h.waiter.callback(item)

    def _fail(self, site: _Site, held: list[_Held], failure: Any) -> None:
        logger.error("deboiler: fitting or cleaning failed; %d items go on unchanged: %s",
                     len(held), failure.getTraceback())
        self._inc("errors")
        for h in held:
            if not h.waiter.called:
                self.held -= 1
                h.waiter.callback(self._unchanged(
                    h.item, "error", f"{failure.type.__name__}: {failure.getErrorMessage()}"))

    # -- watchdog --------------------------------------------------------

    def _spider_opened(self, spider: Spider) -> None:
        sweep = getattr(self.store, "sweep", None)
        if sweep is not None:
            try:
                sweep()
            except Exception:
                logger.exception("deboiler: cannot sweep %s", self.directory)
        self._loop = create_looping_call(self._tick)
        self._loop.start(self.interval, now=False)

    def _tick(self) -> None:
        try:
            if not self.held:
                self._quiet_ticks = 0
                return
            state = crawl_state(self.crawler, self.held)
            if state.closing:
                reason = "closing"
            elif state.starved and not self.busy:
                reason = "starved"
            elif state.quiet and not self.busy:
                self._quiet_ticks += 1
                if self._quiet_ticks < 2:
                    return
                reason = "quiet"
            else:
                self._quiet_ticks = 0
                return
            self._quiet_ticks = 0
            for site in list(self.sites.values()):
                self._release(site, reason)
        except Exception:  # the watchdog must keep running, and never strand items
            logger.exception("deboiler: watchdog error; releasing held items")
            self._inc("errors")
            for site in list(self.sites.values()):
                self._release(site, "watchdog_error")

    def _spider_closed(self, spider: Spider) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        # Anything still held (a close that skipped our watchdog) goes now.
        for site in self.sites.values():
            for h in site.held:
                self._pass_unchanged(site, h, "spider closed")
            site.held = []
            if len(site.learned) >= 2 and site.model is not None:
                self._learn(site)
        if self.report_path:
            try:
                self._write_report()
            except Exception:
                logger.exception("deboiler: cannot write the report %s", self.report_path)
                self._inc("errors")
        # One line per site for the largest 20 sites in memory, then the whole crawl.
        largest = sorted((s for s in self.sites.values() if s.pages), key=lambda s: (-s.pages, s.name))
        for site in largest[:20]:
            logger.info("deboiler: %s: %d pages, %s, %.0f%% of HTML removed", site.name or "?",
                        site.pages, f"model {site.source}" if site.model else "no model",
                        100 * (1 - site.bytes_out / max(1, site.bytes_in)))
        get = self.stats.get_value
        logger.info("deboiler: %d sites, %d items: %d cleaned, %d single pages, %d unchanged, "
                    "%d skipped, %d errors", get("deboiler/sites", 0), get("deboiler/items_seen", 0),
                    get("deboiler/items_cleaned", 0), get("deboiler/items_single_page", 0),
                    get("deboiler/items_unchanged", 0), get("deboiler/items_skipped", 0),
                    get("deboiler/items_error", 0))

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
