"""Clean files of crawled pages (JSON Lines, WARC, ARC) site by site, with
memory bounded by ``BatchOptions.max_memory`` whatever the input's size.

1. Every page is read, parsed and signed once. Its signatures go to a
   temporary site table on disk (``_sitedb``); the parsed page itself is
   kept in memory while the kept pages fit in the bound (a parsed page costs
   about 8x its HTML), the input line of any other page goes to a compressed
   spill file, so the input is read once.
2. Each site without a signature file is fitted on its pages' signatures
   (at most ``max_fit_pages``, chosen by a hash of URL and content).
3. Every page is cleaned, in input order: a kept page as it is, a spilled
   one parsed again. Output is one record per input record, in order.

With ``jobs`` > 1 worker processes do the parsing and cleaning; page i goes
to the same worker in both passes, and the output is byte-identical to one
process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import shutil
import struct
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ._clean import Page, clean_page, empties_many
from ._files import GZIP_LEVEL, DamagedInput, dumps, loads, open_binary, read_lines
from ._limits import DEFAULT_LIMITS, Limits
from ._model import FIT_MIN_PAGES, FitParams
from ._sitedb import SiteDB, SiteState
from ._status import page_status
from ._store import SignatureFileError, SignatureStore
from ._urls import site_of_url
from ._warc import ArchiveError, archive_pages, is_archive

from ._compiled import speedups as _speedups  # None: not built, or switched off

__all__ = ["ArchiveError", "BatchOptions", "DamagedInput", "SiteState", "clean_file", "clean_record", "fit_file", "site_of"]

logger = logging.getLogger(__name__)

#: Records per message to a worker.
BATCH = 16
#: A parsed page kept between the passes costs about this many times its
#: input bytes (measured: 8.2x the HTML on the annotated pages).
KEPT_COST = 9
#: Memory a process needs besides kept pages (interpreter, lxml, caches).
_RESERVE = 0.2


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
                 page: Page | None = None, html_chars: int | None = None) -> dict:
    """One output record: the input's fields but HTML, plus clean_text,
    clean_html, clean_title and a ``deboiler`` status. Never raises. ``page`` is the
    record's page parsed already (its record's HTML emptied: ``html_chars``
    is its size)."""
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
                            body_only=options.body_only)
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

    def sign(self, items: list[tuple[int, int, Item]], keep: int) -> list[tuple[str, str, bytes] | None]:
        """(site, url, packed signatures) of each item, None for one that is no
        page; the first ``keep`` items are kept for cleaning."""
        options = self.options
        infos: list[tuple[str, str, bytes] | None] = []
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
            infos.append((site_of(record, options), url, _packed(page)))
            if n < keep:  # the HTML is parsed already; its type says archive or not
                record[options.html_field] = b"" if isinstance(html, bytes) else ""
                self.kept[index] = (record, page, len(html))
        return infos

    def clean(self, items: list[tuple[int, int, Item | None]]) -> list[tuple[bytes, str, str]]:
        """(JSON line, status, site where the status is ``emptied``) of each
        item; an item of None was kept."""
        options, out = self.options, []
        assert self.db is not None
        for index, where, item in items:
            if item is None:
                kept = self.kept[index] if self.retain else self.kept.pop(index)
                if isinstance(kept, dict):  # an error record
                    rec = kept
                else:
                    record, page, size = kept
                    rec = clean_record(record, options, self.db.state, page, size)
            else:
                rec = clean_record(_record(item, where, options), options, self.db.state)
            status = rec["deboiler"]
            out.append((dumps(rec), status["status"], status["site"] if status["status"] == "emptied" else ""))
        return out


def _serve(options: BatchOptions, inbox: multiprocessing.Queue, outbox: multiprocessing.Queue) -> None:
    """A worker process: answers messages in order."""
    work = _Work(options)
    while True:
        msg = inbox.get()
        if msg is None:
            if options.retain_kept:  # the kept pages are not freed one by one
                os._exit(0)
            return
        kind, args = msg
        try:
            if kind == "sign":
                outbox.put(work.sign(*args))
            elif kind == "clean":
                outbox.put(work.clean(*args))
            elif kind == "open":
                work.db = SiteDB.reader(*args)
                outbox.put(None)
        except BaseException as e:  # reported, so the main process does not wait forever
            outbox.put(RuntimeError(f"worker failed: {type(e).__name__}: {e}"))
            raise


class _Workers:
    """``jobs`` worker processes; message i goes to worker i % jobs, and
    answers come back in the order of the messages."""

    def __init__(self, options: BatchOptions) -> None:
        ctx = multiprocessing.get_context("spawn") if os.name == "nt" else multiprocessing.get_context("fork")
        self.n = options.jobs
        self.inboxes = [ctx.Queue() for _ in range(self.n)]
        self.outboxes = [ctx.Queue() for _ in range(self.n)]
        self.procs = [ctx.Process(target=_serve, args=(options, i, o), daemon=True)
                      for i, o in zip(self.inboxes, self.outboxes)]
        for p in self.procs:
            p.start()

    def _get(self, w: int) -> Any:
        while True:
            try:
                answer = self.outboxes[w].get(timeout=1)
            except queue.Empty:
                if not self.procs[w].is_alive():
                    raise RuntimeError(f"worker {w} died (exit code {self.procs[w].exitcode})") from None
                continue
            if isinstance(answer, Exception):
                raise answer
            return answer

    def ordered(self, messages: Iterator[tuple[int, str, tuple]], ahead: int = 4) -> Iterator[Any]:
        """Send (batch number, kind, args) messages, keeping up to ``ahead``
        per worker in flight; yield the answers in message order."""
        pending: list[int] = []
        for b, kind, args in messages:
            w = b % self.n
            self.inboxes[w].put((kind, args))
            pending.append(w)
            if len(pending) >= ahead * self.n:
                yield self._get(pending.pop(0))
        for w in pending:
            yield self._get(w)

    def broadcast(self, kind: str, args: Any) -> None:
        for box in self.inboxes:
            box.put((kind, args))
        for w in range(self.n):
            self._get(w)

    def close(self) -> None:
        for box in self.inboxes:
            box.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()


# -- the passes ---------------------------------------------------------------

#: Kept pages of runs with ``retain_kept``, alive until the process exits.
_RETAINED: list = []


class _Spill:
    """Input items not kept in memory, in order, zstd-compressed on disk."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "spill.zst")
        self._out: IO[bytes] | None = None
        self._in: IO[bytes] | None = None

    _FRAME = struct.Struct("<QIQ")  # line number, head bytes, body bytes + 1 (0: no body)

    def write(self, where: int, item: Item) -> None:
        if self._out is None:
            self._out = open_binary(self.path, "w")
        head, body = item
        self._out.write(self._FRAME.pack(where, len(head), 0 if body is None else len(body) + 1) + head)
        if body is not None:
            self._out.write(body)

    def read(self) -> tuple[int, Item]:
        if self._in is None:
            if self._out is not None:
                self._out.close()
                self._out = None
            self._in = open_binary(self.path, "r")
        where, head_len, body_len = self._FRAME.unpack(self._in.read(self._FRAME.size))
        head = self._in.read(head_len)
        return where, (head, self._in.read(body_len - 1) if body_len else None)

    def close(self) -> None:
        for f in (self._out, self._in):
            if f is not None:
                f.close()


def _items(path: str | os.PathLike, options: BatchOptions, counts: Counter) -> Iterator[tuple[int, Item]]:
    """(line or record number, item) of every input record."""
    if is_archive(path):
        for n, page in enumerate(archive_pages(path, counts, options.limits.max_bytes), 1):
            body = page.pop("html")
            fields = {"warc_record_id": page["warc_record_id"], options.url_field: page["url"],
                      "warc_date": page["warc_date"], "encoding": page["encoding"]}
            yield n, (dumps(fields), body)
    else:
        for lineno, line in read_lines(path):
            yield lineno, (line, None)


class _Progress:
    """Pages, sites and pages/s on stderr, when it is a terminal."""

    def __init__(self, options: BatchOptions, desc: str, total: int | None = None) -> None:
        self.bar = None
        if options.progress and sys.stderr.isatty():
            from tqdm import tqdm

            try:  # a terminal that reports no size (0 x 0) would hide the bar
                size = os.get_terminal_size(sys.stderr.fileno())
                sized = size.columns > 0 and size.lines > 0
            except OSError:
                sized = False
            self.bar = tqdm(desc=desc, total=total, unit=" pages", smoothing=0.1, file=sys.stderr,
                            dynamic_ncols=sized, ncols=None if sized else 100, nrows=None if sized else 24)

    def update(self, n: int, **post: Any) -> None:
        if self.bar is not None:
            self.bar.update(n)
            if post:
                self.bar.set_postfix(post, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@dataclass
class _Run:
    """One run over an input: its site table, kept pages and spill."""

    options: BatchOptions
    store: SignatureStore | None
    refit: bool
    folder: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="scrapy-deboiler-"))
    records: int = 0
    first_unkept: list[int] = field(default_factory=list)
    archive: Counter = field(default_factory=Counter)
    #: The input could not be read to its end (pages before it are good).
    damage: DamagedInput | None = None

    def __post_init__(self) -> None:
        # Model caches get a tenth of the bound (a signature costs ~100 bytes).
        self.cache = max(1000, int(self.options.max_memory * 0.1 / 100 / self.options.jobs))
        self.db = SiteDB(os.path.join(self.folder, "sites.sqlite"), self.cache)
        self.workers = _Workers(self.options) if self.options.jobs > 1 else None
        self.local = _Work(self.options, self.db)
        self.spill = _Spill(self.folder)
        self.sites = 0

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()
        if self.options.retain_kept:  # freed by the process's exit, not page by page
            _RETAINED.append(self.local.kept)
        self.spill.close()
        self.db.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _load(self, site: str):
        self.sites += 1
        if self.store is None or self.refit or not site:
            return None
        try:
            return self.store.load(site)
        except SignatureFileError as e:
            logger.warning("refitting %r: %s", site, e)
            return None

    def _batches(self, src, keep: bool) -> Iterator[tuple[int, str, tuple]]:
        """Pass 1's messages; with ``keep`` each worker keeps its pages until
        its share of the memory bound is used, and the rest is spilled."""
        jobs = self.options.jobs
        budget = [self.options.max_memory * (1 - _RESERVE) / jobs] * jobs
        self.first_unkept = [-1] * jobs if keep else [0] * jobs
        batch: list[tuple[int, int, Item]] = []
        b = 0

        def message() -> tuple[int, str, tuple]:
            w = b % jobs
            n_keep = 0
            if self.first_unkept[w] < 0:
                for index, _, (head, body) in batch:
                    budget[w] -= KEPT_COST * (len(head) + (len(body) if body else 0))
                    if budget[w] < 0:
                        self.first_unkept[w] = index
                        break
                    n_keep += 1
            if keep:
                for _, where, item in batch[n_keep:]:
                    self.spill.write(where, item)
            return b, "sign", (batch, n_keep)

        try:
            for index, (where, item) in enumerate(_items(src, self.options, self.archive)):
                batch.append((index, where, item))
                self.records = index + 1
                if len(batch) == BATCH:
                    yield message()
                    batch, b = [], b + 1
        except DamagedInput as e:  # the pages before the damage still count
            self.damage = e
        if batch:
            yield message()

    def first_pass(self, src, keep: bool) -> None:
        progress = _Progress(self.options, "reading")
        try:
            messages = self._batches(src, keep)
            if self.workers is not None:
                answers = self.workers.ordered(messages)
            else:
                answers = (self.local.sign(*args) for _, _, args in messages)
            for infos in answers:
                self.db.add((i for i in infos if i is not None), self._load)
                progress.update(len(infos), sites=self.sites)
        finally:
            progress.close()

    def fit(self, save_later: bool = False) -> dict[str, int]:
        """Fit the sites; ``save_later``: their models are saved after the
        clean pass (``save_fitted``), which tells which of them empty their
        pages."""
        store = self.store
        # --refit: the models fitted now replace the files, better or not.
        save = (lambda site, model: store.save(site, model, force=self.refit)) if (
            store is not None and not save_later) else (lambda site, model: None)
        o = self.options
        totals = self.db.fit(o.min_pages, o.max_fit_pages, o.params, save)
        if self.workers is not None:
            self.workers.broadcast("open", (self.db.path, self.cache))
        return totals

    def save_fitted(self, emptied: Counter) -> int:
        """Save the models fitted in this run, but those that emptied many
        of their site's pages (``emptied``: a count by site; ``empties_many``):
        their pages kept their text, and the next run would reuse the model.
        Returns how many were not saved."""
        if self.store is None:
            return 0
        refused = 0
        for site, pages, model in self.db.fitted():
            if empties_many(emptied[site], pages):
                logger.warning("the model of %s is not saved: it emptied %d of its %d pages (they keep their "
                               "text, status 'emptied'); the pages may be copies of one another", site,
                               emptied[site], pages)
                refused += 1
                continue
            self.store.save(site, model, force=self.refit)
        return refused

    def third_pass(self) -> Iterator[tuple[bytes, str, str]]:
        jobs = self.options.jobs

        def messages() -> Iterator[tuple[int, str, tuple]]:
            for b, start in enumerate(range(0, self.records, BATCH)):
                w = b % jobs
                cut = self.first_unkept[w]
                items = [(i, 0, None) if cut < 0 or i < cut else (i, *self.spill.read())
                         for i in range(start, min(start + BATCH, self.records))]
                yield b, "clean", (items,)

        if self.workers is not None:
            answers = self.workers.ordered(messages())
        else:
            answers = (self.local.clean(*args) for _, _, args in messages())
        progress = _Progress(self.options, "cleaning", self.records)
        try:
            for lines in answers:
                yield from lines
                progress.update(len(lines))
        finally:
            progress.close()


def fit_file(path: str | os.PathLike, options: BatchOptions, store: SignatureStore | None = None,
             refit: bool = False) -> dict[str, int]:
    """Pass 1 and fitting: a model for every site, from its file in ``store``
    or fitted on its pages in ``path`` (and then saved to ``store``).
    Returns how many sites were ``fitted``, came from a ``file`` or were
    ``too_small``, and ``no_host`` (1 when some URLs had no host)."""
    run = _Run(options, store, refit)
    try:
        run.first_pass(path, keep=False)
        totals = run.fit()
    finally:
        run.close()
    if run.damage is not None:
        raise run.damage
    return totals


class Totals(dict):
    """clean_file's counts, and the reason of its first record in error
    (the command's closing message names it when no record was cleaned)."""

    first_error: str | None = None


def clean_file(src: str | os.PathLike, dst: str | os.PathLike, options: BatchOptions,
               store: SignatureStore | None = None) -> Totals:
    """Every input record gives one output record, in order. Returns counts
    by status (and ``records``; for archives, ``archive/<kind>`` counts of
    the records left out), and the first error's reason (``first_error``). A truncated input raises ``DamagedInput``
    (``ArchiveError`` for archives) after the records before the damage are
    written."""
    run = _Run(options, store, refit=False)
    totals = Counter({"records": 0, "cleaned": 0, "emptied": 0, "single_page": 0, "unchanged": 0, "skipped": 0,
                      "error": 0})
    emptied: Counter = Counter()  # by site
    first_error = None
    try:
        run.first_pass(src, keep=True)
        run.fit(save_later=True)
        with open_binary(dst, "w", options.gzip_level) as out:
            for line, status, site in run.third_pass():
                out.write(line + b"\n")
                totals["records"] += 1
                totals[status] += 1
                if site:
                    emptied[site] += 1
                if status == "error" and totals["error"] == 1:  # the first says what; the count, how many
                    reason = (loads(line).get("deboiler") or {}).get("reason")
                    first_error = reason if isinstance(reason, str) else None
                    logger.warning("record %d: %s (each record's reason is in its \"deboiler\" field)",
                                   totals["records"], reason)
        refused = run.save_fitted(emptied)
        if refused:
            totals["saves_refused_emptied"] = refused
    finally:
        run.close()
    for kind, n in run.archive.items():
        totals[f"archive/{kind}"] = n
    if run.damage is not None:
        raise run.damage
    result = Totals(totals)
    result.first_error = first_error
    return result
