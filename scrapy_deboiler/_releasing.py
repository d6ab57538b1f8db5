"""A held site let go: its pages cleaned with its model, each alone, or fitted
on."""

from __future__ import annotations

import logging

from ._holding import Release
from ._model import FIT_MIN_PAGES
from ._pipeline_state import PipelineBase, _HeldPage, _Site

__all__ = ["Releasing"]

logger = logging.getLogger(__name__)

#: Releases that come before a site could have all its pages, and what the
#: status reason says of them.
_RELEASED_EARLY = {Release.BUDGET: "held HTML over DEBOILER_MAX_HELD_BYTES",
                   Release.TIMEOUT: "held for DEBOILER_MAX_HOLD_SECONDS",
                   Release.STARVED: "Scrapy's scraper slot was full"}


class Releasing(PipelineBase):
    """Lets a held site go: its pages cleaned with its model, each alone, or
    fitted on."""

    def _release(self, site: _Site, reason: Release) -> None:
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

    def _release_held(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None:
        self._inc(f"released/{Release(reason).value}", sum(len(p.items) for p in pages))
        self._clean_or_fit(site, pages, reason)

    def _clean_or_fit(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None:
        """Released pages: cleaned with the site's model, each alone (too few
        for one), or fitted on. Pages that failed in a worker fail alone first."""
        pages = self._without_failed(site, pages)
        if not pages:
            return
        alone = site.model is None and len(pages) < FIT_MIN_PAGES
        remember = alone and not site.hold.pooled and reason != Release.SHUTDOWN
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

    def _alone_reason(self, site: _Site, n: int, reason: Release) -> str:
        """Why a site's released pages have no model: the site has too few,
        or it was released before it held enough at once (``n`` counts the
        pages released now, not the site's)."""
        earlier = site.alone is not None or site.pages > 0 or site.inflight > 0
        if reason not in _RELEASED_EARLY and not earlier:
            return f"site has {n} page(s); fitting needs {FIT_MIN_PAGES}"
        why = _RELEASED_EARLY.get(reason, reason)
        return f"released with {n} page(s) held ({why}); fitting needs {FIT_MIN_PAGES}"
