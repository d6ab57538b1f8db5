"""A site's held pages fitted on: whole in one task, or from the signatures
workers sent as the pages were held; a failed fit split page by page."""

from __future__ import annotations

import logging
import time
from typing import Any

from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.python.failure import Failure

from ._clean import CleanResult, Page, empties_many
from ._executor import WorkerError, WorkersGone
from ._fit_clean import learn_pages
from ._holding import Release
from ._model import SiteModel
from ._pipeline_state import PipelineBase, _HeldPage, _Site
from ._redis import unpack_signatures
from ._releasing import _RELEASED_EARLY
from ._provisional import fitted_is_provisional, remembers
from ._workplace import sign_with_summary

__all__ = ["Fitting"]

logger = logging.getLogger(__name__)


class Fitting(PipelineBase):
    """Fits a site on its held pages and cleans them; saves the model."""

    def _fitted(self, site: _Site, model: SiteModel, keys: frozenset[str]) -> None:
        """A model fitted here on the pages ``keys`` becomes the site's:
        provisional when they are fewer than DEBOILER_MIN_PAGES, or when the
        site is pooled (the cluster's model is to replace it). It keeps the
        keys of its pages while provisional or learning (``remembers``). It
        is saved once those pages are cleaned (``_save_fitted``)."""
        model.provisional = fitted_is_provisional(len(keys), self.min_pages, site.hold.pooled and self.redis_up)
        if remembers(model, self.learn):
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
        cleaner = self.work.cleaner
        if cleaner is None or cleaner.broken is not None or (len(page.html) <= self.work.inline_max and not force):
            return None
        done: Deferred[None] = Deferred()  # fires once ``page.sigs`` is known or cannot be
        page.signing = done

        def signed(answer: tuple[frozenset[str], dict | None]) -> tuple[frozenset[str], dict | None]:
            (page.sigs, page.meta), page.signing = answer, None
            self._inc("pages_signed")
            done.callback(None)
            return answer

        def unsigned(f: Failure) -> Failure:
            page.signing = None
            if f.check(WorkerError) and not f.check(WorkersGone):
                page.failed = f  # it fails alone (``_without_failed``)
            # (else the workers were given up: its fit parses it in the threads)
            logger.debug("deboiler: signing %s in a worker failed: %s", page.url, f.getErrorMessage())
            done.callback(None)
            return f

        return cleaner.sign(page.key, page.html, page.url, page.encoding, self.params,
                            meta=self.metadata).addCallbacks(signed, unsigned)

    def _start_fit(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None:
        cleaner = self.work.cleaner
        if all(p.sigs is not None or p.signing is not None for p in pages) and (
                (cleaner is not None and cleaner.broken is None) or all(p.sigs is not None for p in pages)):
            self._fit_signed(site, pages, reason)
        else:
            self._fit_whole(site, pages, reason)

    def _fit_signed(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None:
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
                signed = [(p.url, p.sigs) for p in pages if p.sigs is not None]
                if len(signed) < len(pages):
                    self._clean_or_fit(site, pages, reason)
                    return
                model = SiteModel.fit(signed, self.params)
                if self.metadata:
                    learn_pages(model, (p.meta for p in pages))
                self._fitted(site, model, frozenset(p.key for p in pages))
                cleans = []
                for p in pages:
                    d = self._clean_shared(site, p.key, p.url, p.html, p.encoding, p.parsed, kept=True,
                                           fitted_on=True)
                    p.parsed = None

                    def resolved(r: tuple[CleanResult, SiteModel | None], p: _HeldPage = p) -> CleanResult:
                        self._resolve_page(site, p, r)
                        return r[0]
                    d.addCallbacks(resolved, errback=lambda f, p=p: self._fail(site, p.items, f))
                    cleans.append(d)
                self._after_fit(site, pages)
                DeferredList(cleans).addCallback(lambda results: self._fit_done(
                    site, model, pages, [r for _, r in results], reason, started))
            finally:
                if site.held:  # items that came in while the signatures were awaited
                    self._release(site, Release.AFTER_FIT)

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
                  results: list[CleanResult | None], reason: Release, started: float) -> None:
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
                 results: list[CleanResult | None], reason: Release, started: float) -> None:
        """The fit's line; ``results``: each page's clean, None where it failed."""
        done = [(p, r) for p, r in zip(pages, results) if r is not None]
        removed = 1 - sum(len(r.html) for _, r in done) / max(1, sum(len(p.html) for p, _ in done))
        failed = f", {len(pages) - len(done)} failed" if len(done) < len(pages) else ""
        # A site smaller than DEBOILER_MIN_PAGES is fitted when the crawl ends,
        # and its model stays provisional: say so, or the line reads as a fault.
        learns = (f"released early: {_RELEASED_EARLY[reason]}; provisional: it learns until it has seen "
                  f"{self.min_pages}" if reason in _RELEASED_EARLY else
                  f"provisional: the crawl gave {len(pages)} of the {self.min_pages} pages of "
                  "DEBOILER_MIN_PAGES; later crawls' pages complete it")
        self._site_log("deboiler: fitted %s on %d pages in %.2fs%s: %d boilerplate signatures, "
                       "%.0f%% of these pages' HTML removed%s", site.name or "?", len(pages),
                       time.perf_counter() - started, f" ({learns})" if model.provisional else "",
                       len(model.boilerplate), 100 * removed, failed)

    def _fit_whole(self, site: _Site, pages: list[_HeldPage], reason: Release) -> None:
        """Parse, fit and clean a site's held pages in one task (threads, or
        a worker process where some page was not signed ahead)."""
        site.hold.busy = True
        self.busy += 1
        started = time.perf_counter()
        d = self.work.fitting([(p.url, p.html, p.encoding) for p in pages], self.params, self.options)

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
            cleaner = self.work.cleaner
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
                self._release(site, Release.AFTER_FIT)

        items = [h for p in pages for h in p.items]
        d.addCallbacks(done, failed)
        d.addErrback(lambda f: self._fail(site, [h for h in items if not h.waiter.called], f))
        d.addBoth(finally_)

    def _split_fit(self, site: _Site, pages: list[_HeldPage], reason: Release, failure: Failure) -> None:
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
        done: Deferred[None] = Deferred()
        page.signing = done

        def signed(answer: tuple[Page, dict | None]) -> None:
            parsed, page.meta = answer
            page.sigs, page.parsed, page.signing = parsed.signatures, parsed, None
            done.callback(None)

        def unsigned(f: Failure) -> None:
            page.signing, page.failed = None, f
            logger.debug("deboiler: signing %s failed: %s", page.url, f.getErrorMessage())
            done.callback(None)

        d = self.work.in_pool(sign_with_summary, page.html, page.url, page.encoding, self.params, self.metadata)
        d.addCallbacks(signed, unsigned)
