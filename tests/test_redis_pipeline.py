"""The pipeline in Redis mode, in real crawls (CrawlerRunner) against a real
redis-server: crawlers sharing one model, Redis down at the start, killed or
wiped mid-crawl, a later crawl loading the model from Redis."""

from __future__ import annotations

import json
import logging

import pytest_twisted
import pytest  # noqa: F401
import scrapy
from twisted.internet import reactor  # noqa: F401 (installed before the tests run)
from twisted.internet.defer import DeferredList, ensureDeferred

from crawling import crawl, serve_site, stat
from redisserver import RedisServer, SlowLink, free_port, redis_server  # noqa: F401 (a fixture)
from scrapy_deboiler import FitParams, Page, SiteModel
from scrapy_deboiler._redis import RedisCoordinator
from sitegen import site_pages
from test_pipeline import check_all_items_reached_the_feed, close


def redis_settings(url: str, **extra) -> dict:
    """Pages signed in the threads: these tests time pools against crawls
    of a few pages, and a worker process's first signatures can come after
    such a crawl closes on a loaded machine (then the pages are fitted here,
    provisionally). Redis mode with worker processes, the default, runs in
    test_redis_cluster.py's real crawls."""
    return {"DEBOILER_REDIS_URL": url, "DEBOILER_REDIS_TIMEOUT": 2, "DEBOILER_REDIS_RETRY_INTERVAL": 0.1,
            "DEBOILER_MODE": "boilerplate", "DEBOILER_PROCESSES": 0, **extra}


def article_urls(index: str, pages: range) -> list[str]:
    return [f"{index}articles/{i:04d}.html" for i in pages]


async def two_crawls(tmp_path, urls_a: list[str], urls_b: list[str], settings: dict, pa,
                     **b_extra) -> tuple[tuple, tuple]:
    """Crawlers A and B at once, each with its own folder; (crawler, items)
    of each. Closes the site's server ``pa`` when done."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    try:
        results = await DeferredList([
            ensureDeferred(crawl(tmp_path / "a", urls_a, **settings)),
            ensureDeferred(crawl(tmp_path / "b", urls_b, **{**settings, **b_extra})),
        ], fireOnOneErrback=True, consumeErrors=True)
    finally:
        close(pa)
    (_, a), (_, b) = results
    return a, b


def model_files(folder) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in folder.iterdir() if p.suffix == ".json"}


@pytest.mark.parametrize("processes", [0, 1])
@pytest_twisted.ensureDeferred
async def test_two_crawlers_each_seeing_half_a_site_share_one_model(tmp_path, redis_server, processes):
    """Two crawls at once, each fetching 6 of a site's 12 pages, with
    DEBOILER_MIN_PAGES 8: neither could fit alone; through the pool both
    clean every item with one model of exactly 8 pages, equal to a fit of
    those 8 pages in this process. Held pages are signed for the pool in the
    threads, or by a worker process that then cleans them from that parse."""
    a, pa = serve_site(12, "alpha")
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=8, CONCURRENT_REQUESTS=2,
                              DEBOILER_PROCESSES=processes)
    (ca, items_a), (cb, items_b) = await two_crawls(
        tmp_path, article_urls(a, range(0, 12, 2)), article_urls(a, range(1, 12, 2)), settings, pa)
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 6
        assert {(i["deboiler"]["status"], i["deboiler"]["model"], i["deboiler"]["fit_pages"]) for i in items} \
            == {("cleaned", "redis", 8)}
        assert all("Privacy policy" not in i["clean_text"] for i in items)
        assert stat(crawler, "deboiler/sites_fitted") == 0 and stat(crawler, "deboiler/errors") == 0
    assert stat(ca, "deboiler/redis/pages_pooled") + stat(cb, "deboiler/redis/pages_pooled") == 8
    signed = stat(ca, "deboiler/pages_signed") + stat(cb, "deboiler/pages_signed")
    assert signed >= 8 if processes else signed == 0
    (fa,), (fb,) = (model_files(tmp_path / "a" / "signatures").values(),
                    model_files(tmp_path / "b" / "signatures").values())
    assert fa["signatures"] == fb["signatures"] and fa["pages"] == 8 and "provisional" not in fa
    coordinator = RedisCoordinator(redis_server.url, min_pages=8)
    site = a.split("//")[1].rstrip("/")
    pooled = sorted(u.decode() for u in redis_server.client().hkeys(coordinator.pool_key(site)))
    htmls = {u.split("alpha", 1)[1]: h for u, h, _ in site_pages("alpha", 12)}
    local = SiteModel.fit([Page(htmls[u.split(site, 1)[1]], u) for u in pooled], FitParams())
    assert local.support == fa["signatures"] == coordinator.model(site).support


@pytest_twisted.ensureDeferred
async def test_a_later_crawl_loads_the_model_from_redis_first(tmp_path, redis_server, caplog):
    a, pa = serve_site(8, "alpha")
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=5)
    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    try:
        (tmp_path / "1").mkdir()
        crawler, items = await crawl(tmp_path / "1", [a], **settings)
        assert {i["deboiler"]["model"] for i in items} == {"redis"}
        assert not [r for r in caplog.records if "uses the cluster's model" in r.getMessage()]  # it fitted it
        (tmp_path / "2").mkdir()
        crawler, items = await crawl(tmp_path / "2", [a], **settings)  # no signature files there
        # One line says where the model came from, as for a signature file.
        assert len([r for r in caplog.records if "uses the cluster's model from Redis (5 pages" in r.getMessage()]) == 1
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert {(i["deboiler"]["status"], i["deboiler"]["model"], i["deboiler"]["fit_pages"]) for i in items} \
        == {("cleaned", "redis", 5)}
    assert stat(crawler, "deboiler/redis/models") == 1 and stat(crawler, "deboiler/redis/pages_pooled") == 0


def test_an_offer_that_brings_back_our_own_fit_is_left_to_the_fit(tmp_path, redis_server, caplog):
    """Pooling runs in two threads: while this worker's fit of the pool is
    running, an offer of a later page can come back with the model that fit
    just published. The fit's own result is adopted (as fitted here); the
    offer must not adopt it first as another worker's (a race CI met once
    in the crawl test above)."""
    from scrapy.utils.test import get_crawler

    from scrapy_deboiler._pipeline import DeboilerPipeline
    from scrapy_deboiler._pipeline_state import _Site
    from scrapy_deboiler._redis import Offer

    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    crawler = get_crawler(settings_dict={**redis_settings(redis_server.url, DEBOILER_MIN_PAGES=5),
                                         "DEBOILER_SIGNATURES_DIR": str(tmp_path)})
    pipeline = DeboilerPipeline.from_crawler(crawler)
    site = pipeline.sites["alpha"] = _Site("alpha")
    site.hold.pooled = site.hold.busy = True  # its pool reached the threshold: our fit runs
    model = SiteModel.fit([Page(h, u) for u, h, _ in site_pages("alpha", 5)], FitParams())
    pipeline._offered(site, Offer("model", 6, model))
    assert site.model is None and site.source is None
    assert not [r for r in caplog.records if "cluster's model" in r.getMessage()]


@pytest_twisted.ensureDeferred
async def test_redis_down_at_the_start_warns_once_runs_local_and_is_retried_for_new_sites(tmp_path, caplog):
    """Nothing listens on the Redis port when the crawl starts: one warning,
    the first site is learned locally; Redis comes up while it is crawled,
    and the second site (new after that) is pooled."""
    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    port = free_port()
    server = RedisServer(tmp_path / "redis", port)
    a, pa = serve_site(6, "alpha")
    b, pb = serve_site(6, "beta")
    started = []

    def on_request(resource):
        if resource.served == 2 and not started:
            started.append(server.start())

    pa.factory.resource.on_request = on_request
    try:
        crawler, items = await crawl(tmp_path, article_urls(a, range(6)), DEBOILER_MIN_PAGES=4,
                                     CONCURRENT_REQUESTS=1, DOWNLOAD_DELAY=0.15,
                                     spider_kwargs={"then": article_urls(b, range(6))},
                                     **redis_settings(f"redis://127.0.0.1:{port}/0"))
    finally:
        close(pa, pb)
        server.kill()
    assert started
    check_all_items_reached_the_feed(crawler, items)
    by_site = {}
    for i in items:
        by_site.setdefault(i["deboiler"]["site"], set()).add((i["deboiler"]["status"], i["deboiler"]["model"]))
    assert by_site == {a.split("//")[1].rstrip("/"): {("cleaned", "fitted")},
                       b.split("//")[1].rstrip("/"): {("cleaned", "redis")}}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "Redis" in r.getMessage()]
    assert len(warnings) == 1 and "cannot be reached" in warnings[0] and "fall back to local rules" in warnings[0]
    assert any("pooling again" in r.getMessage() for r in caplog.records)
    assert stat(crawler, "deboiler/redis/outages") == 1 and stat(crawler, "deboiler/items_error") == 0


@pytest_twisted.ensureDeferred
async def test_redis_killed_mid_crawl_the_held_sites_go_local_within_a_tick(tmp_path, redis_server, caplog):
    a, pa = serve_site(12, "alpha")
    b, pb = serve_site(9, "beta")
    killed = []

    def on_request(resource):
        if resource.served == 4 and not killed:
            redis_server.kill()
            killed.append(True)

    pa.factory.resource.on_request = on_request
    try:
        crawler, items = await crawl(tmp_path, [a, b], DEBOILER_MIN_PAGES=5, CONCURRENT_REQUESTS=2,
                                     **redis_settings(redis_server.url))
    finally:
        close(pa, pb)
    assert killed
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 21 and {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert stat(crawler, "deboiler/redis/outages") == 1 and stat(crawler, "deboiler/errors") == 0
    assert any("failed" in r.getMessage() and "fall back to local rules" in r.getMessage() for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_a_wiped_redis_is_noticed_and_logged(tmp_path, redis_server, caplog):
    a, pa = serve_site(10, "alpha")
    wiped = []

    def on_request(resource):
        if resource.served == 6 and not wiped:
            redis_server.client().flushall()
            wiped.append(True)

    pa.factory.resource.on_request = on_request
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=30, DEBOILER_REDIS_POOL_WAIT=0.5,
                                     CONCURRENT_REQUESTS=1, DOWNLOAD_DELAY=0.1, **redis_settings(redis_server.url))
    finally:
        close(pa)
    assert wiped
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 10 and {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert stat(crawler, "deboiler/redis/wiped") == 1
    assert any("was wiped" in r.getMessage() for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_a_hostile_model_in_redis_is_refused_and_the_site_learned_locally(tmp_path, redis_server, caplog):
    """Someone wrote a "finished" model for the site that is not one: it is
    refused with a log line naming its key, the pool cannot fill (the script
    sees a finished model), so the site follows the local rules."""
    a, pa = serve_site(8, "alpha")
    site = a.split("//")[1].rstrip("/")
    coordinator = RedisCoordinator(redis_server.url, min_pages=5)
    redis_server.client().hset(coordinator.model_key(site), mapping={
        "rank": 2_000_000_000, "final": 1, "doc": b'{"format": "scrapy-deboiler-signatures", "version": 1}'})
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=5, **redis_settings(redis_server.url))
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert {(i["deboiler"]["status"], i["deboiler"]["model"]) for i in items} == {("cleaned", "fitted")}
    assert all("Privacy policy" not in i["clean_text"] for i in items)
    assert stat(crawler, "deboiler/redis/refused") >= 1 and stat(crawler, "deboiler/errors") == 0
    lines = [r.getMessage() for r in caplog.records if "refused the model" in r.getMessage()]
    assert lines and coordinator.model_key(site) in lines[0]


@pytest_twisted.ensureDeferred
async def test_a_quiet_crawler_holds_while_the_pool_grows_then_both_fit_the_whole_pool(tmp_path, redis_server):
    """Crawler A fetches 3 pages of a site at once and goes quiet; crawler B
    fetches 3 others slowly. Quiet no longer means the site is finished: A
    holds its items while B's pages keep the pool growing, and once the pool
    has not grown for DEBOILER_REDIS_POOL_WAIT both clean with one model of
    the whole pool (6 pages, provisional: the site never had 20)."""
    a, pa = serve_site(6, "alpha")
    # B's pages come 0.6 s apart; the wait is five times that, so a slow
    # moment of the machine (CI once fitted a pool of 2 with 1.5) is not quiet.
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=20, DEBOILER_REDIS_POOL_WAIT=3.0)
    (ca, items_a), (cb, items_b) = await two_crawls(
        tmp_path, article_urls(a, range(0, 3)), article_urls(a, range(3, 6)), settings, pa,
        DOWNLOAD_DELAY=0.6, CONCURRENT_REQUESTS=1)
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert {(i["deboiler"]["status"], i["deboiler"]["model"], i["deboiler"]["fit_pages"],
                 i["deboiler"].get("provisional")) for i in items} == {("cleaned", "redis", 6, True)}
    assert stat(ca, "deboiler/released/pool_quiet") == 3 and stat(ca, "deboiler/released/quiet") == 0


@pytest_twisted.ensureDeferred
async def test_a_stalled_process_does_not_take_its_stall_for_a_quiet_pool(tmp_path, redis_server):
    """The crawl above, but the whole process stalls for longer than
    DEBOILER_REDIS_POOL_WAIT just as B's second page comes (a long garbage
    collection, a starved machine: CI fitted a pool of 4 once). Nothing
    reached the pool meanwhile because nothing ran: the watchdog's first
    tick after the stall took the stall for quiet and fitted 4 pages. Only
    watched seconds count, and both crawlers still fit the whole pool."""
    import time

    a, pa = serve_site(6, "alpha")
    responses = []

    def stall(response, request, spider):
        responses.append(response.url)
        if len(responses) == 2:
            time.sleep(5.0)  # the stall under test (the reactor stops), not a wait for a result

    # B's pages 1 s apart (no jitter on Scrapy 2.19; 0.5-1.5 s on 2.18): A
    # has seen B's first in the pool before the stall; the wait is four
    # times that, the stall longer than the wait.
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=20, DEBOILER_REDIS_POOL_WAIT=4.0)
    (ca, items_a), (cb, items_b) = await two_crawls(
        tmp_path, article_urls(a, range(0, 3)), article_urls(a, range(3, 6)), settings, pa,
        DOWNLOAD_DELAY=1.0, DOWNLOAD_DELAY_JITTER=0, CONCURRENT_REQUESTS=1,
        on_signal=(stall, scrapy.signals.response_received))
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert {(i["deboiler"]["status"], i["deboiler"]["model"], i["deboiler"]["fit_pages"],
                 i["deboiler"].get("provisional")) for i in items} == {("cleaned", "redis", 6, True)}


@pytest_twisted.ensureDeferred
async def test_a_finished_signature_file_is_shared_through_redis(tmp_path, redis_server):
    """A worker whose site Redis has no model for used its signature file
    alone: every other worker (a new machine, without the file) pooled and
    fitted the site again, and the cluster had two models. The file's model
    is published. (A provisional file is not: it learns where it is.)"""
    from scrapy_deboiler import RedisCoordinator
    from scrapy_deboiler._store import model_from_json

    a, pa = serve_site(8, "alpha")
    try:
        (tmp_path / "1").mkdir()
        await crawl(tmp_path / "1", [a], DEBOILER_MIN_PAGES=5)  # no Redis: a signature file
        (tmp_path / "1" / "items.jsonl").unlink()
        # One request at a time: the lookup answers long before five pages
        # could be pooled and fitted (the pool's model would rank as high).
        crawler, items = await crawl(tmp_path / "1", [a], CONCURRENT_REQUESTS=1,
                                     **redis_settings(redis_server.url, DEBOILER_MIN_PAGES=5))
    finally:
        close(pa)
    assert {i["deboiler"]["model"] for i in items} == {"file"}
    (site,) = {i["deboiler"]["site"] for i in items}
    (path,) = (tmp_path / "1" / "signatures").iterdir()
    published = RedisCoordinator(redis_server.url, min_pages=5).model(site)
    _, own = model_from_json(json.loads(path.read_text()))
    assert published is not None and (published.pages, published.support) == (own.pages, own.support)
    assert stat(crawler, "deboiler/redis/files_published") == 1


@pytest_twisted.ensureDeferred
async def test_a_worker_with_a_larger_min_pages_says_the_cluster_disagrees(tmp_path, redis_server, caplog):
    """One worker started with DEBOILER_MIN_PAGES=3 fits the cluster's models;
    a worker with 5 used them and said nothing (only the first worker's log
    had a hint). It warns once, and a stat counts the sites."""
    a, pa = serve_site(8, "alpha")
    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    try:
        (tmp_path / "1").mkdir()
        await crawl(tmp_path / "1", [a], **redis_settings(redis_server.url, DEBOILER_MIN_PAGES=3))
        assert not [r for r in caplog.records if "DEBOILER_MIN_PAGES (" in r.getMessage()]
        (tmp_path / "2").mkdir()
        crawler, items = await crawl(tmp_path / "2", [a], **redis_settings(redis_server.url, DEBOILER_MIN_PAGES=5))
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert {(i["deboiler"]["model"], i["deboiler"]["fit_pages"]) for i in items} == {("redis", 3)}
    warned = [r for r in caplog.records if "fewer than this worker's DEBOILER_MIN_PAGES (5)" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    assert stat(crawler, "deboiler/redis/models_under_min_pages") == 1


@pytest.mark.parametrize("processes", [0, 1])
@pytest_twisted.ensureDeferred
async def test_sites_released_by_the_budget_still_end_with_the_clusters_model(tmp_path, redis_server, processes):
    """Two crawlers of one site, each holding almost nothing (a tiny
    DEBOILER_MAX_HELD_BYTES): its pages are released as they come, before
    the pool could be fitted. Such a site went local for good, and the two
    crawlers ended with two models of their own (from a user trial). It
    keeps pooling, and both end with the cluster's model."""
    from scrapy_deboiler import RedisCoordinator

    a, pa = serve_site(16, "alpha")
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=8, DEBOILER_MAX_HELD_BYTES=1,
                              DEBOILER_PROCESSES=processes, CONCURRENT_REQUESTS=2)
    (ca, items_a), (cb, items_b) = await two_crawls(tmp_path, [a], [a], settings, pa)
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 16 and stat(crawler, "deboiler/released/budget") >= 1
    published = RedisCoordinator(redis_server.url, min_pages=8).model(a.split("//")[1].rstrip("/"))
    assert published is not None and not published.provisional and published.pages == 8
    (fa,), (fb,) = (model_files(tmp_path / "a" / "signatures").values(),
                    model_files(tmp_path / "b" / "signatures").values())
    assert fa["signatures"] == fb["signatures"] == published.support


@pytest_twisted.ensureDeferred
async def test_a_slow_redis_still_ends_sites_with_the_clusters_model(tmp_path, redis_server, caplog):
    """As above, with Redis 0.1 s away each way: the offers of the last
    pages cleaned, and the pool's fit they start, answered after the last
    item had left. The crawls closed first and saved their provisional
    models (CI showed it on a loaded machine), and said Redis had failed.
    The close waits for them, and both end with the cluster's model."""
    from scrapy_deboiler import RedisCoordinator

    link = SlowLink(redis_server.port, 0.1)
    a, pa = serve_site(16, "alpha")
    settings = redis_settings(link.url, DEBOILER_MIN_PAGES=8, DEBOILER_MAX_HELD_BYTES=1, CONCURRENT_REQUESTS=2)
    try:
        (ca, items_a), (cb, items_b) = await two_crawls(tmp_path, [a], [a], settings, pa)
    finally:
        link.close()
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 16 and stat(crawler, "deboiler/redis/errors") == 0
        assert stat(crawler, "deboiler/redis/close_timeouts") == 0
    published = RedisCoordinator(redis_server.url, min_pages=8).model(a.split("//")[1].rstrip("/"))
    assert published is not None and not published.provisional and published.pages == 8
    (fa,), (fb,) = (model_files(tmp_path / "a" / "signatures").values(),
                    model_files(tmp_path / "b" / "signatures").values())
    assert fa["signatures"] == fb["signatures"] == published.support
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "Redis" in r.getMessage()]


@pytest_twisted.ensureDeferred
async def test_a_model_another_worker_finished_as_the_crawl_ends_is_the_one_saved(tmp_path, redis_server):
    """A crawl of 4 of a site's pages, released one at a time: a provisional
    model that pools. As its last item leaves, another worker publishes the
    site's finished model (fitted on 8 other pages): the close takes it and
    saves it, not the provisional model of 4 pages."""
    from scrapy import signals

    from scrapy_deboiler import RedisCoordinator

    a, pa = serve_site(16, "alpha")
    site = a.split("//")[1].rstrip("/")
    coordinator = RedisCoordinator(redis_server.url, min_pages=8)
    other = SiteModel.fit([Page(h, a + u.split("alpha/", 1)[1]) for u, h, _ in site_pages("alpha", 16)[8:]],
                          FitParams())
    scraped = []

    def another_worker_finishes(item, response, spider):
        scraped.append(item)
        if len(scraped) == 4:
            assert coordinator.publish(site, other)[0]

    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=8, DEBOILER_MAX_HELD_BYTES=1,
                              CONCURRENT_REQUESTS=1)
    try:
        crawler, items = await crawl(tmp_path, article_urls(a, range(4)),
                                     on_signal=(another_worker_finishes, signals.item_scraped), **settings)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    # (The first page passes unchanged when it is released before the
    # second one comes: a page alone has no model; CI's loaded machine.)
    assert len(items) == 4 and {i["deboiler"]["status"] for i in items} <= {"cleaned", "unchanged"}
    assert stat(crawler, "deboiler/redis/models") == 1
    (saved,) = model_files(tmp_path / "signatures").values()
    assert saved["pages"] == 8 and "provisional" not in saved and saved["signatures"] == other.support


@pytest_twisted.ensureDeferred
async def test_page_metadata_in_a_cluster_is_read_page_by_page(tmp_path, redis_server):
    """DEBOILER_METADATA with Redis: every item gets its page's metadata
    (pooled pages carry signatures only, so the cluster's model learns no
    places: docs/metadata.md), held pages signed by a worker process with
    their summaries, and nothing else changes."""
    from scrapy_deboiler._metadata import FIELDS

    a, pa = serve_site(12, "alpha")
    settings = redis_settings(redis_server.url, DEBOILER_MIN_PAGES=8, CONCURRENT_REQUESTS=2,
                              DEBOILER_PROCESSES=1, DEBOILER_METADATA=True)
    (ca, items_a), (cb, items_b) = await two_crawls(
        tmp_path, article_urls(a, range(0, 12, 2)), article_urls(a, range(1, 12, 2)), settings, pa)
    for crawler, items in ((ca, items_a), (cb, items_b)):
        check_all_items_reached_the_feed(crawler, items)
        assert {(i["deboiler"]["status"], i["deboiler"]["model"]) for i in items} == {("cleaned", "redis")}
        assert all(set(i["page_metadata"]) == set(FIELDS) for i in items)
        assert stat(crawler, "deboiler/errors") == 0
    (fa,) = model_files(tmp_path / "a" / "signatures").values()
    assert fa["version"] == 1 and "metadata" not in fa
