"""Items arriving: read, checked, keyed by page and site, then cleaned or held."""

from __future__ import annotations

import logging
import time
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from twisted.internet.defer import Deferred

from ._holding import Release
from ._limits import Skip, check_page
from ._pagekey import html_digest, page_key
from ._pipeline_state import PipelineBase, _Held, _HeldPage, _Site
from ._urls import site_of_url

__all__ = ["Intake"]

logger = logging.getLogger(__name__)

#: Pages larger than this are not kept for the report's views.
_VIEW_MAX_CHARS = 1024 * 1024


class Intake(PipelineBase):
    """Reads each item, checks its page against the limits, keys it by page
    and site, and cleans it at once or holds it for its site's fit."""

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
            named = adapter.get(self.site_field) if self.site_field and self.site_field in adapter else None
        except Exception as e:  # not an item ItemAdapter knows
            return self._unchanged(item, "error", f"cannot read item: {type(e).__name__}: {e}")
        if not isinstance(html, (str, bytes)):
            not_html, ctype = self.handoff.not_html(item)
            if not_html:  # the middleware saw its response
                self._inc("skipped/not-html")
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
        origin = self.handoff.origin(html)
        key, url = self._page_key(origin.url if origin is not None else url, html)
        # The spider may name the site (DEBOILER_SITE_FIELD): a host's pages
        # in two languages share a layout, not its words, and a model fitted
        # on one language's pages leaves the other's template in place.
        name = named.strip() if isinstance(named, str) and named.strip() else site_of_url(url)
        site = await self._site_for(name)
        encoding = encoding if isinstance(encoding, str) else None
        # The middleware's notes on decoding the response (a wrong declared encoding).
        notes = list(origin.notes) if origin is not None else []
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

    async def _site_for(self, name: str) -> _Site:
        """The site named ``name``, new or known, once its signature file is
        read (a new site's first items wait for the read, off the reactor
        thread; the site cannot be forgotten meanwhile)."""
        while True:
            site = self.sites.get(name)
            if site is None:
                site = self._new_site(name)
            else:
                self.sites.move_to_end(name)
            if site.loading is None:
                return site
            waiter: Deferred = Deferred()
            site.loading.append(waiter)
            site.waiting += 1
            try:
                await maybe_deferred_to_future(waiter)
            finally:
                site.waiting -= 1
            if self.sites.get(name) is site:
                return site

    def _page_key(self, url: str, html: str | bytes) -> tuple[str, str]:
        """A page's identity (its URL without fragment and a digest of its
        content) and its URL. The items of one response share one HTML
        object: its digest is computed once, and they all take the URL the
        middleware fetched it from (the caller's ``url`` then), else the
        first of them's (a few recent objects are remembered: by the HTML
        itself, whose hash the string keeps, and a hit is the very object)."""
        hit = self._digests.get(html)
        if hit is not None and hit[0] is html:
            digest, url = hit[1], hit[2]
        else:
            digest = html_digest(html)
            self._digests[html] = (html, digest, url)
            if len(self._digests) > 16:
                self._digests.popitem(last=False)
        return page_key(url, digest).hex(), url

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
            self._release_site(self.sites[hold.name], Release.BUDGET)

    def _skipped(self, item: Any, url: str, skip: Skip) -> Any:
        """A page that is not parsed (too large, not HTML) goes on at once,
        without the HTML unless DEBOILER_KEEP_HTML asks for it."""
        self._site_log("deboiler: %s not cleaned: %s", url or "an item", skip)
        self._inc(f"skipped/{skip.kind}")
        self._unchanged(item, "skipped", skip.reason, kind=skip.kind)
        if not self.keep_html:
            self._drop_html(ItemAdapter(item))
        return item
