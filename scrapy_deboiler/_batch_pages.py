"""A record's way through a batch run (``_batch``): read from the input
(a JSON Lines line or an archive record), its page parsed and signed in
pass 1 (``_Work.sign``), and cleaned into its output record in pass 3
(``_Work.clean``, ``clean_record``), in this process or in a worker's
(``_batch_workers``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ._batch_options import BatchOptions, site_of
from ._clean import Page, clean_page, summary_of
from ._compiled import speedups as _speedups  # None: not built, or switched off
from ._files import dumps, loads
from ._language import LanguageBatch
from ._pagekey import page_key
from ._sitedb import HintSample, SiteDB, SiteState
from ._status import page_status

__all__ = ["Item", "clean_record"]

logger = logging.getLogger(__name__)


# -- records ------------------------------------------------------------------
#
# An input item is (head, body): a JSON Lines line and None, or an archive
# record's fields as JSON and its HTML bytes.

Item = tuple[bytes, bytes | None]


def _record(item: Item, where: int, options: BatchOptions) -> Any:
    """The item as a record, or why it is not one (a str). The line's JSON
    may be any value: ``_page_input`` says whether it is a record."""
    head, body = item
    if body is not None:  # archive record: html is bytes, its charset beside it
        record = loads(head)
        record[options.html_field] = body
        return record
    try:
        return loads(head)
    except ValueError as e:
        # The parser's "line 2 column 1" counts within this one record (its
        # newline a second line): say where in the file's line.
        msg, pos = getattr(e, "msg", None), getattr(e, "pos", None)
        if isinstance(msg, str) and isinstance(pos, int):
            pos = min(pos, len(head.decode("utf-8", "replace").rstrip("\r\n")))
            return f"invalid JSON on line {where}, column {pos + 1}: {msg}"
        return f"invalid JSON on line {where}: {e}"


def _page_input(record: Any, options: BatchOptions) -> tuple[str, str | bytes, str | None] | str:
    """(url, html, declared encoding) of a record, or why it cannot be cleaned."""
    if not isinstance(record, dict):
        return record if isinstance(record, str) else "record is not a JSON object"
    html = record.get(options.html_field)
    url = record.get(options.url_field)
    url = url if isinstance(url, str) else ""
    if isinstance(html, bytes):  # from an archive
        encoding = record.get("encoding")
        return url, html, encoding if isinstance(encoding, str) else None
    if not isinstance(html, str):
        if html is not None:
            return f"{options.html_field!r} holds {type(html).__name__}, not the page's HTML (a string)"
        return f"no {options.html_field!r} string in record"
    return url, html, None


def _lacks(value: Any) -> bool:
    """A record lacks a field that is missing, None or empty (as the crawl's items do)."""
    return value is None or value == ""


def _output_fields(record: dict, options: BatchOptions) -> dict:
    """The input's fields but the HTML (and an archive record's charset)."""
    archive = isinstance(record.get(options.html_field), bytes)
    return {k: v for k, v in record.items()
            if k != options.html_field and not (archive and k == "encoding")}


def clean_record(record: Any, options: BatchOptions, state: SiteState | Callable[[str], SiteState],
                 page: Page | None = None, html_chars: int | None = None,
                 languages: LanguageBatch | None = None) -> dict:
    """One output record: the input's fields but HTML, plus clean_text,
    clean_html, clean_title and a ``deboiler`` status. Never raises. ``page`` is the
    record's page parsed already (its record's HTML emptied: ``html_chars``
    is its size). ``languages``: its metadata's language is written when
    that batch runs (``clean_page``)."""
    got = _page_input(record, options)
    if isinstance(got, str):
        out = _output_fields(record, options) if isinstance(record, dict) else {}
        out["deboiler"] = {"status": "error", "reason": got}
        return out
    url, html, encoding = got
    out = _output_fields(record, options)
    site = site_of(record, options)
    if callable(state):
        state = state(site)
    try:
        if page is None:
            page = Page(html, url, encoding, scheme=options.params.scheme, limits=options.limits)
        result = clean_page(page, state.model, mode=options.mode, markdown=options.markdown,
                            body_only=options.body_only, metadata=options.metadata, languages=languages)
    except Exception as e:  # a bug must cost one record, not the run
        logger.exception("cleaning %s failed", url)
        out["deboiler"] = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
        return out
    if result.skipped is not None:
        out["deboiler"] = {"status": "skipped", "kind": result.skipped.kind,
                           "reason": result.skipped.reason, "site": site}
        return out
    # Sizes as the crawl's items give them (characters, or bytes of an archive's body).
    status = page_status(result, site=site, model=state.model, source=state.source, mode=options.mode,
                         reason=state.reason, html_chars=len(html) if html_chars is None else html_chars)
    out["clean_text"] = result.text
    out["clean_html"] = result.html
    if options.markdown:
        out["clean_markdown"] = result.markdown
    if options.comments_field:
        out[options.comments_field] = result.comments
    if _lacks(out.get(options.title_field)):  # never over the record's own
        out[options.title_field] = result.title
    if options.metadata and _lacks(out.get(options.metadata_field)):
        out[options.metadata_field] = result.metadata
    out["deboiler"] = status
    return out


# -- the work on pages, in this process or in workers --------------------------

def _packed(page: Page) -> bytes:
    """The page's distinct signatures as sorted 8-byte values (the site
    table's form); compiled, sorting numbers rather than hex strings."""
    sigs = page.signed.signatures
    packed = _speedups.pack_signatures(sigs) if _speedups is not None else None
    return packed if packed is not None else bytes.fromhex("".join(sorted(set(sigs))))


class _Work:
    """Parses and signs pages (pass 1), keeping those it is told to, and
    cleans them (pass 3)."""

    def __init__(self, options: BatchOptions, db: SiteDB | None = None) -> None:
        self.options = options
        self.db = db
        #: index -> (record without its HTML, parsed page, the HTML's size)
        #: or the error record.
        self.kept: dict[int, tuple[dict, Page, int] | dict] = {}
        #: Keep cleaned pages to the end (``BatchOptions.retain_kept``).
        self.retain = options.retain_kept
        #: The pages whose metadata summaries pass 1 reads.
        self.hint_sample = HintSample()

    def sign(self, items: list[tuple[int, int, Item]],
             keep: int) -> list[tuple[str, str, bytes, str | None] | None]:
        """(site, url, packed signatures, metadata summary as JSON or None)
        of each item, None for one that is no page; the first ``keep`` items
        are kept for cleaning. With ``metadata``, the summaries of the pages
        ``HintSample`` wants (its site's smallest keys so far)."""
        options = self.options
        infos: list[tuple[str, str, bytes, str | None] | None] = []
        for n, (index, where, item) in enumerate(items):
            record = _record(item, where, options)
            got = _page_input(record, options)
            if isinstance(got, str):
                infos.append(None)
                if n < keep:
                    self.kept[index] = clean_record(record, options, SiteState())
                continue
            url, html, encoding = got
            try:
                page = Page(html, url, encoding, scheme=options.params.scheme, limits=options.limits)
            except Exception as e:  # a bug must cost one record, not the run
                logger.exception("reading %s failed", url)
                infos.append(None)
                if n < keep:
                    self.kept[index] = {**_output_fields(record, options),
                                        "deboiler": {"status": "error", "reason": f"{type(e).__name__}: {e}"}}
                continue
            site, packed, meta = site_of(record, options), _packed(page), None
            if options.metadata and page.skipped is None and self.hint_sample.wants(site, page_key(url, packed)):
                meta = dumps(summary_of(page)).decode()
            infos.append((site, url, packed, meta))
            if n < keep:  # the HTML is parsed already; its type says archive or not
                record[options.html_field] = b"" if isinstance(html, bytes) else ""
                self.kept[index] = (record, page, len(html))
        return infos

    def clean(self, items: list[tuple[int, int, Item | None]]) -> list[tuple[bytes, str, str]]:
        """(JSON line, status, site where the status is ``emptied``) of each
        item; an item of None was kept. The pages' languages are read
        together once all are cleaned (``LanguageBatch``)."""
        options, recs = self.options, []
        assert self.db is not None
        languages = LanguageBatch() if options.metadata else None
        for index, where, item in items:
            if item is None:
                kept = self.kept[index] if self.retain else self.kept.pop(index)
                if isinstance(kept, dict):  # an error record
                    rec = kept
                else:
                    record, page, size = kept
                    rec = clean_record(record, options, self.db.state, page, size, languages)
            else:
                rec = clean_record(_record(item, where, options), options, self.db.state, languages=languages)
            recs.append(rec)
        if languages is not None:
            languages.run()
        out = []
        for rec in recs:
            status = rec["deboiler"]
            out.append((dumps(rec), status["status"], status["site"] if status["status"] == "emptied" else ""))
        return out
