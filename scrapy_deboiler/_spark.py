"""The Spark job as a library: ``clean_dataframe`` for people who build
their own Spark pipelines, and the writer of the command's output. The
work itself is ``_spark_job``; ``import scrapy_deboiler`` never imports
this module (nor pyspark) until ``clean_dataframe`` is asked for.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ._batch_options import BatchOptions
from ._spark_job import SparkRun, clean_items, save_models, source_items
from ._store import SignatureStore

__all__ = ["clean_dataframe", "write_records"]

logger = logging.getLogger(__name__)

#: A pyspark DataFrame (not imported for type hints: pyspark is optional).
DataFrame = Any


def clean_dataframe(df: DataFrame, *, options: BatchOptions | None = None, signatures: str | os.PathLike | None = None,
                    partitions: int | None = None, pages_per_task: int | None = None, **fields: Any) -> DataFrame:
    """Clean a DataFrame of pages (columns ``url`` and ``html``, the HTML as
    text or bytes; other columns are carried over) as ``scrapy-deboiler
    clean`` cleans the same records: site by site, a model fitted on each
    site's deterministic sample, every row cleaned. Returns a DataFrame of
    the CLI's output records (its schema read from them: ``clean_text``,
    ``clean_html``, ``clean_title``, the ``deboiler`` status struct ...).

    ``options``: a ``BatchOptions``; or its fields as keywords (``mode``,
    ``markdown``, ``min_pages``, ``max_fit_pages``, ``url_field``,
    ``html_field``, ``domain_field`` ...). ``signatures``: a folder of
    signature files on the driver: existing files are the sites' models,
    models fitted here are saved there. The records stay persisted on the
    executors' disks while the returned DataFrame is used.
    """
    if options is None:
        options = BatchOptions(**fields)
    elif fields:
        raise TypeError("give options or its fields, not both")
    store = SignatureStore(signatures) if signatures is not None else None
    spark = df.sparkSession
    items = source_items(spark.sparkContext, [], [df], options)
    extra = {"pages_per_task": pages_per_task} if pages_per_task else {}
    run = clean_items(spark.sparkContext, items, options, store, partitions, **extra)
    if store is not None:
        save_models(run, store)
    _log(run)
    return spark.read.json(run.lines)


def _log(run: SparkRun) -> None:
    t = run.totals
    logger.info("%d records: %d cleaned, %d emptied, %d single pages, %d unchanged, %d skipped, %d errors; "
                "%d sites: %d fitted, %d from files; Python workers' peak memory %.0f MiB", t["records"],
                t["cleaned"], t["emptied"], t["single_page"], t["unchanged"], t["skipped"], t["error"],
                sum(run.sites.values()), run.sites["fitted"], run.sites["file"], run.peak_worker_rss / 2**20)


def write_records(spark: Any, run: SparkRun, out: str, fmt: str = "parquet", overwrite: bool = False) -> None:
    """The run's records as part files under ``out``: ``jsonl`` the CLI's
    lines as they are; ``parquet`` the same records, the schema read from
    them (the status a struct)."""
    mode = "overwrite" if overwrite else "errorifexists"
    if fmt == "jsonl":
        frame = spark.createDataFrame(run.lines.map(lambda line: (line,)), "value string")
        frame.write.mode(mode).text(out)
    elif fmt == "parquet":
        spark.read.json(run.lines).write.mode(mode).parquet(out)
    else:
        raise ValueError(f"unknown format {fmt!r}: jsonl or parquet")
