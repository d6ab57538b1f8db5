"""Real crawls against local servers, the pipeline and middleware on."""

import json
import logging
import os
import subprocess
import sys

import pytest
import pytest_twisted
from scrapy import signals

from scrapy_deboiler import DeboilerPipeline
from scrapy_deboiler._settings import _cores

from crawling import crawl, serve_site, stat


def close(*ports):
    return [p.stopListening() for p in ports]


def check_all_items_reached_the_feed(crawler, items):
    spider = crawler.spider
    assert len(items) == spider.yielded == stat(crawler, "item_scraped_count")
    assert stat(crawler, "deboiler/items_seen") == spider.yielded


@pytest_twisted.ensureDeferred
async def test_threshold_release_across_two_sites(tmp_path):
    (a, pa), (b, pb) = serve_site(12, "alpha"), serve_site(9, "beta")
    try:
        crawler, items = await crawl(tmp_path, [a, b])
    finally:
        close(pa, pb)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 21
    assert stat(crawler, "deboiler/sites_fitted") == 2
    assert stat(crawler, "deboiler/released/threshold") >= 10
    assert stat(crawler, "deboiler/items_cleaned") == 21
    for item in items:
        assert "html" not in item
        assert item["deboiler"]["status"] == "cleaned"
        assert "Privacy policy" not in item["clean_text"] and "cookies" not in item["clean_text"]
        assert len(item["clean_text"].splitlines()) == 6  # title and five paragraphs
        assert item["clean_html"].startswith("<html")
    assert len(os.listdir(tmp_path / "signatures")) == 2
    assert stat(crawler, "deboiler/bytes_out") < stat(crawler, "deboiler/bytes_in")


@pytest.mark.parametrize("mode", ["boilerplate", "content"])
@pytest_twisted.ensureDeferred
async def test_sites_below_the_threshold_are_released_at_the_end(tmp_path, mode, caplog):
    (a, pa), (b, pb) = serve_site(3, "small"), serve_site(1, "single")
    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    try:
        crawler, items = await crawl(tmp_path, [a, b], DEBOILER_MIN_PAGES=50, DEBOILER_MODE=mode)
    finally:
        close(pa, pb)
    check_all_items_reached_the_feed(crawler, items)
    by_site = {}
    for item in items:
        by_site.setdefault(item["deboiler"]["status"], []).append(item)
    assert len(by_site["cleaned"]) == 3 and by_site["cleaned"][0]["deboiler"]["fit_pages"] == 3
    assert stat(crawler, "deboiler/released/quiet") == 4
    (single,) = by_site["unchanged" if mode == "boilerplate" else "single_page"]
    assert "1 page" in single["deboiler"]["reason"] and "html" not in single
    assert stat(crawler, f"deboiler/items_{single['deboiler']['status']}") == 1
    assert single["clean_html"].startswith("<html") and len(single["clean_text"].splitlines()) >= 5
    closing = [r.getMessage() for r in caplog.records if r.getMessage().startswith(
        f"deboiler: {single['deboiler']['site']}: 1 items, no model")]
    if mode == "boilerplate":  # no template known: all the page's text, as the command line gives
        assert "Privacy policy" in single["clean_text"]
        assert closing and closing[0].endswith("nothing removed")  # not the serializing's "5%"
    else:  # content mode extracts a page on its own
        assert "Privacy policy" not in single["clean_text"]


@pytest_twisted.ensureDeferred
async def test_a_second_crawl_reuses_the_signature_files(tmp_path):
    a, pa = serve_site(8, "alpha")
    try:
        await crawl(tmp_path, [a])
        (tmp_path / "items.jsonl").unlink()
        crawler, items = await crawl(tmp_path, [a])
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "deboiler/sites_reused") == 1
    assert stat(crawler, "deboiler/items_held") == 0 and stat(crawler, "deboiler/sites_fitted") == 0
    assert all(i["deboiler"]["model"] == "file" for i in items)
    assert all("Privacy policy" not in i["clean_text"] for i in items)


@pytest_twisted.ensureDeferred
async def test_learning_updates_known_sites(tmp_path):
    a, pa = serve_site(12, "alpha")
    try:
        await crawl(tmp_path, [a])
        (tmp_path / "items.jsonl").unlink()
        crawler, items = await crawl(tmp_path, [a], DEBOILER_LEARN=True)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "deboiler/sites_updated") >= 1
    (name,) = os.listdir(tmp_path / "signatures")
    assert json.loads((tmp_path / "signatures" / name).read_text())["pages"] == 17  # 5 fitted, then 12 learned


SERIES = ("This is the second half of our two-part series on harbour lanterns; read both parts for the "
          "whole story of the copper beacons and the keepers who lit them.")


def _series(html: str) -> str:
    """Pages 3 and 4, neighbours by URL, open with a note no other page has."""
    if 'class="page-3"' in html or 'class="page-4"' in html:
        byline = '<p class="byline">By Staff Writer</p>'
        return html.replace(byline, f'{byline}<p class="series">{SERIES}</p>')
    return html


@pytest_twisted.ensureDeferred
async def test_a_learning_model_counts_a_page_crawled_again_once(tmp_path):
    """DEBOILER_LEARN, crawl after crawl of one site: a page seen before
    adds nothing, so what two neighbouring pages alone share stays under the
    threshold however often they are crawled; new pages are learned. Each
    recrawl counted the same neighbour pairs again: the series' note, one
    pair's, reached the threshold and was removed from both pages."""
    a, pa = serve_site(14, "alpha", transform=_series)
    try:
        # The first crawl finds pages 0-11; the later ones 12 and 13 too.
        await crawl(tmp_path, [a], spider_kwargs={"follow": r"/articles/00(0\d|1[01])\.html"},
                    DEBOILER_LEARN=True, DEBOILER_MIN_PAGES=12)
        runs = []
        for _ in range(2):
            (tmp_path / "items.jsonl").unlink()
            runs.append(await crawl(tmp_path, [a], DEBOILER_LEARN=True, DEBOILER_MIN_PAGES=12))
    finally:
        close(pa)
    for crawler, items in runs:
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 14 and all(i["deboiler"]["model"] == "file" for i in items)
        series = [i for i in items if i["url"].endswith(("/0003.html", "/0004.html"))]
        assert len(series) == 2 and all(SERIES in i["clean_text"] for i in series)
        assert all("Privacy policy" not in i["clean_text"] for i in items)
    assert stat(runs[0][0], "deboiler/sites_updated") == 1  # pages 12 and 13, as the crawl ended
    assert stat(runs[1][0], "deboiler/sites_updated") == 0
    (name,) = os.listdir(tmp_path / "signatures")
    doc = json.loads((tmp_path / "signatures" / name).read_text())
    assert doc["pages"] == 14 and len(doc["seen"]["page_keys"]) == 14 and "provisional" not in doc
    shown = subprocess.run([sys.executable, "-m", "scrapy_deboiler", "inspect", "--json",
                            str(tmp_path / "signatures" / name)], capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)["pages_seen"] == 14


@pytest_twisted.ensureDeferred
async def test_closespider_itemcount_with_items_held(tmp_path):
    # Site "known" has a signature file, so its items pass at once and reach
    # the item count while pages of "new" (interleaved with them) are held.
    known, pk = serve_site(20, "known")
    try:
        await crawl(tmp_path, [known])
        (tmp_path / "items.jsonl").unlink()
        known_pages = [known + f"articles/{i:04d}.html" for i in range(20)]
        new, pn = serve_site(20, "new", also_link=known_pages)
        try:
            crawler, items = await crawl(tmp_path, [new], DEBOILER_MIN_PAGES=100,
                                         CLOSESPIDER_ITEMCOUNT=5, CONCURRENT_REQUESTS=1,
                                         SCHEDULER_MEMORY_QUEUE="scrapy.squeues.FifoMemoryQueue")
        finally:
            close(pn)
    finally:
        close(pk)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "finish_reason") == "closespider_itemcount"
    assert stat(crawler, "deboiler/released/closing") >= 2
    assert {i["deboiler"]["model"] for i in items} == {"file", "fitted"}
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)


@pytest_twisted.ensureDeferred
async def test_closespider_raised_in_a_callback_with_items_held(tmp_path):
    a, pa = serve_site(30, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=100, CONCURRENT_REQUESTS=1,
                                     spider_kwargs={"close_after": 6})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "finish_reason") == "enough"
    assert len(items) >= 6 and all(i["deboiler"]["status"] == "cleaned" for i in items)


@pytest_twisted.ensureDeferred
async def test_engine_shutdown_with_items_held(tmp_path):
    from scrapy import signals
    from scrapy.utils.defer import deferred_from_coro
    from twisted.internet import reactor

    a, pa = serve_site(40, "alpha")
    stopped = []

    def on_response(response, request, spider):
        crawler = spider.crawler
        if not stopped and stat(crawler, "deboiler/items_held") >= 4:
            stopped.append(True)
            # What SIGINT and SIGTERM do.
            reactor.callLater(0, lambda: deferred_from_coro(crawler.stop_async()))

    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=100, CONCURRENT_REQUESTS=1,
                                     on_signal=(on_response, signals.response_received))
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "finish_reason") == "shutdown"
    assert 4 <= len(items) < 40
    # Held items go when closing starts. A response already on its way brings
    # one more (on a loaded machine, where the engine takes a while to stop
    # sending requests, two): held while the others' fit runs (released
    # after it, or at the next tick), or after that fit (cleaned on arrival
    # with its model).
    held = stat(crawler, "deboiler/items_held")
    closing, after_fit = stat(crawler, "deboiler/released/closing"), stat(crawler, "deboiler/released/after_fit")
    assert closing >= 4 and closing + after_fit == held and after_fit <= 2 and len(items) - held <= 2


@pytest_twisted.ensureDeferred
async def test_scraper_slot_far_below_the_held_bytes(tmp_path):
    """Held items are released before they fill half the scraper slot, the
    oldest sites first, so downloads never stall on them."""
    a, pa = serve_site(40, "alpha", paragraphs=20)  # pages of about 12 KB
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=30,
                                     SCRAPER_SLOT_MAX_ACTIVE_SIZE=40_000)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 40
    assert stat(crawler, "deboiler/released/budget") >= 1
    assert stat(crawler, "deboiler/max_held_bytes") <= 20_000 + 13_000
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)


@pytest_twisted.ensureDeferred
async def test_a_starved_scraper_slot_is_noticed(tmp_path):
    """Items carrying far less HTML than their responses weigh: the slot
    fills while the held bytes stay under the budget; the watchdog sees
    the crawl starved and releases them."""
    a, pa = serve_site(40, "alpha", paragraphs=20)
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=30,
                                     SCRAPER_SLOT_MAX_ACTIVE_SIZE=40_000,
                                     spider_kwargs={"html_chars": 300})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 40
    assert stat(crawler, "deboiler/released/starved") >= 1
    assert stat(crawler, "deboiler/released/budget") == 0


@pytest_twisted.ensureDeferred
async def test_concurrent_items_below_the_threshold(tmp_path):
    a, pa = serve_site(6, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=8, CONCURRENT_ITEMS=2,
                                     spider_kwargs={"items_per_page": 5})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 30
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)


@pytest_twisted.ensureDeferred
async def test_worker_processes_clean_as_the_threads_do_and_markdown_rides_along(tmp_path):
    (a, pa), (b, pb) = serve_site(12, "alpha"), serve_site(3, "beta")
    try:
        runs = {}
        for processes in (0, None):  # the threads; the default: a worker process on 2+ cores
            folder = tmp_path / f"p{processes}"
            folder.mkdir()
            seen = set()

            def cleaner(item, spider, **kw):  # who cleans: the pipeline's worker processes, or None
                middlewares = spider.crawler.engine.scraper.itemproc.middlewares
                pipe, = [m for m in middlewares if isinstance(m, DeboilerPipeline)]
                seen.add(pipe.work.cleaner and pipe.work.cleaner.processes)

            crawler, items = await crawl(folder, [a, b], DEBOILER_PROCESSES=processes, DEBOILER_MARKDOWN=True,
                                         on_signal=(cleaner, signals.item_scraped))
            check_all_items_reached_the_feed(crawler, items)
            assert seen == ({None} if processes == 0 else {1 if _cores() >= 2 else None})
            # A worker signs the held pages as they come; the fit counts their signatures.
            signed = stat(crawler, "deboiler/pages_signed")
            assert signed >= 5 + 3 if seen == {1} else signed == 0
            runs[processes] = {i["url"]: i for i in items}
    finally:
        close(pa, pb)
    assert runs[0].keys() == runs[None].keys() and len(runs[0]) == 15
    for path, item in runs[None].items():
        other = runs[0][path]
        assert item["clean_text"] == other["clean_text"] and item["clean_markdown"] == other["clean_markdown"]
        assert item["deboiler"]["status"] == other["deboiler"]["status"] in ("cleaned", "single_page")
        assert item["clean_markdown"].startswith("# ") and "Privacy policy" not in item["clean_markdown"]
