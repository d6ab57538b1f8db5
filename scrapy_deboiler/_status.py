"""The status a page's item or record leaves with: one builder for the
crawl's pipeline and the command line, so that both say the same of the
same page (``docs/output.md``)."""

from __future__ import annotations

from typing import Any

from ._clean import CleanResult, emptied_reason
from ._model import SiteModel

__all__ = ["page_status", "state_of"]


def state_of(result: CleanResult, model: SiteModel | None, mode: str) -> str:
    """``cleaned`` with a model, ``emptied`` where the model would have
    emptied the page (it keeps its text), else ``single_page`` (content
    mode extracts the page alone) or ``unchanged`` (boilerplate mode
    removes nothing)."""
    if model is None:
        return "single_page" if mode == "content" else "unchanged"
    return "emptied" if result.fallback == "emptied" else "cleaned"


def page_status(result: CleanResult, *, site: str, model: SiteModel | None, source: str | None,
                mode: str, reason: str | None, html_chars: int, notes: list[str] | None = None) -> dict[str, Any]:
    """The status of a page cleaned with ``model`` (from ``source``:
    fitted, file, redis) or without one (``reason`` says why); ``notes``:
    the page's loader and decoding notes (``result.notes`` if None)."""
    state = state_of(result, model, mode)
    status: dict[str, Any] = {"status": state, "site": site}
    if model is not None:
        status.update(model=source, fit_pages=model.pages, removed=result.removed)
        if model.provisional:  # a model still learning (a crawl's file of a site it had not finished)
            status["provisional"] = True
        if state == "emptied":
            status["reason"] = emptied_reason(result)
        elif result.fallback:
            status["fallback"] = result.fallback
    else:
        status["reason"] = reason
    # Sizes in characters (of an archive's body: bytes).
    status["html_chars"] = html_chars
    status["clean_html_chars"] = len(result.html)
    notes = result.notes if notes is None else notes
    if notes:
        status["notes"] = notes
    return status
