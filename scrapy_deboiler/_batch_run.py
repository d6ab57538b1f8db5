"""One batch run over an input (``_Run``): its temporary site table
(``_sitedb``), the pages kept in memory between the passes and the spill
file; pass 1 (read, parse and sign), the fit, and pass 3 (clean in input
order), here or in the worker processes. The pages a worker that died had
kept are read again from the input (``_revive``)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ._batch_options import BatchOptions
from ._batch_pages import Item, _Work
from ._batch_spill import _Spill
from ._batch_workers import Message, _Workers
from ._clean import empties_many
from ._files import DamagedInput, dumps, read_lines
from ._sitedb import SiteDB
from ._store import SignatureFileError, SignatureStore
from ._warc import archive_pages, is_archive

__all__: list[str] = []

logger = logging.getLogger(__name__)

#: Records per message to a worker.
BATCH = 16
#: A parsed page kept between the passes costs about this many times its
#: input bytes (measured: 8.2x the HTML on the annotated pages).
KEPT_COST = 9
#: Memory a process needs besides kept pages (interpreter, lxml, caches).
_RESERVE = 0.2

#: Kept pages of runs with ``retain_kept``, alive until the process exits.
_RETAINED: list = []


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
    #: Records pass 1 read that hold no page (no HTML string, a bad line).
    not_pages: int = 0
    first_unkept: list[int] = field(default_factory=list)
    archive: Counter = field(default_factory=Counter)
    #: The input could not be read to its end (pages before it are good).
    damage: DamagedInput | None = None
    #: Records whose pages a worker kept and died with; those read again
    #: from the input (record number -> (line number, item)), until cleaned.
    lost: set[int] = field(default_factory=set)
    recovered: dict[int, tuple[int, Item]] = field(default_factory=dict)
    #: The input; the pass the workers are in, and its messages made so far.
    src: Any = None
    phase: str = "sign"
    made: int = 0

    def __post_init__(self) -> None:
        # Model caches get a tenth of the bound (a signature costs ~100 bytes).
        self.cache = max(1000, int(self.options.max_memory * 0.1 / 100 / self.options.jobs))
        self.db = SiteDB(os.path.join(self.folder, "sites.sqlite"), self.cache)
        self.workers = _Workers(self.options, BATCH, self._revive) if self.options.jobs > 1 else None
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
                    self.made = b + 1
                    yield message()
                    batch, b = [], b + 1
        except DamagedInput as e:  # the pages before the damage still count
            self.damage = e
        if batch:
            self.made = b + 1
            yield message()

    def _kept(self, b: int) -> list[int]:
        """The records of batch ``b`` whose pages its worker keeps."""
        cut = self.first_unkept[b % self.options.jobs]
        return [i for i in range(b * BATCH, min((b + 1) * BATCH, self.records)) if cut < 0 or i < cut]

    def _revive(self, w: int, pending: list[Message]) -> list[Message]:
        """Worker ``w`` died with ``pending`` unanswered (``_Workers``): in
        pass 1, its answered batches' kept pages are lost (its pending
        batches go again, to be kept by its replacement); in pass 3, the
        kept pages of its batches still to clean are read again from the
        input, and its pending batches carry them."""
        jobs, unanswered = self.options.jobs, {m[0] for m in pending}
        if self.phase == "sign":
            for b in range(w, self.made, jobs):
                if b not in unanswered:
                    self.lost.update(self._kept(b))
            return pending
        for b in range(w, (self.records + BATCH - 1) // BATCH, jobs):
            if b in unanswered or b >= self.made:
                self.lost.update(self._kept(b))
        self._recover()
        return [(b, kind, ([self._item(i, where, item) for i, where, item in args[0]],))
                for b, kind, args in pending]

    def _recover(self) -> None:
        """Read the lost records again from the input (it is a file)."""
        want = self.lost - self.recovered.keys()
        self.lost.clear()
        if not want:
            return
        logger.warning("reading %d records again from %s (their pages were kept by a worker that died)",
                       len(want), os.fspath(self.src))
        try:
            for index, (where, item) in enumerate(_items(self.src, self.options, Counter())):
                if index in want:
                    self.recovered[index] = (where, item)
                    want.discard(index)
                    if not want:
                        break
        except DamagedInput:  # after the records read in pass 1
            pass

    def _item(self, i: int, where: int, item: Item | None) -> tuple[int, int, Item | None]:
        """A record for pass 3: as given, or read again if its page was lost."""
        if item is None and i in self.recovered:
            return (i, *self.recovered.pop(i))
        return i, where, item

    def first_pass(self, src, keep: bool) -> None:
        self.src = src
        progress = _Progress(self.options, "reading")
        try:
            messages = self._batches(src, keep)
            if self.workers is not None:
                answers = self.workers.ordered(messages)
            else:
                answers = (self.local.sign(*args) for _, _, args in messages)
            for infos in answers:
                self.not_pages += infos.count(None)
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
                items = [self._item(i, 0, None) if cut < 0 or i < cut else (i, *self.spill.read())
                         for i in range(start, min(start + BATCH, self.records))]
                self.made = b + 1
                yield b, "clean", (items,)

        self.phase, self.made = "clean", 0
        self._recover()  # the pages of workers that died in pass 1

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

