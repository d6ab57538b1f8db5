"""Broad crawls: thousands of small sites, held HTML and peak RSS.

    python benchmarks/bench_broad.py [--sites 1000,5000] [--pages 3]

A local HTTP server (in this process) serves N sites of a few pages (about
10 KB each, sharing a template per site). Each crawl runs in a fresh process
with the pipeline off, on with its defaults, and on with Scrapy's scraper
slot opened wide (SCRAPER_SLOT_MAX_ACTIVE_SIZE 1 GiB, as broad crawls often
set it) with and without DEBOILER_MAX_HELD_BYTES, and with DEBOILER_MAX_SITES
lowered to 500 (sites kept in memory). Items carry a URL on the
site's own host name (s17.broad.test) so the pipeline sees N sites, while
every request goes to 127.0.0.1. No site reaches DEBOILER_MIN_PAGES.
Reports pages/s, peak RSS and the largest number of bytes held.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
WORDS = ("harbor meadow copper violet orbit quiet signal garden forest engine canvas marble "
         "winter summer bridge pocket ladder mirror thunder velvet basket candle").split()

CHILD = r"""
import json, resource, sys, time
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess
port, sites, pages, config = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])

class Broad(scrapy.Spider):
    name = "broad"
    async def start(self):
        for i in range(sites):
            yield scrapy.Request(f"http://127.0.0.1:{port}/s{i}/", cb_kwargs={"site": i})
    def parse(self, response, site):
        for j in range(pages):
            yield response.follow(f"/s{site}/p{j}", self.page, cb_kwargs={"site": site, "j": j})
    def page(self, response, site, j):
        yield {"url": f"http://s{site}.broad.test/p{j}"}

settings = {"LOG_LEVEL": "WARNING", "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False,
            "CONCURRENT_REQUESTS": 32, "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
            "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
            "DEBOILER_SIGNATURES_DIR": sys.argv[5], **config}
process = CrawlerProcess(settings)
crawler = process.create_crawler(Broad)
times = {}
def opened(**kw): times.setdefault("start", time.perf_counter())
def closed(**kw): times.setdefault("end", time.perf_counter())
crawler.signals.connect(opened, signals.spider_opened)
crawler.signals.connect(closed, signals.spider_closed)
process.crawl(crawler)
process.start()
stats = crawler.stats.get_stats()
print(json.dumps({
    "items": stats.get("item_scraped_count", 0), "seconds": times["end"] - times["start"],
    "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "max_held_bytes": stats.get("deboiler/max_held_bytes", 0),
    "released": {k.split("/")[-1]: v for k, v in stats.items() if k.startswith("deboiler/released/")},
}))
"""

CONFIGS = {
    "off": {},
    "on, defaults": {"ADDONS": {"scrapy_deboiler.Addon": 100}},
    "on, DEBOILER_MAX_SITES 500": {"ADDONS": {"scrapy_deboiler.Addon": 100}, "DEBOILER_MAX_SITES": 500},
    "on, wide slot, budget 16 MiB": {"ADDONS": {"scrapy_deboiler.Addon": 100},
                                     "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 2**30,
                                     "DEBOILER_MAX_HELD_BYTES": 16 * 2**20},
    "on, wide slot, no budget": {"ADDONS": {"scrapy_deboiler.Addon": 100},
                                 "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 2**30, "DEBOILER_MAX_HELD_BYTES": 2**40},
}


def page(site: int, j: int) -> bytes:
    rng = random.Random(f"{site}/{j}")
    nav = "".join(f'<li><a href="/s{site}/{w}">{w.title()}</a></li>' for w in WORDS[site % 7:][:8])
    body = "".join(f"<p>{' '.join(rng.choice(WORDS) for _ in range(60))}.</p>" for _ in range(20))
    return (f"<!DOCTYPE html><html><head><title>Site {site} page {j}</title></head><body>"
            f"<header><nav><ul>{nav}</ul></nav></header><main><h1>Page {j}</h1>{body}</main>"
            f"<footer>Site {site}, all rights reserved. <a href='/s{site}/about'>About</a></footer>"
            "</body></html>").encode()


class Handler(BaseHTTPRequestHandler):
    pages = 3

    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if len(parts) == 1:
            links = "".join(f'<a href="p{j}">{j}</a>' for j in range(self.pages))
            data = f"<html><body>{links}</body></html>".encode()
        else:
            data = page(int(parts[0][1:]), int(parts[1][1:]))
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", default="1000,5000")
    ap.add_argument("--pages", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    Handler.pages = args.pages
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    rows = []
    print(f"{'sites':>6} {'config':<32} {'items':>6} {'pages/s':>8} {'peak RSS MiB':>13} "
          f"{'max held MiB':>13}  released")
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, "child.py")  # a file: Scrapy inspects callbacks' source
        with open(child, "w") as f:
            f.write(CHILD)
        for n in map(int, args.sites.split(",")):
            for name, config in CONFIGS.items():
                proc = subprocess.run([sys.executable, child, str(port), str(n), str(args.pages),
                                       json.dumps(config), os.path.join(tmp, f"sigs-{n}-{len(rows)}")],
                                      capture_output=True, text=True, timeout=3600)
                if proc.returncode:
                    sys.exit(proc.stderr[-3000:])
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r.update(sites=n, config=name)
                rows.append(r)
                print(f"{n:>6} {name:<32} {r['items']:>6} {r['items'] / r['seconds']:>8.1f} "
                      f"{r['max_rss_mib']:>13.0f} {r['max_held_bytes'] / 2**20:>13.1f}  {r['released']}",
                      flush=True)
    server.shutdown()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
