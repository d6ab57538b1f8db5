"""A crawl over 1, 2 and 3 scrapy-redis workers: the pipeline off, local, pooled.

    python benchmarks/bench_redis.py [--pages-per-site 100] [--workers 1,2,3] [--rounds 1]
        [--set DEBOILER_PROCESSES=0 ...]

Starts its own redis-server (Debian's; a free port of 127.0.0.1, no
persistence) and the demo website (three sites), then for each worker count
and mode runs that many ``scrapy crawl`` processes of the example project's
RedisSpider (``demo.settings_cluster``: scrapy-redis scheduler and
dupefilter), each a fresh process, Redis flushed between runs:

Every page's URL is a start URL, so the pages are spread over the workers.

* ``off``: no scrapy-deboiler (the baseline);
* ``local``: scrapy-deboiler without DEBOILER_REDIS_URL (each worker learns alone);
* ``pooled``: DEBOILER_REDIS_URL set (one model a site for the cluster).

Each item carries when the spider yielded it and when it left the pipelines
(a pipeline after scrapy-deboiler's), so the run reports:

* pages/s: items / (last item out - first item in), over all workers;
* site -> model: from a site's first page (on any worker) until every worker
  that saw the site cleans with a model, median over the sites;
* held latency p50/p99: time items spent between the spider and the feed;
* Redis memory per site: MEMORY USAGE of its pool and model keys (pooled).

Ratios are against ``off`` with the same number of workers, in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.abspath(os.path.join(HERE, "..", "example_project"))
sys.path.insert(0, PROJECT)

TIMED = '''
import time
from demo.spiders.cluster import ClusterSpider


class TimedSpider(ClusterSpider):
    name = "timed"

    def parse(self, response):
        for out in super().parse(response):
            if isinstance(out, dict):
                out["t_in"] = time.time()
            yield out


class StampOut:
    def process_item(self, item, spider=None):
        item["t_out"] = time.time()
        return item
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(folder: str) -> tuple[subprocess.Popen, int]:
    import redis

    port = free_port()
    proc = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port).ping()
            return proc, port
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run(n: int, mode: str, urls: list[str], redis_url: str, client, work: str, min_pages: int,
        extra: dict[str, str] | None = None) -> dict:
    client.flushall()
    client.lpush("cluster:start_urls", *[json.dumps({"url": u}) for u in urls])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([PROJECT, work]),
           "SCRAPY_SETTINGS_MODULE": "demo.settings_cluster", "REDIS_URL": redis_url,
           "MAX_IDLE_TIME_BEFORE_CLOSE": "3"}
    procs, feeds = [], []
    for _ in range(n):
        folder = tempfile.mkdtemp(dir=work)
        feed = os.path.join(folder, "items.jsonl")
        feeds.append(feed)
        s = {"SPIDER_MODULES": "demo.spiders,timed", "LOG_LEVEL": "WARNING", "ROBOTSTXT_OBEY": False,
             "FEEDS": json.dumps({feed: {"format": "jsonlines"}}),
             "ITEM_PIPELINES": json.dumps({"timed.StampOut": 900}),
             "DEBOILER_SIGNATURES_DIR": os.path.join(folder, "signatures"),
             "DEBOILER_MIN_PAGES": min_pages, "DEBOILER_REDIS_URL": redis_url if mode == "pooled" else ""}
        if mode == "off":
            s["ADDONS"] = "{}"
        else:
            s.update(extra or {})
        args = ["timeout", "-s", "KILL", "600", sys.executable, "-m", "scrapy", "crawl", "timed"]
        for key, value in s.items():
            args += ["-s", f"{key}={value}"]
        procs.append(subprocess.Popen(args, env=env, cwd=folder, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(folder, "log"), "wb")))
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"{mode} x{n}: workers exited with {codes}; logs in {work}")
    items = []
    for k, feed in enumerate(feeds):
        with open(feed, encoding="utf-8") as f:
            items += [dict(json.loads(line), worker=k) for line in f]
    t0 = min(i["t_in"] for i in items)
    t1 = max(i["t_out"] for i in items)
    latency = [i["t_out"] - i["t_in"] for i in items]
    to_model = []
    if mode != "off":
        sites: dict[str, list[dict]] = {}
        for i in items:
            sites.setdefault(i["deboiler"]["site"], []).append(i)
        for its in sites.values():
            first = min(i["t_in"] for i in its)
            per_worker = {}
            for i in its:
                if i["deboiler"]["status"] == "cleaned" and not i["deboiler"].get("provisional"):
                    per_worker[i["worker"]] = min(per_worker.get(i["worker"], 1e300), i["t_out"])
            if len(per_worker) == len({i["worker"] for i in its}):
                to_model.append(max(per_worker.values()) - first)
    memory = None
    if mode == "pooled":
        keys = list(client.scan_iter(match="deboiler:*pool:*")) + list(client.scan_iter(match="deboiler:*model:*"))
        sites_n = len(list(client.scan_iter(match="deboiler:*model:*")))
        memory = sum(client.memory_usage(k) or 0 for k in keys) / max(1, sites_n)
    return {
        "workers": n, "mode": mode, "items": len(items), "distinct": len({i["url"] for i in items}),
        "seconds": t1 - t0, "pages_s": len(items) / (t1 - t0),
        "site_to_model_s": statistics.median(to_model) if to_model else float("nan"),
        "held_p50_s": percentile(latency, 0.5), "held_p99_s": percentile(latency, 0.99),
        "redis_bytes_per_site": memory,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages-per-site", type=int, default=100)
    ap.add_argument("--workers", default="1,2,3")
    ap.add_argument("--modes", default="off,local,pooled")
    ap.add_argument("--min-pages", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1, help="runs of each case; the best pages/s is kept")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for the crawls with scrapy-deboiler (repeatable)")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.set)
    import redis

    from website import SITES, DemoSite, serve

    work = tempfile.mkdtemp(prefix="bench_redis.")
    with open(os.path.join(work, "timed.py"), "w") as f:
        f.write(TIMED)
    proc, port = start_redis(work)
    servers = serve(0, args.pages_per_site)
    # Every page's URL is pushed as a start URL, so each worker takes a batch
    # (CONCURRENT_REQUESTS) as it starts and whenever it idles: the pages are
    # spread over the workers from the first second (a worker without start
    # URLs looks at the shared queue only every 5 s, Scrapy's heartbeat).
    urls = [u.rstrip("/") + path for (u, _), key in zip(servers, SITES)
            for path in DemoSite(key, args.pages_per_site).pages]
    redis_url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis(port=port)
    rows = []
    try:
        for n in [int(x) for x in args.workers.split(",")]:
            for mode in args.modes.split(","):
                best = None
                for _ in range(args.rounds):
                    row = run(n, mode, urls, redis_url, client, work, args.min_pages, extra)
                    if best is None or row["pages_s"] > best["pages_s"]:
                        best = row
                rows.append(best)
                print(json.dumps(best), file=sys.stderr, flush=True)
    finally:
        proc.kill()
        for _, server in servers:
            server.shutdown()
    base = {r["workers"]: r for r in rows if r["mode"] == "off"}
    print(f"\n{args.pages_per_site} articles a site, 3 sites, DEBOILER_MIN_PAGES {args.min_pages}"
          f"{', ' + str(extra) if extra else ''}; ratios against 'off' with the same workers, this run")
    print(f"{'workers':>7} {'mode':>7} {'items':>6} {'pages/s':>8} {'x off':>6} {'site->model':>11} "
          f"{'held p50':>9} {'held p99':>9} {'redis/site':>11}")
    for r in rows:
        b = base.get(r["workers"])
        ratio = f"{r['pages_s'] / b['pages_s']:.2f}" if b else "-"
        mem = f"{r['redis_bytes_per_site'] / 1024:.1f} KiB" if r["redis_bytes_per_site"] else "-"
        print(f"{r['workers']:>7} {r['mode']:>7} {r['items']:>6} {r['pages_s']:>8.1f} {ratio:>6} "
              f"{r['site_to_model_s']:>10.2f}s {r['held_p50_s']:>8.2f}s {r['held_p99_s']:>8.2f}s {mem:>11}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
