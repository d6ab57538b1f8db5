"""Clean JSON Lines files of crawled pages, site by site, in two passes:
signatures first (no HTML kept), cleaning second, output in input order."""

from __future__ import annotations

import gzip
import heapq
import io
import json
import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import IO, Any

from ._clean import Page, clean_page
from ._limits import DEFAULT_LIMITS, Limits
from ._model import FitParams, SiteModel
from ._store import SignatureFileError, SignatureStore
from ._urls import site_of_url

__all__ = ["BatchOptions", "SiteState", "clean_file", "fit_file", "site_of"]

logger = logging.getLogger(__name__)


@dataclass
class BatchOptions:
    url_field: str = "url"
    html_field: str = "html"
    #: Group by this field's value instead of the URL's host.
    domain_field: str | None = None
    #: Sites with fewer pages than this are not fitted.
    min_pages: int = 2
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
    #: Per-page caps; larger pages and non-HTML bodies are skipped.
    limits: Limits = DEFAULT_LIMITS


@dataclass
class SiteState:
    """What is known about one site after the first pass."""

    model: SiteModel | None = None
    source: str | None = None  # "fitted" or "file"
    reason: str | None = None  # why there is no model


def open_text(path: str | os.PathLike, mode: str) -> IO[str]:
    """Open a JSON Lines file, gzip when the name ends in .gz; "-" is stdout."""
    if os.fspath(path) == "-":
        if "w" not in mode:
            raise ValueError("input must be a file: it is read twice")
        return io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8")
    # Bad bytes in the input become U+FFFD; lone surrogates in the output
    # (JSON allows them as escapes) are written back as escapes.
    errors = "replace" if "r" in mode else "backslashreplace"
    if os.fspath(path).endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8", errors=errors)
    return open(path, mode, encoding="utf-8", errors=errors)


def site_of(record: dict, options: BatchOptions) -> str:
    """The site a record belongs to: the domain field, or the URL's host
    (with a non-default port)."""
    if options.domain_field is not None:
        value = record.get(options.domain_field)
        return value if isinstance(value, str) else ""
    url = record.get(options.url_field)
    return site_of_url(url) if isinstance(url, str) else ""


def _records(path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed record or an error message) for every non-blank line."""
    with open_text(path, "r") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except ValueError as e:
                yield lineno, f"invalid JSON on line {lineno}: {e}"


def _page_input(record: Any, options: BatchOptions) -> tuple[str, str] | str:
    """(url, html) of a record, or why it cannot be cleaned."""
    if not isinstance(record, dict):
        return record if isinstance(record, str) else "record is not a JSON object"
    html = record.get(options.html_field)
    if not isinstance(html, str):
        return f"no {options.html_field!r} string in record"
    url = record.get(options.url_field)
    return (url if isinstance(url, str) else ""), html


# Work done in worker processes: plain functions of picklable arguments.

def _signatures_of(args: tuple[str, str, FitParams, Limits]) -> bytes:
    html, url, params, limits = args
    page = Page(html, url, scheme=params.scheme, limits=limits)
    return bytes.fromhex("".join(sorted(page.signatures)))


_WORKER_SITES: dict[str, SiteState] = {}


def _init_worker(sites: dict[str, SiteState]) -> None:
    global _WORKER_SITES
    _WORKER_SITES = sites


def _clean_line(args: tuple[Any, BatchOptions]) -> tuple[str, str]:
    record, options = args
    out = clean_record(record, options, _WORKER_SITES)
    return json.dumps(out, ensure_ascii=False), out["deboiler"]["status"]


def clean_record(record: Any, options: BatchOptions, sites: dict[str, SiteState]) -> dict:
    """One output record: the input's fields but HTML, plus clean_text,
    clean_html and a ``deboiler`` status. Never raises."""
    got = _page_input(record, options)
    if isinstance(got, str):
        out = dict(record) if isinstance(record, dict) else {}
        out.pop(options.html_field, None)
        out["deboiler"] = {"status": "error", "reason": got}
        return out
    url, html = got
    out = {k: v for k, v in record.items() if k != options.html_field}
    site = site_of(record, options)
    state = sites.get(site) or SiteState(reason="site not seen in the first pass")
    try:
        page = Page(html, url, scheme=options.params.scheme, limits=options.limits)
        result = clean_page(page, state.model, mode=options.mode)
    except Exception as e:  # a bug must cost one record, not the run
        logger.exception("cleaning %s failed", url)
        out["deboiler"] = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
        return out
    if result.skipped is not None:
        out["deboiler"] = {"status": "skipped", "kind": result.skipped.kind,
                           "reason": result.skipped.reason, "site": site}
        return out
    if state.model is not None:
        status: dict[str, Any] = {"status": "cleaned", "site": site, "model": state.source,
                                  "fit_pages": state.model.pages, "removed": result.removed}
    else:
        status = {"status": "single_page" if options.mode == "content" else "unchanged",
                  "site": site, "reason": state.reason}
    if result.notes:
        status["notes"] = result.notes
    out["clean_text"] = result.text
    out["clean_html"] = result.html
    if options.comments_field:
        out[options.comments_field] = result.comments
    out["deboiler"] = status
    return out


def _pool(jobs: int, initializer=None, initargs=()):
    ctx = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
    return ctx.Pool(jobs, initializer=initializer, initargs=initargs)


def _imap(fn: Callable, items: Iterable, pool=None) -> Iterator:
    if pool is None:
        return map(fn, items)
    return pool.imap(fn, items, chunksize=8)


def fit_file(
    path: str | os.PathLike,
    options: BatchOptions,
    store: SignatureStore | None = None,
    refit: bool = False,
) -> dict[str, SiteState]:
    """First pass: a model for every site, from its file in ``store`` or
    fitted on its pages in ``path`` (and then saved to ``store``)."""
    sites: dict[str, SiteState] = {}
    counts: dict[str, int] = {}
    # Per site, the max_fit_pages pages with the smallest URL hash, kept as
    # (negated hash, url, packed 8-byte signatures): a bounded heap.
    samples: dict[str, list] = {}

    def wanted() -> Iterator[tuple[str, str, str]]:
        for _, record in _records(path):
            got = _page_input(record, options)
            if isinstance(got, str):
                continue
            url, html = got
            site = site_of(record, options)
            counts[site] = counts.get(site, 0) + 1
            if site not in sites:
                state = sites[site] = SiteState()
                if store is not None and not refit:
                    try:
                        state.model = store.load(site)
                    except SignatureFileError as e:
                        logger.warning("refitting %r: %s", site, e)
                    if state.model is not None:
                        state.source = "file"
            if sites[site].model is None:
                yield site, url, html

    pending: deque[tuple[str, str]] = deque()  # imap returns in order

    def args() -> Iterator[tuple[str, str, FitParams, Limits]]:
        for site, url, html in wanted():
            pending.append((site, url))
            yield html, url, options.params, options.limits

    pool = _pool(options.jobs) if options.jobs > 1 else None
    try:
        for packed in _imap(_signatures_of, args(), pool):
            site, url = pending.popleft()
            key = blake2b(url.encode("utf-8", "surrogatepass") + b"\0" + packed, digest_size=8).digest()
            heap = samples.setdefault(site, [])
            item = (_neg(key), url, packed)
            if len(heap) < options.max_fit_pages:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
    finally:
        if pool is not None:
            pool.close()
            pool.join()

    for site, state in sorted(sites.items()):
        if state.model is not None:
            continue
        n = counts.get(site, 0)
        if n < max(options.min_pages, 2):
            state.reason = f"site has {n} page(s); fitting needs {max(options.min_pages, 2)}"
            continue
        pages = [
            (url, [packed[i : i + 8].hex() for i in range(0, len(packed), 8)])
            for _, url, packed in samples.pop(site, [])
        ]
        state.model = SiteModel.fit(pages, options.params)
        state.source = "fitted"
        if store is not None:
            store.save(site, state.model)
    return sites


def _neg(key: bytes) -> bytes:
    # heapq is a min-heap; keeping the smallest keys needs the largest on top.
    return bytes(255 - b for b in key)


def clean_file(
    src: str | os.PathLike,
    dst: str | os.PathLike,
    options: BatchOptions,
    store: SignatureStore | None = None,
) -> dict[str, int]:
    """Both passes: every input line gives one output record, in order."""
    sites = fit_file(src, options, store)
    totals = {"records": 0, "cleaned": 0, "single_page": 0, "unchanged": 0, "skipped": 0, "error": 0}
    pool = _pool(options.jobs, _init_worker, (sites,)) if options.jobs > 1 else None
    if pool is None:
        _init_worker(sites)
    try:
        items = ((rec, options) for _, rec in _records(src))
        with open_text(dst, "w") as out:
            for line, status in _imap(_clean_line, items, pool):
                out.write(line + "\n")
                totals["records"] += 1
                totals[status] += 1
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return totals
