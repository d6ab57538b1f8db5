"""``scrapy-deboiler spark IN... OUT``: the ``clean`` command on Apache
Spark (``_spark_job``). Its options are ``clean``'s where they apply (the
same definitions, from ``_cli``), plus where Spark runs and what it writes.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import Any

from ._cli import _add_common, _at_least, _options

__all__ = ["add_parser", "run"]

#: ``clean`` options that belong to one machine: Spark has its own.
_NOT_HERE = {"jobs", "max_memory", "no_progress", "help"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("spark", help="clean WARC/ARC files or tables of pages on Apache Spark "
                                     "(pip install 'scrapy-deboiler[spark]'); docs/spark.md")
    p.add_argument("paths", nargs="+", metavar="IN... OUT",
                   help="inputs: WARC/ARC files, JSON Lines files, Parquet tables (files or folders), globs, "
                        "or lists of paths (.paths, .paths.gz, .txt); local or any scheme fsspec reads "
                        "(s3://, gs://, hdfs://), https://; then OUT, the folder of part files to write")
    common = argparse.ArgumentParser(add_help=False)
    _add_common(common)
    for action in common._actions:  # clean's own definitions, but those of one machine
        if action.dest not in _NOT_HERE:
            p._add_action(action)
    p.set_defaults(jobs=1, max_memory=1024, no_progress=True)
    p.add_argument("--signatures", metavar="DIR",
                   help="a folder on the driver: its signature files are the sites' models, and the models "
                        "fitted on the cluster are written there (as clean does)")
    p.add_argument("--master", help="Spark master (default: local[*], or spark-submit's)")
    p.add_argument("--format", choices=("parquet", "jsonl"), default="parquet",
                   help="part files of records: parquet, or the CLI's JSON lines (default: %(default)s)")
    p.add_argument("--partitions", type=_at_least(1),
                   help="partitions of the sign and fit stages (default: twice Spark's default parallelism)")
    p.add_argument("--pages-per-task", type=_at_least(1), default=2000,
                   help="a site's pages one clean task takes: larger sites spread over several "
                        "(default: %(default)s)")
    p.add_argument("--paths-prefix", default="",
                   help="joined to each line of a paths list (Common Crawl's: https://data.commoncrawl.org/)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting (repeatable), e.g. spark.executor.memory=2g")
    p.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")


def _session(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("scrapy-deboiler").config("spark.ui.showConsoleProgress", "false")
    if args.master:
        builder = builder.master(args.master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit, which sets the master
        builder = builder.master("local[*]")
    for setting in args.conf:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf {setting!r}: expected KEY=VALUE")
        builder = builder.config(key.strip(), value)
    master = args.master or ("" if "PYSPARK_GATEWAY_PORT" in os.environ else "local[*]")
    if master.startswith("local"):  # the workers are this machine's: this Python, with this install
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")  # the command's choice: its own lines stay readable
    return spark


def run(args: argparse.Namespace) -> int:
    """The command; exit codes as ``clean``'s: 1 when an input ended early
    or no record could be cleaned, 2 for a usage or setup error."""
    from ._spark import _log, write_records
    from ._spark_input import expand, is_table
    from ._spark_job import clean_items, save_models, source_items
    from ._store import SignatureStore

    log = logging.getLogger("scrapy_deboiler")
    if len(args.paths) < 2:
        raise ValueError("give at least one input and the output folder (IN... OUT)")
    *inputs, out = args.paths
    out = out if "://" in out else os.path.abspath(out)
    if "://" not in out and os.path.isdir(out) and os.listdir(out) and not args.overwrite:
        raise ValueError(f"{out}: the output folder exists and is not empty (--overwrite replaces it)")
    options = _options(args)
    store = SignatureStore(args.signatures) if args.signatures else None
    if store is not None:
        os.makedirs(args.signatures, exist_ok=True)
        store.sweep()
    paths = expand(inputs, args.paths_prefix)
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        print("scrapy-deboiler: error: the spark command needs PySpark: pip install 'scrapy-deboiler[spark]'",
              file=sys.stderr)
        return 2
    from pyspark.sql import SparkSession

    ours = SparkSession.getActiveSession() is None  # a session of the caller's (tests, notebooks) stays
    start = time.perf_counter()
    spark = _session(args)
    started = time.perf_counter()
    log.info("Spark %s, master %s, started in %.1fs", spark.version, spark.sparkContext.master, started - start)
    try:
        tables = [spark.read.parquet(p) for p in paths if is_table(p)]
        files = [p for p in paths if not is_table(p)]
        items = source_items(spark.sparkContext, files, tables, options)
        result = clean_items(spark.sparkContext, items, options, store, args.partitions, args.pages_per_task)
        write_records(spark, result, out, args.format, args.overwrite)
        if store is not None:
            saved, refused = save_models(result, store)
            log.info("%d models saved to %s, %d not saved (they emptied their pages)", saved, args.signatures,
                     refused)
        result.close()
    except Exception as e:
        if not type(e).__module__.startswith(("pyspark", "py4j")):
            raise
        # Spark's own errors (an output path that exists, a cluster that fails): its first line, no traceback.
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"scrapy-deboiler: error: Spark: {type(e).__name__}: {first}", file=sys.stderr)
        return 2
    finally:
        if ours:
            spark.stop()
    _log(result)
    totals = result.totals
    log.info("%d records written to %s (%s) in %.1fs after the start", totals["records"], out, args.format,
             time.perf_counter() - started)
    left_out = result.archive
    if left_out:
        log.info("archive: %d records, %d HTML responses; left out: %d not responses, %d with a non-2xx status, "
                 "%d not HTML%s", left_out["records"], left_out["html"], left_out["not_response"],
                 left_out["status"], left_out["not_html"],
                 (f", {left_out['revisit']} revisits (deduplicated: no body of their own)"
                  if left_out["revisit"] else "")
                 + (f", {left_out['undecodable']} HTML bodies not decodable" if left_out["undecodable"] else ""))
    for why in result.damage:
        print(f"scrapy-deboiler: error: {why}; the output holds their records", file=sys.stderr)
    if result.damage:
        return 1
    if totals["records"] and totals["error"] == totals["records"]:
        print(f"scrapy-deboiler: error: none of the {totals['records']} records could be cleaned: "
              f"{result.first_error}", file=sys.stderr)
        return 1
    return 0
