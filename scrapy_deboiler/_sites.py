"""A crawl's sites: their state, the cache of them (DEBOILER_MAX_SITES) and
their models on disk."""

from __future__ import annotations

import logging

from ._model import SiteModel
from ._pipeline_state import PipelineBase, _Site
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
