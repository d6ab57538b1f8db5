"""Speed as users run it: whole processes over gzip JSON Lines, in one run.

    python benchmarks/bench_cli.py --data DEV.jsonl.gz [--min-site-pages 5] [--rounds 3]
        [--json out.json] [--repeat 1]

Each system is a fresh process reading the same gzip JSON Lines file of pages
(sites with 5+ pages) and, where it writes, gzip JSON Lines out:

- ``lxml parse only``: read, decode the JSON, parse every page with lxml (the
  floor for anything that parses the pages; with the same gzip and JSON
  libraries as the CLI, as have the peers);
- ``scrapy-deboiler clean`` in content and boilerplate mode (``--domain-field
  domain``), with ``--jobs 1`` and ``--jobs 2``, content mode with
  ``--metadata`` (its cost: the ratio of CPU time a page), and over the same pages as a
  gzip WARC file (when ``warcio`` is installed);
- ``trafilatura`` (no comments) and the original ``deboiler`` (memory mode,
  fit and transform per site), when installed, each reading and writing as
  the CLI does.

Times are the processes' CPU time (user + system, their worker processes
included) and, for ``--jobs``, wall time; peak RSS is the largest resident
size of the process (or of one of its workers). Each round runs every system
once, in turn; the best round counts, so a busy moment hurts all alike. Only
the ratios mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402

# Every system reads (and writes) through the same fast I/O as the CLI
# (isal's gzip, orjson), so the ratios compare the work on the pages.
IO = """
import sys
import orjson
try:
    from isal import igzip as gzip
except ImportError:
    import gzip
"""

PARSE_ONLY = IO + """
from lxml import etree
with gzip.open(sys.argv[1], "rb") as f:
    for line in f:
        html = orjson.loads(line)["html"]
        etree.fromstring(html.encode("utf-8"), etree.HTMLParser(encoding="utf-8"))
"""

TRAFILATURA = IO + """
import trafilatura
with gzip.open(sys.argv[1], "rb") as f, gzip.open(sys.argv[2], "wb") as out:
    for line in f:
        r = orjson.loads(line)
        text = trafilatura.extract(r.pop("html"), include_comments=False) or ""
        out.write(orjson.dumps({**r, "clean_text": text}) + b"\\n")
"""

DEBOILER = IO + """
import contextlib, logging, os
from collections import defaultdict
from deboiler import Deboiler
from deboiler.dataset import ListDataset
logging.getLogger().setLevel(logging.WARNING)
sites = defaultdict(list)
with gzip.open(sys.argv[1], "rb") as f:
    for line in f:
        r = orjson.loads(line)
        sites[r["domain"]].append({"url": r["url"], "content": r["html"], "status": 200,
                                   "content_type": "text/html"})
with gzip.open(sys.argv[2], "wb") as out, open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
    for domain, records in sites.items():
        try:  # deboiler aborts a site on some pages
            data = ListDataset(records, verbose=False)
            d = Deboiler(n_processes=1, operation_mode="memory", domain=domain)
            d.fit(data)
            for page in d.transform(data):
                out.write(orjson.dumps({"url": page.url, "clean_text": page.text}) + b"\\n")
        except Exception:
            pass
"""


def has(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def run(cmd: list[str]) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak RSS MiB) of one process and its
    children. Linux counts a child's peak RSS from the parent's at fork, so
    this process stays small: the pages are prepared in a child of their own."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd} failed: {err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def write_pages(path: str, data: str, min_pages: int, repeat: int) -> int:
    """The pages of sites with ``min_pages``+ pages; ``repeat`` copies under
    new hosts (copy k of ``a.com`` is ``r<k>.a.com``)."""
    records = []
    with gzip.open(data, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            records.append({"id": r["id"], "url": r["url"], "html": r["html"], "domain": r["domain"]})
    sizes = Counter(r["domain"] for r in records)
    records = [r for r in records if sizes[r["domain"]] >= min_pages]
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
        for k in range(repeat):
            for r in records:
                if k:
                    host = r["url"].split("/")[2]
                    r = {**r, "id": f"{r['id']}/{k}", "domain": f"r{k}.{r['domain']}",
                         "url": r["url"].replace(host, f"r{k}.{host}", 1)}
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return len(records) * repeat


def write_warc(src: str, path: str) -> bool:
    """The same pages as WARC response records (gzip per record)."""
    try:
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter
    except ImportError:
        return False
    import io

    with gzip.open(src, "rt", encoding="utf-8") as f, open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for line in f:
            r = json.loads(line)
            body = r["html"].encode("utf-8")
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                  ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(r["url"], "response", payload=io.BytesIO(body),
                                                          http_headers=headers))
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--min-site-pages", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1, help="copies of the pages under new hosts")
    ap.add_argument("--systems", help="only these (comma-separated names as printed)")
    ap.add_argument("--json")
    ap.add_argument("--prepare", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.prepare:  # in a child, so this process stays small (see run())
        folder = args.prepare
        n = write_pages(os.path.join(folder, "pages.jsonl.gz"), args.data, args.min_site_pages, args.repeat)
        write_warc(os.path.join(folder, "pages.jsonl.gz"), os.path.join(folder, "pages.warc.gz"))
        with open(os.path.join(folder, "count"), "w") as f:
            f.write(str(n))
        return
    tmp = tempfile.mkdtemp(prefix="bench-cli-")
    try:
        subprocess.run([sys.executable, __file__, "--data", args.data, "--min-site-pages", str(args.min_site_pages),
                        "--repeat", str(args.repeat), "--prepare", tmp], check=True)
        with open(os.path.join(tmp, "count")) as f:
            n = int(f.read())
        pages = os.path.join(tmp, "pages.jsonl.gz")
        out = os.path.join(tmp, "out.jsonl.gz")
        cli = [os.path.join(os.path.dirname(sys.executable), "scrapy-deboiler"), "clean"]
        systems: dict[str, list[str]] = {"lxml parse only": [sys.executable, "-c", PARSE_ONLY, pages]}
        for mode in ("content", "boilerplate"):
            for jobs in (1, 2):
                systems[f"{mode} --jobs {jobs}"] = [*cli, pages, out, "--domain-field", "domain",
                                                    "--mode", mode, "--jobs", str(jobs)]
        systems["content --metadata --jobs 1"] = [*systems["content --jobs 1"], "--metadata"]
        warc = os.path.join(tmp, "pages.warc.gz")
        if os.path.exists(warc):
            systems["content, WARC in"] = [*cli, warc, out, "--mode", "content"]
            systems["content, JSONL in, by host"] = [*cli, pages, out, "--mode", "content"]
        if has("trafilatura"):
            systems["trafilatura"] = [sys.executable, "-c", TRAFILATURA, pages, out]
        if has("deboiler"):
            systems["deboiler"] = [sys.executable, "-c", DEBOILER, pages, out]
        if args.systems:
            keep = set(args.systems.split(","))
            systems = {k: v for k, v in systems.items() if k in keep or k == "lxml parse only"}
        best: dict[str, list[float]] = defaultdict(lambda: [float("inf")] * 3)
        cpu: dict[str, list[float]] = defaultdict(list)  # each round's CPU seconds
        for _ in range(args.rounds):
            for name, cmd in systems.items():
                got = run(cmd)
                best[name] = [min(a, b) for a, b in zip(best[name], got)]
                cpu[name].append(got[0])
        rate = {name: n / b[0] for name, b in best.items()}
        print(f"{n} pages, best of {args.rounds} rounds, whole processes, gzip JSON Lines in and out")
        print(f"{'system':<30} {'pages/CPU-s':>11} {'wall s':>8} {'peak RSS MiB':>13}")
        for name, b in best.items():
            print(f"{name:<30} {rate[name]:>11.1f} {b[1]:>8.2f} {b[2]:>13.0f}")
        ratios = {}
        if "trafilatura" in rate and "content --jobs 1" in rate:
            ratios["content / trafilatura"] = rate["content --jobs 1"] / rate["trafilatura"]
        if "boilerplate --jobs 1" in rate:
            ratios["boilerplate / lxml parse only"] = rate["boilerplate --jobs 1"] / rate["lxml parse only"]
        if "content, WARC in" in rate:
            ratios["WARC in / JSON Lines in (content, by host)"] = (
                rate["content, WARC in"] / rate["content, JSONL in, by host"])
        for mode in ("content", "boilerplate"):
            if f"{mode} --jobs 2" in best:
                ratios[f"{mode}: --jobs 2 wall-time speed-up"] = (
                    best[f"{mode} --jobs 1"][1] / best[f"{mode} --jobs 2"][1])
        if "content --metadata --jobs 1" in rate:
            ratios["content --metadata / content (CPU time a page)"] = (
                rate["content --jobs 1"] / rate["content --metadata --jobs 1"])
            # Run by run, the two side by side: steadier where the machine's
            # speed drifts from minute to minute (a shared virtual machine).
            ratios["  the same, median of the rounds' ratios"] = statistics.median(
                m / c for m, c in zip(cpu["content --metadata --jobs 1"], cpu["content --jobs 1"]))
        if "deboiler" in rate:
            ratios["boilerplate / deboiler"] = rate["boilerplate --jobs 1"] / rate["deboiler"]
        for name, r in ratios.items():
            print(f"{name}: {r:.2f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"pages": n, "pages_per_cpu_s": rate, "best": best, "ratios": ratios}, f, indent=2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
