"""The options of a batch run (``BatchOptions``, which the command line
fills), and the site a record belongs to."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._files import GZIP_LEVEL
from ._limits import DEFAULT_LIMITS, Limits
from ._model import FIT_MIN_PAGES, FitParams
from ._urls import site_of_url

__all__ = ["BatchOptions", "site_of"]


@dataclass
class BatchOptions:
    url_field: str = "url"
    html_field: str = "html"
    #: Group by this field's value instead of the URL's host.
    domain_field: str | None = None
    #: Sites with fewer pages than this are not fitted (never fewer than
    #: FIT_MIN_PAGES).
    min_pages: int = FIT_MIN_PAGES
    #: At most this many pages per site are used for fitting, chosen by a
    #: hash of their URL (so the choice does not depend on input order).
    max_fit_pages: int = 1000
    jobs: int = 1
    params: FitParams = field(default_factory=FitParams)
    #: "boilerplate" (remove what the site's pages share) or "content"
    #: (then keep the main content; pages without a site model too).
    mode: str = "content"
    #: Content mode: put the comments it leaves out in this field.
    comments_field: str | None = None
    #: The page's headline goes in this field (a record holding one keeps it).
    title_field: str = "clean_title"
    #: Passed on to content mode's ``select_content``; boilerplate mode
    #: ignores it.
    body_only: bool = False
    #: Per-page caps; larger pages and non-HTML bodies are skipped.
    limits: Limits = DEFAULT_LIMITS
    #: Bytes the run may keep in memory between its passes (parsed pages,
    #: model caches); 80 % of it, at most, for parsed pages.
    max_memory: int = 1024 * 1024 * 1024
    gzip_level: int = GZIP_LEVEL
    #: Also write ``clean_markdown``: what was kept, as CommonMark.
    markdown: bool = False
    #: Also write the page's metadata (author, dates, language ...) in
    #: ``metadata_field`` (a record holding one keeps it); each fitted site
    #: learns where it keeps its byline and dates.
    metadata: bool = False
    metadata_field: str = "page_metadata"
    #: Show progress on stderr when it is a terminal.
    progress: bool = True
    #: Keep the kept pages' trees after cleaning them, for a process that
    #: exits without freeing them (the CLI: freeing a parsed page costs
    #: about 0.25 ms, 7 % of a page's work). Memory stays within
    #: ``max_memory``: these pages were all held at once after pass 1.
    retain_kept: bool = False


def site_of(record: dict, options: BatchOptions) -> str:
    """The site a record belongs to: the domain field, or the URL's host
    (with a non-default port)."""
    if options.domain_field is not None:
        value = record.get(options.domain_field)
        return value if isinstance(value, str) else ""
    url = record.get(options.url_field)
    return site_of_url(url) if isinstance(url, str) else ""
