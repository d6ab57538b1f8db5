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

Here are the two entry points, ``clean_file`` and ``fit_file``; the run
(``_batch_run``), a record's work (``_batch_pages``), the worker processes
(``_batch_workers``), the spill file (``_batch_spill``) and the options
(``_batch_options``) are modules of their own.
"""

from __future__ import annotations

import logging
import os
from collections import Counter

from ._batch_options import BatchOptions, site_of
from ._batch_pages import clean_record
from ._batch_run import _Run
from ._files import DamagedInput, loads, open_binary
from ._sitedb import SiteState
from ._store import SignatureStore
from ._warc import ArchiveError

__all__ = ["ArchiveError", "BatchOptions", "DamagedInput", "SiteState", "clean_file", "clean_record", "fit_file",
           "site_of"]

logger = logging.getLogger(__name__)


def fit_file(path: str | os.PathLike, options: BatchOptions, store: SignatureStore | None = None,
             refit: bool = False) -> dict[str, int]:
    """Pass 1 and fitting: a model for every site, from its file in ``store``
    or fitted on its pages in ``path`` (and then saved to ``store``).
    Returns how many sites were ``fitted``, came from a ``file`` or were
    ``too_small``, ``no_host`` (1 when some URLs had no host), and how many
    records were read and held ``not_pages`` (a crawl's output without
    its HTML: the command says so rather than fit nothing quietly)."""
    run = _Run(options, store, refit)
    try:
        run.first_pass(path, keep=False)
        totals = run.fit()
    finally:
        run.close()
    if run.damage is not None:
        raise run.damage
    return {**totals, "records": run.records, "not_pages": run.not_pages}


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
