"""A site's parsed pages fitted on and cleaned: the library's one call
(``fit_and_clean``), and what the pipeline's fit tasks and workers run
(``fit_pages``, ``clean_pages``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._clean import CleanResult, Page, clean_page, summary_of
from ._language import LanguageBatch
from ._limits import DEFAULT_LIMITS, Limits
from ._metadata import learn_hints
from ._model import FitParams, SiteModel

__all__ = ["clean_pages", "fit_and_clean", "fit_pages", "learn_pages"]


def clean_pages(pages: Iterable[Page], model: SiteModel | None, **options: Any) -> list[CleanResult]:
    """``clean_page`` of each page with the same ``options``, their
    metadata's languages read together once all are cleaned
    (``LanguageBatch``: the identifier's model stays in the CPU's caches)."""
    languages = LanguageBatch() if options.get("metadata") else None
    results = [clean_page(p, model, languages=languages, **options) for p in pages]
    if languages is not None:
        languages.run()
    return results


def learn_pages(model: SiteModel, summaries: Iterable[dict | None]) -> SiteModel:
    """Give ``model`` the metadata hints learned from its fit pages'
    ``page_summary`` (None: a page that could not give one)."""
    model.metadata_hints = learn_hints([s for s in summaries if s is not None])
    return model


def fit_pages(pages: list[Page], params: FitParams, metadata: bool = False) -> SiteModel:
    """A site's model fitted on its parsed pages; with ``metadata`` it also
    learns where the site keeps its byline and dates (``learn_pages``)."""
    model = SiteModel.fit(pages, params)
    if metadata:
        learn_pages(model, (summary_of(p) for p in pages if p.skipped is None))
    return model


def fit_and_clean(
    pages: Iterable[tuple[str, str | bytes]],
    params: FitParams | None = None,
    mode: str = "boilerplate",
    limits: Limits = DEFAULT_LIMITS,
    metadata: bool = False,
) -> tuple[SiteModel, list[CleanResult]]:
    """Fit a model on one site's pages and clean them, parsing each page once.

    Keeps every parsed page of the site in memory until cleaned; for sites
    larger than memory fit from signatures first (``SiteModel.fit``) and
    clean in a second pass.
    """
    params = params or FitParams()
    pairs = []
    for pair in pages:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], (str, bytes))):
            raise TypeError(f"fit_and_clean takes (url, html) pairs, not {type(pair).__name__} "
                            f"{repr(pair)[:60]}")
        pairs.append(pair)
    parsed = [Page(html, url, scheme=params.scheme, limits=limits) for url, html in pairs]
    model = fit_pages(parsed, params, metadata)
    return model, clean_pages(parsed, model, mode=mode, metadata=metadata)
