"""A page cleaned with its site's model (or none): once per distinct page, its
result shared by its items."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, succeed

from ._clean import CleanResult, Page
from ._model import SiteModel
from ._pipeline_state import PipelineBase, _Site
from ._provisional import wants_pages
from ._workplace import CleanJob

__all__ = ["Cleaning"]

logger = logging.getLogger(__name__)

#: Clean results kept for items of the same page that come later (a
#: response yielding more items than CONCURRENT_ITEMS), by count and size.
_RESULTS_KEPT = 64
_RESULTS_MAX_CHARS = 32 * 1024 * 1024


class Cleaning(PipelineBase):
    """Cleans each distinct page once; its items share the result."""

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
        want_sigs = sign if model is None else wants_pages(model, self.learn) and not fitted_on
        job = self.work.clean(CleanJob(html, url, encoding, model, self.params, want_sigs, self.options), parsed,
                              ref=key if kept else None)

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
