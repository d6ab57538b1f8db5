"""A crawl's sites: their state, the cache of them (DEBOILER_MAX_SITES) and
their models on disk."""

from __future__ import annotations

import logging
import time

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from ._model import SiteModel
from ._pipeline_state import PipelineBase, _Site
from ._provisional import read_as, remembers
from ._redis import model_rank
from ._report import SiteReport
from ._store import SignatureFileError, SignatureStore

__all__ = ["Sites"]

logger = logging.getLogger(__name__)


class Sites(PipelineBase):
    """The site cache (DEBOILER_MAX_SITES) and the sites' models in the
    store."""

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
            if site.held or site.hold.busy or site.inflight or site.loading is not None or site.waiting:
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

    def _load(self, site: _Site) -> Deferred:
        """Read the site's signature file on the store's thread; the items
        that arrive meanwhile wait for it (``Intake``), and a site found
        there cleans them with its model. A Deferred that fires once the
        model is in place (or there is none)."""
        waiter: Deferred = Deferred()
        if site.loading is not None:  # already being read
            site.loading.append(waiter)
            return waiter
        site.loading = [waiter]
        site.load_since = time.monotonic()
        d = self.store_io.run(self.store.load, site.name)
        d.addBoth(self._loaded, site, site.loading)
        d.addErrback(self._pipeline_error)
        return waiter

    def _loaded(self, result: SiteModel | None | Failure, site: _Site, waiters: list[Deferred]) -> None:
        """The site's signature file is read: its model is the site's,
        unless the read came too late (``_store_waited``) or a fit gave it
        one meanwhile."""
        if site.loading is not waiters:  # given up on (the watchdog): the items went on without it
            self._inc("store_reads_late")
            return
        site.loading = None
        try:
            if isinstance(result, Failure):
                if result.check(SignatureFileError):
                    logger.warning("deboiler: %s; the site will be fitted again", result.value)
                else:
                    logger.error("deboiler: cannot read the signatures of %r", site.name,
                                 exc_info=(result.type, result.value, result.getTracebackObject()))
                self._inc("store_errors")
            elif result is not None and site.model is None and not site.hold.busy:
                self._use_file(site, result)
        finally:
            for w in waiters:
                w.callback(None)

    def _use_file(self, site: _Site, model: SiteModel) -> None:
        read_as(model, self.min_pages)
        if not remembers(model, self.learn):
            model.page_keys = frozenset()  # what a learning crawl saved: not needed here
        site.model, site.source = model, "file"
        self._inc("sites_reused")
        if model.provisional:
            self._inc("sites_reused_provisional")
            self._site_log("deboiler: %s uses its provisional signature file (%d pages; it learns "
                           "until it has seen %d)", site.name or "?", len(model.page_keys), self.min_pages)
        else:
            self._site_log("deboiler: %s uses its signature file (%d pages)", site.name or "?", model.pages)

    def _store_waited(self, now: float) -> None:
        """Each watchdog tick: a signature file not read in ``StoreIO.wait``
        seconds (a hung network disk) is given up on; its site's items go on
        as a new site's. Its read, if it ever ends, is not used. (Only
        while the store has calls unanswered: a broad crawl keeps thousands
        of sites.)"""
        if not self.store_io.pending:
            return
        for site in list(self.sites.values()):
            if site.loading is not None and now - site.load_since > self.store_io.wait:
                waiters, site.loading = site.loading, None
                self._inc("store_timeouts")
                logger.warning("deboiler: the signature file of %s was not read in %gs; the site goes on "
                               "as a new one", site.name or "?", self.store_io.wait)
                for w in waiters:
                    w.callback(None)

    def _save(self, site: _Site, model: SiteModel) -> None:
        """Save the site's model, on the store's thread (models are not
        changed once saved). A store that keeps a better model (its file has
        a finished one, or one of more pages: another crawl's) returns None.
        A failed save is one WARNING a site and cause, without a traceback
        for an OSError (a full disk, an unwritable folder: each save of a
        broad crawl logged 20 lines), and counted. A site whose fit emptied
        many of its pages saves nothing (``_save_fitted``)."""
        if site.unsaved:
            return
        store = self.store

        def write() -> tuple[object, SiteModel | None]:
            written = store.save(site.name, model)
            kept = None
            if written is None and isinstance(store, SignatureStore):
                try:
                    kept = store.load(site.name)
                except Exception:  # (it was read a moment ago; a bad file now is the next crawl's)
                    kept = None
            return written, kept

        d = self.store_io.run(write)
        d.addCallbacks(lambda got: self._saved(site, model, *got), lambda f: self._save_failed(site, f))
        d.addErrback(self._pipeline_error)

    def _save_failed(self, site: _Site, failure: Failure) -> None:
        e = failure.value
        self._inc("store_errors")
        self._inc("saves_failed")
        cause = f"{type(e).__name__}: {e.strerror}" if isinstance(e, OSError) and e.strerror else (
            f"{type(e).__name__}: {e}")
        if (site.name, cause) in self._save_failures:
            return
        self._save_failures.add((site.name, cause))
        if not isinstance(e, OSError):  # a bug: its traceback, once
            logger.error("deboiler: cannot save the signatures of %r", site.name,
                         exc_info=(failure.type, failure.value, failure.getTracebackObject()))
            return
        logger.warning("deboiler: cannot save the signatures of %s: %s; it goes on with its model in "
                       "memory (its later failed saves for this cause are counted in deboiler/saves_failed)",
                       site.name or "?", e)

    def _saved(self, site: _Site, model: SiteModel, written: object, kept: SiteModel | None) -> None:
        if written is None and isinstance(self.store, SignatureStore):
            self._inc("saves_kept_better")
            self._site_log("deboiler: %s: its signature file holds a better model (another crawl's: finished, "
                           "or fitted on more pages), which stays; this one (%d pages%s) is not saved",
                           site.name or "?", model.pages, ", provisional" if model.provisional else "")
            if site.model is model:  # and the site's later pages are cleaned with it
                if kept is not None and model_rank(kept) > model_rank(model):
                    site.model, site.source = read_as(kept, self.min_pages), "file"
                    site.pending, site.pending_keys = [], set()
