"""What the CLI learns about each site between its two passes, on disk.

A crawl archive can hold millions of sites; per-site page counts, signature
samples and models kept in dicts grew with the input (6 KB a page: 174 MB
for 20,780 pages). They live in a temporary SQLite file instead (the
standard library's; SQLite bounds its own cache), so memory stays flat
whatever the number of pages or sites; an LRU keeps the models in use.
"""

from __future__ import annotations

import json
import os
import sqlite3
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ._fit_clean import learn_pages
from ._model import FIT_MIN_PAGES, FitParams, SiteModel
from ._pagekey import page_key
from ._store import SignatureFileError, model_from_json, model_to_json

__all__ = ["HINT_PAGES", "HintSample", "SiteDB", "SiteState"]

#: A site learns where it keeps its bylines from the metadata summaries of
#: at most this many of its pages, those of its smallest page keys (the
#: first of its fit sample): enough to learn from, and a site of 100,000
#: pages costs pass 1 some 300 summaries a process, not 100,000.
HINT_PAGES = 50


class HintSample:
    """Which pages' metadata summaries pass 1 reads (``--metadata``): a page
    whose key is among the ``HINT_PAGES`` smallest of its site seen so far
    in this process. Whatever the order of the pages, and however they are
    shared between processes, the site's ``HINT_PAGES`` smallest keys are
    among those read; forgetting a site (over ``sites``) only reads more."""

    def __init__(self, size: int = HINT_PAGES, sites: int = 100_000) -> None:
        self.size = size
        self.sites = sites
        self._smallest: OrderedDict[str, list[bytes]] = OrderedDict()

    def wants(self, site: str, key: bytes) -> bool:
        keys = self._smallest.get(site)
        if keys is None:
            keys = self._smallest[site] = []
            if len(self._smallest) > self.sites:
                self._smallest.popitem(last=False)
        else:
            self._smallest.move_to_end(site)
        if len(keys) >= self.size and key >= keys[-1]:
            return False
        at = bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:  # a copy of a page read already
            return False
        keys.insert(at, key)
        del keys[self.size:]
        return True


@dataclass
class SiteState:
    """What is known about one site after the first pass."""

    model: SiteModel | None = None
    source: str | None = None  # "fitted" or "file"
    reason: str | None = None  # why there is no model
    pages: int = 0


class SiteDB:
    """Sites, their page counts, signature samples and models."""

    def __init__(self, path: str, cache_signatures: int = 1_000_000) -> None:
        self.path = path
        #: Models kept in memory hold at most about this many signatures in
        #: all, so a few huge sites cannot fill memory.
        self.cache_signatures = cache_signatures
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.executescript("""
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA temp_store = FILE;
            CREATE TABLE IF NOT EXISTS sites (
                site TEXT PRIMARY KEY, pages INTEGER NOT NULL DEFAULT 0,
                source TEXT, reason TEXT, model TEXT);
            CREATE TABLE IF NOT EXISTS samples (site TEXT NOT NULL, key BLOB NOT NULL,
                                                url TEXT NOT NULL, sigs BLOB NOT NULL, meta TEXT);
        """)
        self._needs_fit: OrderedDict[str, bool] = OrderedDict()
        self._cache: OrderedDict[str, SiteState] = OrderedDict()
        self._cached_signatures = 0

    @classmethod
    def reader(cls, path: str, cache_signatures: int = 1_000_000) -> "SiteDB":
        """Another process's view of a finished table (worker processes)."""
        db = cls.__new__(cls)
        db.path = path
        db.cache_signatures = cache_signatures
        db._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        db._needs_fit = OrderedDict()
        db._cache = OrderedDict()
        db._cached_signatures = 0
        return db

    def close(self) -> None:
        self._db.close()

    # -- first pass --------------------------------------------------------

    def add(self, pages: Iterable[tuple[str, str, bytes, str | None]], load) -> None:
        """Count pages (site, url, packed signatures, metadata summary as
        JSON or None) and keep the samples of sites to fit. ``load(site)``
        gives a site's stored model (or None) the first time the site is seen."""
        counts: dict[str, int] = {}
        samples = []
        for site, url, packed, meta in pages:
            counts[site] = counts.get(site, 0) + 1
            if self._needs(site, load):
                samples.append((site, page_key(url, packed), url, packed, meta))
        db = self._db
        db.execute("BEGIN")
        db.executemany("UPDATE sites SET pages = pages + ? WHERE site = ?",
                       [(n, site) for site, n in counts.items()])
        db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?)", samples)
        db.execute("COMMIT")

    def _needs(self, site: str, load) -> bool:
        """Whether the site is to be fitted (no stored model); looks up or
        creates its row once, then remembers (bounded)."""
        need = self._needs_fit.get(site)
        if need is None:
            row = self._db.execute("SELECT source FROM sites WHERE site = ?", (site,)).fetchone()
            if row is None:
                model = load(site)
                self._db.execute("INSERT INTO sites (site, source, model) VALUES (?, ?, ?)",
                                 (site, "file" if model is not None else None,
                                  _dump(site, model) if model is not None else None))
                need = model is None
            else:
                need = row[0] is None
            self._needs_fit[site] = need
            if len(self._needs_fit) > 100_000:
                self._needs_fit.popitem(last=False)
        else:
            self._needs_fit.move_to_end(site)
        return need

    # -- fitting -----------------------------------------------------------

    def fit(self, min_pages: int, max_fit_pages: int, params: FitParams, save) -> dict[str, int]:
        """Fit every site without a stored model that has ``min_pages``;
        ``save(site, model)`` stores each. Returns counts by outcome."""
        db = self._db
        db.execute("CREATE INDEX IF NOT EXISTS samples_by_site ON samples (site, key)")
        need = max(min_pages, FIT_MIN_PAGES)
        totals = {"fitted": 0, "file": 0, "too_small": 0, "no_host": 0}
        todo = db.execute("SELECT site, pages, source FROM sites ORDER BY site").fetchall()
        db.execute("BEGIN")
        for site, pages, source in todo:
            if source == "file":
                totals["file"] += 1
                continue
            if not site:
                # Records whose URL has no host (none, relative, file:) are
                # not one website: fitted together they would make one
                # model, and one signature file, of unrelated pages.
                db.execute("UPDATE sites SET reason = ? WHERE site = ?",
                           ("no site: the URL has no host (--domain-field can name the site)", site))
                totals["no_host"] += 1
                continue
            # Distinct pages: copies of one page would make a model with no
            # pairs, no signatures, that later runs reuse and remove nothing.
            distinct = db.execute("SELECT COUNT(DISTINCT key) FROM samples WHERE site = ?",
                                  (site,)).fetchone()[0] if pages >= need else pages
            if distinct < need:
                copies = f" ({distinct} distinct)" if distinct < pages else ""
                db.execute("UPDATE sites SET reason = ? WHERE site = ?",
                           (f"site has {pages} page(s){copies}; fitting needs {need}", site))
                totals["too_small"] += 1
                continue
            # One row a page; MIN(url): the same one whatever the input order
            # (copies may differ in their fragment).
            rows = db.execute("SELECT MIN(url), sigs, MIN(meta) FROM samples WHERE site = ? GROUP BY key ORDER BY key "
                              "LIMIT ?", (site, max_fit_pages)).fetchall()
            model = SiteModel.fit(((url, _unpack(sigs)) for url, sigs, _ in rows), params)
            metas = [meta for _, _, meta in rows[:HINT_PAGES] if meta is not None]
            if metas:  # where it keeps its byline and dates (DEBOILER_METADATA)
                learn_pages(model, (json.loads(meta) for meta in metas))
            save(site, model)
            db.execute("UPDATE sites SET source = 'fitted', model = ? WHERE site = ?", (_dump(site, model), site))
            totals["fitted"] += 1
        db.execute("DELETE FROM samples")
        db.execute("COMMIT")
        return totals

    def fitted(self) -> Iterator[tuple[str, int, SiteModel]]:
        """(site, pages, model) of each site fitted in this run, by site."""
        rows = self._db.execute("SELECT site, pages, model FROM sites WHERE source = 'fitted' ORDER BY site")
        for site, pages, model in rows.fetchall():
            yield site, pages, _load(site, model)

    # -- second pass -------------------------------------------------------

    def state(self, site: str) -> SiteState:
        """A site's model (or why it has none), from a bounded cache."""
        state = self._cache.get(site)
        if state is not None:
            self._cache.move_to_end(site)
            return state
        row = self._db.execute("SELECT pages, source, reason, model FROM sites WHERE site = ?",
                               (site,)).fetchone()
        if row is None:
            state = SiteState(reason="site not seen in the first pass")
        else:
            pages, source, reason, model = row
            state = SiteState(_load(site, model) if model else None, source, reason, pages)
        size = len(state.model.support) if state.model is not None else 0
        self._cache[site] = state
        self._cached_signatures += size
        while self._cached_signatures > self.cache_signatures and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._cached_signatures -= len(old.model.support) if old.model is not None else 0
        return state


def _unpack(packed: bytes) -> list[str]:
    """8-byte signatures as the model's 16 hex digits (slicing one hex
    string is 2x faster than hex() of each slice)."""
    h = packed.hex()
    return [h[i:i + 16] for i in range(0, len(h), 16)]


def _dump(site: str, model: SiteModel) -> str:
    return json.dumps(model_to_json(site, model), separators=(",", ":"))


def _load(site: str, text: str) -> SiteModel:
    try:
        return model_from_json(json.loads(text), f"<sites table: {site}>")[1]
    except (ValueError, SignatureFileError) as e:  # written by this run: a bug
        raise RuntimeError(f"cannot read back the model of {site!r}: {e}") from e


def remove(path: str) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass
