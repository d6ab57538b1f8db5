"""Crawl throughput with the pipeline off and on, in one run.

    python benchmarks/bench_crawl.py [--pages-per-site 350] [--rounds 2] [--set NAME=VALUE ...]

Serves the demo website (three sites) on 127.0.0.1, then crawls all of it
with the example project's spider, each crawl in a fresh process: without
scrapy-deboiler, and with its add-on (middleware and pipeline). Reports
pages/s (best round), the ratio on/off, and each crawl's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "..", "example_project")

CHILD = r"""
import json, resource, sys, time
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.utils.project import get_project_settings
settings = get_project_settings()
on, urls, out, sigdir = sys.argv[1] == "on", sys.argv[2], sys.argv[3], sys.argv[4]
settings.set("ADDONS", {"scrapy_deboiler.Addon": 100} if on else {})
if on:
    settings.setdict(json.loads(sys.argv[5]), priority="cmdline")
settings.set("DEBOILER_SIGNATURES_DIR", sigdir)
settings.set("DEBOILER_FAST_EXPORTERS", True)  # the orjson feed exporters, as measured before they became opt-in
settings.set("FEEDS", {out: {"format": "jsonlines"}})
settings.set("LOG_LEVEL", "WARNING")
settings.set("ROBOTSTXT_OBEY", False)
process = CrawlerProcess(settings)
crawler = process.create_crawler("site")
times = {}
def opened(**kw): times.setdefault("start", time.perf_counter())
def closed(**kw): times.setdefault("end", time.perf_counter())
crawler.signals.connect(opened, signals.spider_opened)  # signals hold handlers weakly
crawler.signals.connect(closed, signals.spider_closed)
process.crawl(crawler, start_urls=urls, max_pages="100000")
process.start()
print(json.dumps({
    "pages": crawler.stats.get_value("response_received_count", 0),
    "items": crawler.stats.get_value("item_scraped_count", 0),
    "seconds": times["end"] - times["start"],
    "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "cleaned": crawler.stats.get_value("deboiler/items_cleaned", 0),
}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages-per-site", type=int, default=350)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--port", type=int, default=8751)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for the crawls with the pipeline on (repeatable)")
    ap.add_argument("--json")
    args = ap.parse_args()
    extra = json.dumps(dict(kv.split("=", 1) for kv in args.set))
    sys.path.insert(0, PROJECT)
    from website import serve

    servers = serve(args.port, args.pages_per_site)
    urls = ",".join(u for u, _ in servers)
    results: dict[str, list[dict]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for mode in ("off", "on"):
                out = os.path.join(tmp, f"{mode}{r}.jsonl")
                sigdir = os.path.join(tmp, f"sigs{r}")  # a fresh store: every site is fitted
                proc = subprocess.run([sys.executable, "-c", CHILD, mode, urls, out, sigdir, extra],
                                      cwd=PROJECT, capture_output=True, text=True, timeout=600)
                if proc.returncode:
                    sys.exit(proc.stderr[-3000:])
                results[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for _, server in servers:
        server.shutdown()
    best = {m: max(rs, key=lambda x: x["pages"] / x["seconds"]) for m, rs in results.items()}
    rate = {m: b["pages"] / b["seconds"] for m, b in best.items()}
    print(f"{best['on']['pages']} pages of {len(servers)} sites, best of {args.rounds} rounds")
    print(f"{'pipeline':<10} {'pages/s':>8} {'peak RSS MiB':>13} {'items cleaned':>14}")
    for m in ("off", "on"):
        print(f"{m:<10} {rate[m]:>8.1f} {best[m]['max_rss_mib']:>13.0f} {best[m]['cleaned']:>14}")
    pairs = [on["pages"] / on["seconds"] / (off["pages"] / off["seconds"])
             for on, off in zip(results["on"], results["off"])]
    print(f"throughput ratio on/off: {rate['on'] / rate['off']:.2f} (best rounds), "
          f"per round {min(pairs):.2f}-{max(pairs):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "ratio": rate["on"] / rate["off"]}, f, indent=2)


if __name__ == "__main__":
    main()
