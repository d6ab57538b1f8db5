"""The batch on Spark: the command line's three passes (``_batch``) as
Spark stages, with the same records out.

1. **Sign.** Each input partition's pages are parsed and signed by the
   CLI's own ``_Work.sign``; per site only a page count and a bounded
   sample go on: the ``max_fit_pages`` smallest page keys (BLAKE2b of URL
   and signatures), each with its smallest URL. That is the sample the
   CLI's site table picks (``ORDER BY key LIMIT``), so it does not depend
   on partitioning or task order.
2. **Fit.** Each site is fitted on its sample in the executors, where the
   shuffle put it (many small sites a task); a signature file given as a
   model replaces the fit, as in the CLI.
3. **Clean.** Records are shuffled by (site, bucket): a site of more than
   ``pages_per_task`` pages is cut into buckets by a hash of the record's
   id, so a huge site spreads over many tasks, and its model travels with
   each bucket (a join: one model row sorted before the bucket's records).
   Within a task the records stream through a sort that spills to disk:
   one model and one page in memory at a time.

The input is read once and kept on the executors' disks (``DISK_ONLY``)
for the two passes; the cleaned records too, for the output and the
counts. Everything is a function of the input: a task run again gives
the same records (Spark's retries).
"""

from __future__ import annotations

import logging
import math
import resource
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from hashlib import blake2b
from typing import Any

from ._batch_options import BatchOptions, site_of
from ._batch_pages import _page_input, _record, _Work, clean_record
from ._clean import empties_many
from ._fit_clean import learn_pages
from ._files import dumps, loads
from ._language import LanguageBatch
from ._model import FIT_MIN_PAGES, SiteModel
from ._pagekey import page_key
from ._sitedb import HINT_PAGES, SiteState, _dump, _load, _unpack
from ._spark_input import Item, read_source, row_item
from ._store import SignatureFileError, SignatureStore, load_site
from ._urls import legacy_site_keys

__all__ = ["SparkRun", "clean_items", "save_models", "source_items"]

logger = logging.getLogger(__name__)

#: Pages a clean task takes of one site: larger sites are cut into buckets.
PAGES_PER_TASK = 2000
#: Records given to ``_Work.sign`` at a time (the CLI's batch).
_BATCH = 16
#: Salts of records that are not pages (they need no model): spread wide.
_NO_PAGE = 1 << 30


def _h(text: str) -> int:
    """A stable 64-bit hash (never ``hash()``: it changes with the process)."""
    return int.from_bytes(blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def _rid_hash(rid: tuple[int, int]) -> int:
    return _h(f"{rid[0]}:{rid[1]}")


def _site_partition(site: str) -> int:
    return _h(site)


def _bucket_partition(key: tuple) -> int:
    """A site's buckets go to consecutive partitions (spread, not piled)."""
    return _h(key[0]) + key[1]


def _peak_rss() -> int:
    """This Python worker's peak resident memory, bytes (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -- 1. sign -------------------------------------------------------------------

def _sign(options: BatchOptions, with_file: Any, items: Iterable[Item]) -> Iterator[tuple[str, Any]]:
    """(site, (key, url, packed, metadata summary or None) or None for a
    site with a signature file) of every record that is a page; as the
    CLI's pass 1 counts them (and reads the summaries it reads)."""
    work = _Work(options)
    files: set[str] = with_file.value
    known: dict[str, bool] = {}

    def has_file(site: str) -> bool:
        got = known.get(site)
        if got is None:
            got = bool(site) and (site in files or any(k in files for k in legacy_site_keys(site)))
            if len(known) < 100_000:
                known[site] = got
        return got

    def signed(batch: list) -> Iterator[tuple[str, Any]]:
        for info in work.sign(batch, 0):
            if info is not None:
                site, url, packed, meta = info
                yield site, None if has_file(site) else (page_key(url, packed), url, packed, meta)

    batch: list = []
    for item in items:
        if item[0] != "r":
            continue
        _, _, where, head, body = item
        batch.append((0, where, (head, body)))
        if len(batch) == _BATCH:
            yield from signed(batch)
            batch = []
    if batch:
        yield from signed(batch)


def _add(samples: dict, key: bytes, url: str, packed: bytes, meta: str | None) -> None:
    old = samples.get(key)
    if old is not None:  # MIN(url), MIN(meta): the same whatever the order
        metas = [m for m in (meta, old[2]) if m is not None]
        samples[key] = (min(url, old[0]), packed, min(metas) if metas else None)
    else:
        samples[key] = (url, packed, meta)


def _prune(samples: dict, cap: int, final: bool = False) -> dict:
    """The ``cap`` smallest keys (a key dropped here can never be among the
    smallest ``cap`` of the site)."""
    if len(samples) > (cap if final else 2 * cap):
        return {k: samples[k] for k in sorted(samples)[:cap]}
    return samples


def _combiners(cap: int) -> tuple:
    """combineByKey's functions: [pages, samples or None] per site."""
    def create(v: Any) -> list:
        return [1, None if v is None else {v[0]: (v[1], v[2], v[3])}]

    def merge_value(c: list, v: Any) -> list:
        c[0] += 1
        if v is not None and c[1] is not None:
            _add(c[1], *v)
            c[1] = _prune(c[1], cap)
        return c

    def merge(a: list, b: list) -> list:
        a[0] += b[0]
        if a[1] is not None and b[1] is not None:
            for k, (url, packed, meta) in b[1].items():
                _add(a[1], k, url, packed, meta)
            a[1] = _prune(a[1], cap)
        return a

    return create, merge_value, merge


# -- 2. fit --------------------------------------------------------------------

#: A site's state between the stages: (pages, source, reason, model JSON, outcome).
State = tuple[int, str | None, str | None, str | None, str]


def _fit(options: BatchOptions, kv: tuple[str, list]) -> tuple[str, State]:
    """A site's model, or why it has none: ``SiteDB.fit``'s rules and words."""
    site, (pages, samples) = kv
    if samples is None:
        return site, (pages, "file", None, None, "file")
    if not site:
        return site, (pages, None, "no site: the URL has no host (--domain-field can name the site)", None,
                      "no_host")
    need = max(options.min_pages, FIT_MIN_PAGES)
    samples = _prune(samples, max(options.max_fit_pages, need), final=True)
    distinct = len(samples) if pages >= need else pages
    if distinct < need:
        copies = f" ({distinct} distinct)" if distinct < pages else ""
        return site, (pages, None, f"site has {pages} page(s){copies}; fitting needs {need}", None, "too_small")
    rows = [samples[k] for k in sorted(samples)[:options.max_fit_pages]]
    model = SiteModel.fit(((url, _unpack(packed)) for url, packed, _ in rows), options.params)
    metas = [meta for _, _, meta in rows[:HINT_PAGES] if meta is not None]
    if metas:  # where it keeps its byline and dates (--metadata), as SiteDB.fit learns it
        learn_pages(model, (loads(meta) for meta in metas))
    return site, (pages, "fitted", None, _dump(site, model), "fitted")


# -- 3. clean ------------------------------------------------------------------

def _key_records(options: BatchOptions, salts: Any, items: Iterable[Item]) -> Iterator[tuple[tuple, Any]]:
    """Each record keyed (site, bucket, 1, id) for the shuffle to its model."""
    buckets: dict[str, int] = salts.value
    for item in items:
        if item[0] != "r":
            continue
        _, rid, where, head, body = item
        record = _record((head, body), where, options)
        if isinstance(_page_input(record, options), str):  # an error record: no model needed
            site, salt = "", _NO_PAGE + _rid_hash(rid) % 4096
        else:
            site = site_of(record, options)
            n = buckets.get(site, 1)
            salt = _rid_hash(rid) % n if n > 1 else 0
        yield (site, salt, 1, rid), (where, head, body)


def _model_rows(salts: Any, kv: tuple[str, State]) -> Iterator[tuple[tuple, State]]:
    site, state = kv
    for salt in range(salts.value.get(site, 1)):
        yield (site, salt, 0, (0, 0)), state


def _clean(options: BatchOptions, rows: Iterable[tuple[tuple, Any]]) -> Iterator[tuple]:
    """The records of a partition, sorted: each bucket's model row first,
    then its records, cleaned one at a time by the CLI's ``clean_record``
    (their languages read ``LANGUAGE_BATCH`` at a time: ``LanguageBatch``).
    Ends with the worker's peak memory."""
    current: tuple[str, int] | None = None
    state = SiteState()
    languages = LanguageBatch() if options.metadata else None
    done: list[tuple[Any, dict]] = []
    for (site, salt, tag, rid), value in rows:
        if tag == 0:
            pages, source, reason, text, _ = value
            state = SiteState(_load(site, text) if text else None, source, reason, pages)
            current = (site, salt)
            continue
        if current != (site, salt):
            state, current = SiteState(reason="site not seen in the first pass"), (site, salt)
        where, head, body = value
        done.append((rid, clean_record(_record((head, body), where, options), options, state, languages=languages)))
        if len(done) >= LANGUAGE_BATCH:
            yield from _written(done, languages)
    yield from _written(done, languages)
    yield ("s", _peak_rss())


#: Records of a partition whose languages are read together.
LANGUAGE_BATCH = 32


def _written(done: list[tuple[Any, dict]], languages: LanguageBatch | None) -> Iterator[tuple]:
    """The rows of the records in ``done`` (emptied), their languages read."""
    if languages is not None:
        languages.run()
    for rid, rec in done:
        status = rec["deboiler"]
        yield ("r", rid, dumps(rec), status["status"], status["site"] if status["status"] == "emptied" else "")
    done.clear()


def _summary(rows: Iterable[tuple]) -> Iterator[tuple]:
    counts: Counter = Counter()
    emptied: Counter = Counter()
    rss = 0
    first: tuple | None = None
    for row in rows:
        if row[0] == "s":
            rss = max(rss, row[1])
            continue
        _, rid, line, status, site = row
        counts["records"] += 1
        counts[status] += 1
        if site:
            emptied[site] += 1
        if status == "error" and (first is None or rid < first[0]):
            first = (rid, line)
    yield counts, emptied, rss, first


# -- the driver -----------------------------------------------------------------

class _Clock:
    """Each stage's wall time, logged (debug): what docs/spark.md's costs are."""

    def __init__(self) -> None:
        import time

        self._now = time.perf_counter
        self.last = self._now()

    def lap(self, stage: str) -> None:
        now = self._now()
        logger.debug("stage %s: %.1fs", stage, now - self.last)
        self.last = now


@dataclass
class SparkRun:
    """What a run gave: its records (the CLI's JSON lines, persisted on the
    executors' disks until ``close``) and its counts."""

    lines: Any  # RDD[str]
    totals: Counter
    sites: Counter
    archive: Counter
    #: Files that ended early (truncated, corrupt, unreadable): why.
    damage: list[str]
    #: The highest peak memory of a Python worker that cleaned, bytes.
    peak_worker_rss: int
    first_error: str | None
    emptied: Counter
    states: Any  # RDD[(site, State)]
    _persisted: list = field(default_factory=list)

    def close(self) -> None:
        for rdd in self._persisted:
            rdd.unpersist()


def source_items(sc: Any, files: list[str], tables: list[Any], options: BatchOptions) -> Any:
    """One RDD of the items of files (a task a file) and tables (DataFrames)."""
    parts = []
    if files:
        parts.append(sc.parallelize(list(enumerate(files)), len(files))
                     .flatMap(lambda sp: read_source(sp[0], sp[1], options)))
    for n, df in enumerate(tables, len(files)):
        html = options.html_field
        parts.append(df.rdd.zipWithIndex().map(lambda ri, n=n, html=html: row_item(n, ri[0], ri[1], html)))
    if not parts:
        raise ValueError("no input")
    return parts[0] if len(parts) == 1 else sc.union(parts)


def _file_sites(store: SignatureStore | None) -> set[str]:
    """The sites of the store's valid signature files (a bad one is refitted,
    as the CLI does; a warning names it)."""
    out: set[str] = set()
    for path in store or ():
        try:
            out.add(load_site(path)[0])
        except SignatureFileError as e:
            logger.warning("refitting the site of %s: %s", path, e)
    return out


def clean_items(sc: Any, items: Any, options: BatchOptions, store: SignatureStore | None = None,
                partitions: int | None = None, pages_per_task: int = PAGES_PER_TASK) -> SparkRun:
    """Run the three stages over ``items`` (``source_items``)."""
    from pyspark import StorageLevel

    p = partitions or max(2, sc.defaultParallelism * 2)
    if items.getNumPartitions() < p:  # a few large files: spread their pages
        items = items.repartition(p)
    items = items.persist(StorageLevel.DISK_ONLY)
    persisted = [items]
    archive: Counter = Counter()
    damage = []
    clock = _Clock()
    for _, _, counts, why in items.filter(lambda it: it[0] == "m").collect():
        archive.update(counts)
        if why:
            damage.append(why)
    clock.lap("read")

    with_file = sc.broadcast(_file_sites(store))
    need = max(options.min_pages, FIT_MIN_PAGES)
    create, merge_value, merge = _combiners(max(options.max_fit_pages, need))
    states = (items.mapPartitions(partial(_sign, options, with_file))
              .combineByKey(create, merge_value, merge, p, _site_partition)
              .map(partial(_fit, options))
              .persist(StorageLevel.MEMORY_AND_DISK))
    persisted.append(states)
    sites = Counter(states.map(lambda kv: kv[1][4]).countByValue())
    clock.lap("sign and fit")
    if store is not None and sites["file"]:
        files = states.filter(lambda kv: kv[1][1] == "file").map(lambda kv: (kv[0], kv[1][0])).collect()
        loaded = []
        for site, pages in files:
            model = store.load(site)
            assert model is not None
            loaded.append((site, (pages, "file", None, _dump(site, model), "file")))
        states = states.filter(lambda kv: kv[1][1] != "file").union(sc.parallelize(loaded, max(1, len(loaded) // 1000)))
    pages = states.map(lambda kv: kv[1][0]).sum() if sites else 0
    salts = sc.broadcast(dict(states.filter(lambda kv: kv[1][0] > pages_per_task)
                              .map(lambda kv: (kv[0], math.ceil(kv[1][0] / pages_per_task))).collect()))
    q = max(p, math.ceil(pages / pages_per_task))
    clock.lap("models to buckets")
    cleaned = (states.flatMap(partial(_model_rows, salts))
               .union(items.mapPartitions(partial(_key_records, options, salts)))
               .repartitionAndSortWithinPartitions(q, _bucket_partition)
               .mapPartitions(partial(_clean, options))
               .persist(StorageLevel.DISK_ONLY))
    persisted.append(cleaned)
    totals: Counter = Counter({"records": 0, "cleaned": 0, "emptied": 0, "single_page": 0, "unchanged": 0,
                               "skipped": 0, "error": 0})
    emptied: Counter = Counter()
    rss = 0
    first: tuple | None = None
    for counts, by_site, peak, err in cleaned.mapPartitions(_summary).collect():
        totals.update(counts)
        emptied.update(by_site)
        rss = max(rss, peak)
        if err is not None and (first is None or err[0] < first[0]):
            first = err
    clock.lap("clean")
    first_error = None
    if first is not None:
        reason = (loads(first[1]).get("deboiler") or {}).get("reason")
        first_error = reason if isinstance(reason, str) else None
    lines = cleaned.filter(lambda r: r[0] == "r").map(lambda r: r[2].decode("utf-8"))
    return SparkRun(lines, totals, sites, archive, damage, rss, first_error, emptied, states, persisted)


def save_models(run: SparkRun, store: SignatureStore, refit: bool = False) -> tuple[int, int]:
    """Save the models fitted in the run as signature files, but those that
    emptied many of their site's pages (``_Run.save_fitted``'s rule). Streams
    them to the driver a partition at a time. Returns (saved, refused)."""
    saved = refused = 0
    for site, (pages, _, _, text, _) in run.states.filter(lambda kv: kv[1][1] == "fitted").toLocalIterator():
        if empties_many(run.emptied[site], pages):
            logger.warning("the model of %s is not saved: it emptied %d of its %d pages (they keep their "
                           "text, status 'emptied'); the pages may be copies of one another", site,
                           run.emptied[site], pages)
            refused += 1
            continue
        store.save(site, _load(site, text), force=refit)
        saved += 1
    return saved, refused
