"""Provisional models and DEBOILER_LEARN: a model that grows with the pages
cleaned after its fit."""

from __future__ import annotations

import logging

from ._holding import Release
from ._model import SiteModel
from ._pipeline_state import PipelineBase, _Site
from ._pagekey import pooled_key
from ._provisional import complete
from ._redis import pack_signatures, unpack_signatures
from ._store import MAX_PAGE_KEYS

__all__ = ["Learning"]

logger = logging.getLogger(__name__)


def _seen(model: SiteModel, key: str, url: str) -> bool:
    """Whether the model has seen the page: its key (URL and content), or
    its URL alone for a model fitted on a Redis pool."""
    return key in model.page_keys or pooled_key(url.split("#", 1)[0]) in model.page_keys


class Learning(PipelineBase):
    """Grows provisional models (and, with DEBOILER_LEARN, any model) from
    the pages cleaned after the fit."""

    def _absorb(self, site: _Site, key: str, url: str, sigs: frozenset[str]) -> None:
        """A cleaned page's signatures: evidence for a provisional model
        until it has seen DEBOILER_MIN_PAGES pages, then (DEBOILER_LEARN)
        for extending a finished one; a page the model has seen adds nothing."""
        model = site.model
        if model is None:
            return
        if model.provisional and site.hold.pooled and self.redis_up:
            self._offer(site, url, sigs)
            return
        if model.provisional:
            if _seen(model, key, url) or key in site.pending_keys:
                return
            site.pending.append((url, sigs))
            site.pending_keys.add(key)
            if len(model.page_keys) + len(site.pending_keys) >= self.min_pages:
                self._complete(site)
        elif self.learn and key not in site.learned_keys and not _seen(model, key, url):
            if len(model.page_keys) + len(site.learned_keys) >= MAX_PAGE_KEYS:
                return  # a million pages of evidence: enough
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
            self._release(site, Release.AFTER_FIT)

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
        model = complete(site.model, batch, keys, self.min_pages, self.learn)
        if not model.provisional:
            self._inc("sites_completed")
            self._site_log("deboiler: %s: provisional model completed on %d pages: %d boilerplate "
                           "signatures", site.name or "?", model.pages, len(model.boilerplate))
        else:
            self._inc("sites_updated")
        site.model = model
        self._save(site, model)

    def _learn(self, site: _Site) -> None:
        """DEBOILER_LEARN: extend the model with the pages cleaned since, and
        save it. Counting shared signatures of a few pages takes about a
        millisecond, so it runs here, on a copy that is then swapped in."""
        batch, site.learned = site.learned, []
        keys, site.learned_keys = site.learned_keys, set()
        assert site.model is not None
        model = site.model.with_params().update(batch)
        model.page_keys = site.model.page_keys | keys  # a page crawled again adds nothing
        site.model = model
        self._inc("sites_updated")
        self._save(site, site.model)

    def _flush_learning(self, site: _Site) -> None:
        """Before a site is forgotten or the crawl ends: what it learned."""
        if site.pending and site.model is not None:
            self._complete(site)
        if len(site.learned) >= 2 and site.model is not None:
            self._learn(site)
