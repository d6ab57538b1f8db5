"""The rules of provisional models, in one place.

A site released before it had ``DEBOILER_MIN_PAGES`` distinct pages (the
crawl went quiet, stopped, ran out of its held-bytes budget) gets a model
fitted on what it had: *provisional*. It keeps learning from the site's
later pages, in this crawl and the next (its signature file lists the pages
it has seen), and is finished once it has seen ``min_pages``. The pipeline's
parts (fitting, learning, the store, Redis) ask these functions rather than
each writing the rule (docs/pipeline.md, "Provisional models").
"""

from __future__ import annotations

from ._model import SiteModel

__all__ = ["complete", "fitted_is_provisional", "read_as", "remembers", "wants_pages"]


def fitted_is_provisional(pages: int, min_pages: int, pooled: bool) -> bool:
    """Whether a model fitted here on ``pages`` distinct pages is
    provisional: fewer than ``min_pages``, or the site is pooled in Redis
    (the cluster's model is to replace it)."""
    return pages < min_pages or pooled


def read_as(model: SiteModel, min_pages: int) -> SiteModel:
    """A model read from a file or Redis, as this crawl takes it: a
    provisional one that has seen ``min_pages`` pages (another crawl's
    threshold was higher) is finished here."""
    if model.provisional and len(model.page_keys) >= min_pages:
        model.provisional = False
    return model


def wants_pages(model: SiteModel, learn: bool) -> bool:
    """Whether pages cleaned with ``model`` are evidence for it (their
    signatures are wanted): a provisional model's, or with DEBOILER_LEARN
    any model's."""
    return learn or model.provisional


def complete(old: SiteModel, batch: list[tuple[str, frozenset[str]]], keys: set[str] | frozenset[str],
             min_pages: int, learn: bool = False) -> SiteModel:
    """A provisional model extended by the pages ``batch`` (compared among
    themselves, as DEBOILER_LEARN does; ``keys``: their page keys): finished
    once it has seen ``min_pages`` distinct pages, and then without its page
    list unless it goes on learning (``learn``, ``remembers``)."""
    model = old.with_params().update(batch)
    model.page_keys = old.page_keys | keys
    model.provisional = len(model.page_keys) < min_pages
    if not model.provisional and not learn:
        model.page_keys = frozenset()
    return model


def remembers(model: SiteModel, learn: bool) -> bool:
    """Whether the model keeps the keys of the pages it has seen: while it
    is provisional, and with DEBOILER_LEARN always, so a page crawled again
    adds no evidence twice. Support counts neighbour pairs: a recrawl that
    counted the same pairs again made what two neighbouring pages alone
    share (a series' introduction) reach the threshold, and removed it."""
    return learn or model.provisional
