"""A crawl spread over three ``scrapy crawl`` processes through scrapy-redis
(shared queue and dupefilter) and scrapy-deboiler's Redis mode, on the demo
website: one model a site for the cluster, a worker SIGKILLed, Redis killed
and restarted. Each worker runs under ``timeout -s KILL``; redis-server is
real (tests/redisserver.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redisserver import redis_server  # noqa: F401 (a fixture)
from scrapy_deboiler import FitParams, Page, SiteModel
from scrapy_deboiler._redis import RedisCoordinator

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
sys.path.insert(0, str(EXAMPLE))
from website import SITES, DemoSite, serve  # noqa: E402

MIN_PAGES = 20
#: The example's cluster spider, also writing each item's URL as it is
#: yielded (flushed) and its process id: what a killed worker had done.
RECORDING = '''
import os
from demo.spiders.cluster import ClusterSpider


class RecordingSpider(ClusterSpider):
    name = "recording"

    def __init__(self, yielded="", pidfile="", **kwargs):
        super().__init__(**kwargs)
        self.yielded = open(yielded, "a", buffering=1, encoding="utf-8")
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))

    def parse(self, response):
        for out in super().parse(response):
            if isinstance(out, dict):
                self.yielded.write(out["url"] + "\\n")
            yield out
'''


class Worker:
    def __init__(self, folder: Path, proc: subprocess.Popen) -> None:
        self.folder = folder
        self.proc = proc

    @property
    def pid(self) -> int:
        return int((self.folder / "pid").read_text())

    def yielded(self) -> list[str]:
        path = self.folder / "yielded.txt"
        return path.read_text().splitlines() if path.exists() else []

    def items(self) -> list[dict]:
        feed = self.folder / "items.jsonl"
        return [json.loads(line) for line in feed.read_text().splitlines()] if feed.exists() else []

    def log(self) -> str:
        return (self.folder / "crawl.log").read_text(errors="replace")

    def signatures(self) -> dict[str, dict]:
        folder = self.folder / "signatures"
        return {(d := json.loads(p.read_text()))["domain"]: d for p in folder.glob("*.json")}


@pytest.fixture
def demo_website():
    servers = serve(0)
    try:
        yield [url for url, _ in servers]
    finally:
        for _, server in servers:
            server.shutdown()
            server.server_close()


def start_workers(tmp_path: Path, redis_url: str, n: int = 3, kill_after: int = 150, **settings) -> list[Worker]:
    spiders = tmp_path / "spiders"
    spiders.mkdir(exist_ok=True)
    (spiders / "recording.py").write_text(RECORDING)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(spiders)]),
           "SCRAPY_SETTINGS_MODULE": "demo.settings_cluster", "REDIS_URL": redis_url,
           "MAX_IDLE_TIME_BEFORE_CLOSE": "4"}
    workers = []
    for k in range(n):
        folder = tmp_path / f"worker{k}"
        folder.mkdir()
        s = {"SPIDER_MODULES": "demo.spiders,recording", "DEBOILER_MIN_PAGES": MIN_PAGES,
             "DEBOILER_SIGNATURES_DIR": str(folder / "signatures"), "DEBOILER_WATCHDOG_INTERVAL": 0.2,
             "DEBOILER_REDIS_RETRY_INTERVAL": 0.5, "DEBOILER_MODE": "boilerplate",
             "CONCURRENT_REQUESTS": 2, "DOWNLOAD_DELAY": 0.1, "LOG_LEVEL": "INFO",
             "FEEDS": json.dumps({str(folder / "items.jsonl"): {"format": "jsonlines"}}), **settings}
        args = ["timeout", "-s", "KILL", str(kill_after), sys.executable, "-m", "scrapy", "crawl", "recording",
                "-a", f"yielded={folder / 'yielded.txt'}", "-a", f"pidfile={folder / 'pid'}"]
        for key, value in s.items():
            args += ["-s", f"{key}={value}"]
        log = open(folder / "crawl.log", "wb")
        workers.append(Worker(folder, subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                        cwd=folder)))
    return workers


def push_start_urls(client, urls: list[str]) -> None:
    client.lpush("cluster:start_urls", *[json.dumps({"url": u}) for u in urls])


def wait_all(workers: list[Worker], timeout: float = 170) -> list[int]:
    deadline = time.monotonic() + timeout
    return [w.proc.wait(max(1, deadline - time.monotonic())) for w in workers]


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def only_cleaned(items: list[dict]) -> None:
    """Every item ``cleaned`` but the docs site's start page (served at two
    URLs): its sidebar and its one line are template but for the line, and
    boilerplate mode, which cannot tell the line apart, keeps all its text
    (``emptied``)."""
    odd = [i for i in items if i["deboiler"]["status"] != "cleaned"]
    assert all(i["deboiler"]["status"] == "emptied" and "Start with the guide." in i["clean_text"]
               and "Table of contents" in i["clean_text"] for i in odd), [(i["url"], i["deboiler"]) for i in odd]


def demo_pages(urls: list[str]) -> dict[str, str]:
    """URL -> HTML of every page of the demo website."""
    out = {}
    for url, key in zip(urls, SITES):
        for path, html in DemoSite(key).pages.items():
            out[url.rstrip("/") + path] = html
    return out


def test_three_workers_share_one_model_a_site_fitted_on_exactly_min_pages(tmp_path, redis_server, demo_website):
    client = redis_server.client()
    push_start_urls(client, demo_website)
    workers = start_workers(tmp_path, redis_server.url)
    codes = wait_all(workers)
    logs = "\n".join(w.log()[-3000:] for w in workers)
    assert codes == [0, 0, 0], logs
    items = [i for w in workers for i in w.items()]
    pages = demo_pages(demo_website)
    # Every page exactly once, over the three feeds.
    urls = [i["url"] for i in items]
    assert len(urls) == len(set(urls)) and set(urls) == set(pages), logs
    assert sum(len(w.items()) > 0 for w in workers) >= 2, "the pages were not spread over the workers"
    only_cleaned(items)
    coordinator = RedisCoordinator(redis_server.url, min_pages=MIN_PAGES)
    sites = {i["deboiler"]["site"] for i in items}
    assert len(sites) == 3
    pooled_by = {}
    for site in sites:
        # One model: every item of the site was cleaned with a Redis model
        # of exactly MIN_PAGES pages ...
        assert {(i["deboiler"]["model"], i["deboiler"]["fit_pages"]) for i in items
                if i["deboiler"]["site"] == site} == {("redis", MIN_PAGES)}
        # ... identical on every worker that saw the site (its signature file) ...
        published = coordinator.model(site)
        files = [w.signatures()[site] for w in workers if site in w.signatures()]
        assert files and all(f["signatures"] == published.support and f["pages"] == MIN_PAGES for f in files)
        # ... and equal to one process fitting the same pooled pages.
        pooled = sorted(u.decode() for u in client.hkeys(coordinator.pool_key(site)))
        assert len(pooled) == MIN_PAGES
        local = SiteModel.fit([Page(pages[u], u) for u in pooled], FitParams())
        assert local.support == published.support and local.pages == MIN_PAGES
        pooled_by[site] = {k for k, w in enumerate(workers) if set(pooled) & set(w.yielded())}
    # The pools were filled by several workers.
    assert any(len(ks) >= 2 for ks in pooled_by.values()), pooled_by
    for w in workers:
        log = w.log()
        assert "pooling site models in Redis" in log and "'deboiler/items_error'" not in log


def test_a_worker_killed_after_pooling_pages_strands_nothing(tmp_path, redis_server, demo_website):
    client = redis_server.client()
    # Every page a start URL: each worker takes a few as it starts.
    push_start_urls(client, sorted(demo_pages(demo_website)))
    workers = start_workers(tmp_path, redis_server.url)
    coordinator = RedisCoordinator(redis_server.url, min_pages=MIN_PAGES)
    victims = []

    def one_pooled() -> bool:
        pooled = {u.decode() for key in client.scan_iter(match=coordinator.base + "pool:*")
                  for u in client.hkeys(key)}
        victims.extend(k for k, w in enumerate(workers) if len(pooled & set(w.yielded())) >= 2)
        return bool(victims)

    try:
        wait_for(one_pooled, 90, "a worker to pool two pages")
        k = victims[0]
        os.kill(workers[k].pid, signal.SIGKILL)
        codes = wait_all(workers)
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    survivors = [w for j, w in enumerate(workers) if j != k]
    logs = "\n".join(w.log()[-3000:] for w in survivors)
    assert codes[k] in (-signal.SIGKILL, 128 + signal.SIGKILL), codes  # timeout passes its child's death on
    assert [c for j, c in enumerate(codes) if j != k] == [0, 0], logs
    for w in survivors:
        items = w.items()
        # Everything a survivor scraped left its pipeline and reached its feed.
        assert sorted(i["url"] for i in items) == sorted(w.yielded()), w.log()[-3000:]
        assert "error" not in {i["deboiler"]["status"] for i in items}
        only_cleaned(items)
    assert sum(len(w.items()) for w in survivors) > 0


def test_redis_killed_and_restarted_mid_crawl_loses_no_scraped_item(tmp_path, redis_server, demo_website):
    client = redis_server.client()
    push_start_urls(client, demo_website)
    workers = start_workers(tmp_path, redis_server.url)
    coordinator = RedisCoordinator(redis_server.url, min_pages=MIN_PAGES)

    def pooling() -> bool:
        return sum(client.hlen(k) for k in client.scan_iter(match=coordinator.base + "pool:*")) >= 8

    try:
        wait_for(pooling, 90, "pages in the pools")
        redis_server.kill()
        time.sleep(1.0)  # an outage of a second, then a restart without persistence
        redis_server.start()
        codes = wait_all(workers)
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    logs = "\n".join(w.log()[-3000:] for w in workers)
    assert 137 not in codes and -9 not in codes, logs
    for w in workers:
        items = w.items()
        assert sorted(i["url"] for i in items) == sorted(w.yielded()), w.log()[-3000:]
        assert "error" not in {i["deboiler"]["status"] for i in items}
    assert any("fall back to local rules" in w.log() for w in workers), logs
