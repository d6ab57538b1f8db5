"""The batch on Apache Spark (``scrapy-deboiler spark``, ``clean_dataframe``)
on a real local Spark (``local[2]``, Java 17): every record as the CLI
writes it, in both modes and with other partitionings; models reused both
ways; bad records and truncated archives; a skewed input under a memory
limit. Collected only where pyspark is installed (conftest.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen import site_pages
from test_cli import NEUTRAL, read, write
from test_warc import crawl  # noqa: F401 (the fixture: wget's WARC files of the demo website)

from scrapy_deboiler._cli import main
from scrapy_deboiler._warc import archive_pages


@pytest.fixture(scope="module")
def spark():
    """One local Spark for the module (its start costs some 10 s)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("scrapy-deboiler-tests")
               .config("spark.ui.showConsoleProgress", "false").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def lines_of(folder: Path) -> list[bytes]:
    """The part files' lines, sorted (Spark's order is by site, the CLI's the input's)."""
    return sorted(line for part in sorted(folder.glob("part-*")) for line in part.read_bytes().splitlines())


def cli_lines(path: Path) -> list[bytes]:
    return sorted(path.read_bytes().splitlines())


def run_spark(spark, *args) -> int:
    """The command in this process, on the module's session."""
    return main(["spark", *map(str, args)])


def html_responses(warc: Path) -> int:
    return sum(1 for _ in archive_pages(warc))


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
def test_the_demo_websites_warc_gives_the_clis_records_whatever_the_partitioning(spark, tmp_path, crawl, mode):
    folder, pages = crawl
    warc = folder / "crawl.warc.gz"
    assert main(["clean", str(warc), str(tmp_path / "cli.jsonl"), "--mode", mode, "--min-pages", "3",
                 "--no-progress"]) == 0
    expected = cli_lines(tmp_path / "cli.jsonl")
    assert len(expected) == html_responses(warc) == len(pages)
    for partitions in (1, 5):
        out = tmp_path / f"spark-{partitions}"
        assert run_spark(spark, warc, out, "--format", "jsonl", "--mode", mode, "--min-pages", "3",
                         "--partitions", partitions, "--pages-per-task", 7) == 0
        assert lines_of(out) == expected  # byte for byte, every record once
    records = [json.loads(line) for line in expected]
    assert {r["deboiler"]["status"] for r in records} <= {"cleaned", "emptied"}
    for r in records:
        assert set(r) == {"warc_record_id", "url", "warc_date", "clean_text", "clean_html", "clean_title", "deboiler"}


def generated(tmp_path: Path) -> tuple[Path, list[dict]]:
    """Three generated sites (one of a single page), JSON Lines with a field
    of the user's, and records that are no pages."""
    records = [{"url": u, "html": h, "lang": "en"} for s, n in (("a.example", 14), ("b.example", 9), ("c.example", 1))
               for u, h, _ in site_pages(s, n)]
    records += [{"url": "http://d.example/1"}, {"url": "http://d.example/2", "html": 42}]
    path = tmp_path / "pages.jsonl"
    write(path, records)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"url": "http://d.example/3", "html": \n')  # not JSON
    return path, records


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
def test_generated_sites_markdown_and_bad_records_as_the_cli_writes_them(spark, tmp_path, mode):
    path, records = generated(tmp_path)
    assert main(["clean", str(path), str(tmp_path / "cli.jsonl"), "--mode", mode, "--markdown",
                 "--no-progress"]) == 0
    assert run_spark(spark, path, tmp_path / "out", "--format", "jsonl", "--mode", mode, "--markdown") == 0
    got = lines_of(tmp_path / "out")
    assert got == cli_lines(tmp_path / "cli.jsonl") and len(got) == len(records) + 1
    errors = [json.loads(line)["deboiler"] for line in got if b'"error"' in line]
    reasons = sorted(e["reason"] for e in errors if e["status"] == "error")
    assert len(reasons) == 3 and reasons[0].startswith("'html' holds int") and "invalid JSON on line" in reasons[1]


def test_parquet_out_and_a_dataframe_in(spark, tmp_path):
    """The default format is Parquet with the status a struct; a DataFrame
    (HTML as text, or as bytes) is cleaned as the same records from JSON Lines."""
    from scrapy_deboiler import clean_dataframe

    path, records = generated(tmp_path)
    assert main(["clean", str(path), str(tmp_path / "cli.jsonl"), "--no-progress"]) == 0
    cli = {r["url"]: r for r in read(tmp_path / "cli.jsonl") if "clean_text" in r}
    assert run_spark(spark, path, tmp_path / "pq") == 0
    table = spark.read.parquet(str(tmp_path / "pq"))
    assert table.count() == len(records) + 1
    rows = {r["url"]: r for r in table.where("deboiler.status != 'error'").collect()}
    assert rows.keys() == cli.keys()
    assert all(rows[u]["clean_text"] == cli[u]["clean_text"] and rows[u]["lang"] == "en" for u in cli)
    pages = [r for r in records if isinstance(r.get("html"), str)]
    for html_type in ("string", "binary"):
        df = spark.createDataFrame([(r["url"], r["html"] if html_type == "string" else r["html"].encode(), r["lang"])
                                    for r in pages], f"url string, html {html_type}, lang string")
        out = clean_dataframe(df, mode="content", partitions=3)
        got = {r["url"]: r for r in out.collect()}
        assert len(got) == out.count() == len(pages)
        assert all(got[u]["clean_text"] == cli[u]["clean_text"] for u in got)
        assert got["http://a.example/articles/0000.html"]["deboiler"]["model"] == "fitted"


def test_models_go_both_ways_between_spark_and_the_cli(spark, tmp_path):
    path, _ = generated(tmp_path)
    sigs = tmp_path / "sigs"
    assert run_spark(spark, path, tmp_path / "a", "--format", "jsonl", "--signatures", sigs) == 0
    files = sorted(p.name for p in sigs.glob("*.json"))
    assert len(files) == 2 and all(f.startswith(("a.example--", "b.example--")) for f in files)
    # The CLI takes the cluster's models as files, and gives what Spark gives with them.
    assert main(["clean", str(path), str(tmp_path / "cli.jsonl"), "--signatures", str(sigs), "--no-progress"]) == 0
    assert run_spark(spark, path, tmp_path / "b", "--format", "jsonl", "--signatures", sigs) == 0
    again = lines_of(tmp_path / "b")
    assert again == cli_lines(tmp_path / "cli.jsonl")
    status = [json.loads(line)["deboiler"] for line in again]
    assert sum(s.get("model") == "file" for s in status) == 14 + 9
    # The models from files clean as they did when fitted.
    texts = [{r["url"]: r["clean_text"] for r in map(json.loads, lines) if "clean_text" in r}
             for lines in (lines_of(tmp_path / "a"), again)]
    assert texts[0] == texts[1] and len(texts[0]) == 14 + 9 + 1


@pytest.mark.parametrize("name", ["crawl.warc.gz", "plain.warc"])
def test_a_truncated_warc_gives_the_records_before_the_cut_and_says_so(spark, tmp_path, crawl, capsys, name):
    folder, _ = crawl
    data = (folder / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(data[: int(len(data) * 0.6)])
    assert main(["clean", str(cut), str(tmp_path / "cli.jsonl"), "--no-progress"]) == 1
    capsys.readouterr()
    assert run_spark(spark, cut, folder / "crawl.warc.gz", tmp_path / "out", "--format", "jsonl") == 1
    err = capsys.readouterr().err
    assert "truncated" in err and str(cut) in err and "the output holds their records" in err
    got = [json.loads(line) for line in lines_of(tmp_path / "out")]
    before = read(tmp_path / "cli.jsonl")
    assert 0 < len(before) < html_responses(folder / name)
    # Every record before the cut, and every record of the whole file beside it.
    assert len(got) == len(before) + html_responses(folder / "crawl.warc.gz")
    assert {o["warc_record_id"] for o in before} <= {o["warc_record_id"] for o in got}


def test_importing_the_package_or_cleaning_without_spark_never_imports_pyspark(tmp_path):
    code = ("import sys, scrapy_deboiler; from scrapy_deboiler._cli import _parser; _parser(); "
            "assert 'pyspark' not in sys.modules, 'pyspark imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=NEUTRAL)


#: The memory bound docs/spark.md states for a Python worker, MiB.
WORKER_BOUND_MIB = 400


def test_a_skewed_input_under_a_memory_limit_loses_nothing_and_spreads_the_big_site(tmp_path):
    """One host of 20,000 pages beside 2,000 one-page hosts, the JVM held to
    768 MiB and the Python workers' sort buffers to 64 MiB: every record
    once, the big host's pages all cleaned with its model, in buckets of
    their own tasks, and no Python worker over the bound docs/spark.md states."""
    path = tmp_path / "skew.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for u, h, _ in site_pages("big.example", 20_000, paragraphs=1):
            f.write(json.dumps({"url": u, "html": h}) + "\n")
        for i in range(2000):
            u, h, _ = site_pages(f"s{i}.example", 1, paragraphs=1)[0]
            f.write(json.dumps({"url": u, "html": h}) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_deboiler", "spark", str(path), str(tmp_path / "out"), "--format", "jsonl",
         "--master", "local[2]", "--conf", "spark.driver.memory=768m", "--conf", "spark.python.worker.memory=64m",
         "--conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, cwd=NEUTRAL, env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    urls: list[str] = []
    big = 0
    per_task = []  # the big host's pages in each clean task's part file
    for part in (tmp_path / "out").glob("part-*"):
        per_task.append(0)
        with open(part, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                urls.append(rec["url"])
                if rec["url"].startswith("http://big.example/"):
                    status = rec["deboiler"]
                    big += status["status"] == "cleaned" and status["model"] == "fitted" and status["fit_pages"] == 1000
                    per_task[-1] += 1
    assert len(urls) == len(set(urls)) == 22_000
    assert big == 20_000
    # 10 buckets of about 2,000 pages (--pages-per-task), each in a task of its own.
    assert sum(n > 0 for n in per_task) == 10 and max(per_task) < 2_600, per_task
    peak = float(re.search(r"Python workers' peak memory (\d+) MiB", proc.stderr).group(1))
    assert peak < WORKER_BOUND_MIB, proc.stderr[-2000:]
    print(*(line for line in proc.stderr.splitlines() if line.startswith("INFO")), sep="\n")


def test_inputs_are_globs_folders_and_lists_of_paths(tmp_path, capsys):
    from scrapy_deboiler._spark_input import expand

    for name in ("a.warc.gz", "b.warc.gz", "c.jsonl"):
        (tmp_path / name).write_bytes(b"")
    folder = tmp_path / "parts"
    folder.mkdir()
    for name in ("part-00000", "part-00001", "_SUCCESS", ".part-00000.crc"):
        (folder / name).write_bytes(b"")
    (tmp_path / "warc.paths").write_text("# Common Crawl's form: relative paths\na.warc.gz\n\nb.warc.gz\n")
    assert expand([str(tmp_path / "*.warc.gz"), str(folder)]) == [
        str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc.gz"), str(folder / "part-00000"),
        str(folder / "part-00001")]
    assert expand([str(tmp_path / "warc.paths")], prefix=f"{tmp_path}/") == [
        str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc.gz")]
    assert expand([str(tmp_path / "warc.paths")], prefix="s3://commoncrawl/") == [
        "s3://commoncrawl/a.warc.gz", "s3://commoncrawl/b.warc.gz"]
    with pytest.raises(OSError, match="no such file"):
        expand([str(tmp_path / "missing.warc.gz")])
    # An output folder that holds something is not overwritten unasked.
    assert main(["spark", str(tmp_path / "c.jsonl"), str(folder)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    # Spark's own refusal (a URI, not checked before the job): one line, no traceback.
    assert main(["spark", str(tmp_path / "c.jsonl"), f"file://{folder}"]) == 2
    err = capsys.readouterr().err
    assert "scrapy-deboiler: error: Spark: " in err and "Traceback" not in err


def test_metadata_learned_per_site_as_the_cli_learns_it(spark, tmp_path):
    """--metadata: each site's places for its bylines are learned from the
    same pages' summaries as the CLI's, so page_metadata is the CLI's too,
    and right on every page of a blog that lists other posts' bylines."""
    from test_metadata_site import N, number, right
    from test_metadata import site_pages as blog_pages

    records = [{"url": u, "html": h} for u, h in blog_pages(N)]
    records += [{"url": u, "html": h} for u, h, _ in site_pages("a.example", 9)]
    path = tmp_path / "pages.jsonl"
    write(path, records)
    assert main(["clean", str(path), str(tmp_path / "cli.jsonl"), "--metadata", "--no-progress"]) == 0
    for partitions in (1, 3):
        out = tmp_path / f"out-{partitions}"
        assert run_spark(spark, path, out, "--format", "jsonl", "--metadata", "--partitions", partitions) == 0
        assert lines_of(out) == cli_lines(tmp_path / "cli.jsonl")
    blog = [json.loads(line) for line in lines_of(tmp_path / "out-3") if b"blog.example.com" in line]
    assert len(blog) == N
    assert all(right(r["page_metadata"], number(r["url"].replace("/post/", "/post-"))) for r in blog)


def _python_workers() -> list[int]:
    """PIDs of PySpark's forked Python workers (children of ``pyspark.daemon``)."""
    daemons, parents = set(), {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"pyspark.daemon" in cmd:
            daemons.add(int(entry))
            parents[int(entry)] = ppid
    return sorted(pid for pid, ppid in parents.items() if ppid in daemons)


def test_a_python_worker_killed_mid_job_loses_nothing(tmp_path):
    """Spark retries the task of a Python worker killed (SIGKILL) while the
    job runs, and as every stage is deterministic the retried task gives
    the same records: the output is the CLI's, every record once."""
    import signal
    import threading
    import time

    path = tmp_path / "pages.jsonl"
    write(path, [{"url": u, "html": h} for s in ("a.example", "b.example", "c.example")
                 for u, h, _ in site_pages(s, 1500, paragraphs=2)])
    assert main(["clean", str(path), str(tmp_path / "cli.jsonl"), "--no-progress"]) == 0
    killed: list[int] = []
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_deboiler", "spark", str(path), str(tmp_path / "out"), "--format", "jsonl",
         "--master", "local[2,4]", "--pages-per-task", "300", "--conf", "spark.ui.enabled=false"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=NEUTRAL,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})

    def kill_one() -> None:
        seen = None
        while proc.poll() is None and not killed:
            workers = _python_workers()
            if workers and seen is None:
                seen = time.monotonic()
            if workers and time.monotonic() - seen > 2:
                os.kill(workers[-1], signal.SIGKILL)
                killed.append(workers[-1])
            time.sleep(0.2)

    watcher = threading.Thread(target=kill_one)
    watcher.start()
    _, err = proc.communicate(timeout=900)
    watcher.join()
    assert killed, "no Python worker was seen to kill"
    assert proc.returncode == 0, err[-3000:]
    assert lines_of(tmp_path / "out") == cli_lines(tmp_path / "cli.jsonl")
