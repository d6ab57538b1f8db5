"""Pages/s of the Spark job on ``local[N]`` against ``scrapy-deboiler clean
--jobs N`` on the same files, in one run; Spark's start reported apart.

    python benchmarks/bench_spark.py FILE... [--as-warc] [--cores 2] [--mode content] [--rounds 1]
        [--json out.json]

FILE: WARC/ARC or JSON Lines files (give the same files to both); with
``--as-warc`` each gzip JSON Lines file is first written as a gzip WARC file
of the same pages (``bench_cli.write_warc``, untimed) and both read that. ``clean``
takes one input, so it runs once a file (sites are grouped within a file) and
its times add up; Spark takes them all at once (sites grouped across files).

- ``clean --jobs N``: a fresh process a file, wall time (its start included:
  some 0.3 s).
- Spark: the session's start (a JVM, ``local[N]``) timed alone, then the job
  (read, sign, fit, clean, write JSON Lines part files) in that session, twice:
  the first job pays the Python workers' start and the JVM's warm-up too.

Each round runs every system once, in turn; the best round counts. The
records are compared too: the job's lines, sorted, must equal ``clean``'s
(one file), or its records by URL the CLI's (several files may share sites).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def _clean(paths: list[str], cores: int, mode: str, folder: str) -> tuple[float, int, list[bytes]]:
    """(seconds, records, lines) of ``clean --jobs cores`` over each file."""
    seconds, lines = 0.0, []
    for i, path in enumerate(paths):
        out = os.path.join(folder, f"cli-{i}.jsonl")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "scrapy_deboiler", "clean", path, out, "--jobs", str(cores),
                        "--mode", mode, "--no-progress"], check=False, capture_output=True)
        seconds += time.perf_counter() - start
        with open(out, "rb") as f:
            lines.extend(f.read().splitlines())
    return seconds, len(lines), lines


def _spark_jobs(paths: list[str], cores: int, mode: str, folder: str,
                jobs: int) -> tuple[float, list[float], list[bytes]]:
    """(start seconds, each job's seconds, the last job's lines)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from scrapy_deboiler._batch_options import BatchOptions
    from scrapy_deboiler._spark import write_records
    from scrapy_deboiler._spark_input import expand
    from scrapy_deboiler._spark_job import clean_items, source_items

    start = time.perf_counter()
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("bench-spark")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter() - start
    times, lines = [], []
    try:
        for j in range(jobs):
            out = os.path.join(folder, f"spark-{j}")
            t = time.perf_counter()
            options = BatchOptions(mode=mode, progress=False)
            run = clean_items(spark.sparkContext, source_items(spark.sparkContext, expand(paths), [], options), options)
            write_records(spark, run, out, "jsonl")
            run.close()
            times.append(time.perf_counter() - t)
            lines = sorted(line for name in sorted(os.listdir(out)) if name.startswith("part-")
                           for line in open(os.path.join(out, name), "rb").read().splitlines())
    finally:
        spark.stop()
    return started, times, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--mode", default="content", choices=("content", "boilerplate"))
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--as-warc", action="store_true", help="clean the pages as gzip WARC files")
    args = ap.parse_args()
    warcs = tempfile.mkdtemp(prefix="bench-spark-warc-")
    if args.as_warc:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_cli import write_warc

        converted = []
        for i, path in enumerate(args.files):
            converted.append(os.path.join(warcs, f"pages-{i}.warc.gz"))
            assert write_warc(path, converted[-1]), "--as-warc needs warcio"
        args.files = converted
    best: dict[str, float] = {}
    result: dict = {"files": args.files, "cores": args.cores, "mode": args.mode}
    for _ in range(args.rounds):
        folder = tempfile.mkdtemp(prefix="bench-spark-")
        try:
            cli_s, records, cli_lines = _clean(args.files, args.cores, args.mode, folder)
            start_s, job_s, spark_lines = _spark_jobs(args.files, args.cores, args.mode, folder, 2)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        for key, value in (("clean", cli_s), ("spark_start", start_s), ("spark_first_job", job_s[0]),
                           ("spark_job", job_s[1])):
            best[key] = min(best.get(key, value), value)
        if len(args.files) == 1:
            result["identical"] = sorted(cli_lines) == spark_lines
        else:
            by_url = {json.loads(line)["url"]: json.loads(line).get("clean_text") for line in cli_lines}
            result["same_clean_text_share"] = sum(
                by_url.get(json.loads(line)["url"]) == json.loads(line).get("clean_text")
                for line in spark_lines) / max(1, len(spark_lines))
        result["records"] = records
        result["spark_records"] = len(spark_lines)
    result["seconds"] = best
    result["pages_per_s"] = {k: records / v for k, v in best.items() if k != "spark_start" and v}
    print(f"{records} records, {args.cores} cores, {args.mode} mode")
    print(f"  clean --jobs {args.cores}: {best['clean']:7.1f} s  {records / best['clean']:7.1f} pages/s")
    print(f"  spark local[{args.cores}] start: {best['spark_start']:7.1f} s")
    print(f"  spark first job: {best['spark_first_job']:7.1f} s  {records / best['spark_first_job']:7.1f} pages/s")
    print(f"  spark next job:  {best['spark_job']:7.1f} s  {records / best['spark_job']:7.1f} pages/s")
    print(f"  identical records: {result.get('identical', result.get('same_clean_text_share'))}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    shutil.rmtree(warcs, ignore_errors=True)


if __name__ == "__main__":
    main()
