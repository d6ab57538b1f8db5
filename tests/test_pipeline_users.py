"""The pipeline in real users' crawls: many items per page, early stops,
settings mistakes, non-HTML responses, wrong encodings, cleaning threads."""

import json
import logging
import os
import shutil
import threading

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.settings import Settings
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from crawling import crawl, serve_site, settings, stat
from sitegen import site_pages
from scrapy_deboiler import _pipeline_state
from scrapy_deboiler._cli import main as cli_main
from scrapy_deboiler._settings import DeboilerSettingsError
from test_pipeline import check_all_items_reached_the_feed, close


def signature_files(tmp_path):
    return {p.name: json.loads(p.read_text()) for p in (tmp_path / "signatures").iterdir()}


@pytest.mark.parametrize("urls, per_page", [("same_url", 10), ("detail_urls", 5)])
@pytest_twisted.ensureDeferred
async def test_many_items_per_page_count_as_one_page_and_share_one_clean(tmp_path, urls, per_page):
    """A listing spider: several items a page, all with the page's URL
    (same_url) or each with a detail URL of its own (detail_urls, the usual
    catalogue spider). The threshold counts pages, so the model sees five
    different pages, finds the template and removes it."""
    a, pa = serve_site(12, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=5, DEBOILER_MODE="boilerplate",
                                     spider_kwargs={"items_per_page": per_page, urls: True})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    n = 12 * per_page
    assert len(items) == n and {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert {i["deboiler"]["fit_pages"] for i in items} == {5}
    assert all("Privacy policy" not in i["clean_text"] and "cookies" not in i["clean_text"] for i in items)
    assert all(i["deboiler"]["removed"] > 0 for i in items)
    (doc,) = signature_files(tmp_path).values()
    assert doc["pages"] == 5 and doc["version"] == 1 and "provisional" not in doc
    # One parse and one clean a page; the page's other items share it.
    assert stat(crawler, "deboiler/pages_cleaned") == 12
    assert stat(crawler, "deboiler/items_shared_clean") == n - 12  # held or not
    by_url = {}
    for i in items:
        by_url.setdefault(i["url"], set()).add(i["clean_text"])
    # The items keep their own URLs; one text a URL.
    assert len(by_url) == (12 if urls == "same_url" else n) and all(len(t) == 1 for t in by_url.values())


@pytest_twisted.ensureDeferred
async def test_items_with_their_own_html_and_relative_urls_are_single_pages(tmp_path):
    """A spider that puts the HTML in its items itself, with the page's path
    as ``url``: no host, so no site. Each is extracted as a single page;
    nothing is fitted or saved (the pages of every such spider, or of every
    website in a broad crawl, used to be one site "" with a signature file)."""
    a, pa = serve_site(8, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=3,
                                     spider_kwargs={"body": "text", "relative_urls": True})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 8 and all(i["url"].startswith("/articles/") for i in items)
    assert {(i["deboiler"]["status"], i["deboiler"]["reason"]) for i in items} == {
        ("single_page", "no site: the URL has no host")}
    assert all("Privacy policy" not in i["clean_text"] and i["clean_text"] for i in items)
    assert stat(crawler, "deboiler/items_single_page") == 8 and stat(crawler, "deboiler/items_held") == 0
    assert not (tmp_path / "signatures").exists() or not list((tmp_path / "signatures").iterdir())


@pytest_twisted.ensureDeferred
async def test_an_early_stop_leaves_a_provisional_model_that_keeps_learning(tmp_path, capsys):
    a, pa = serve_site(12, "alpha")
    try:
        # 1. The crawl stops after three pages: the site is fitted on them
        # and saved as provisional.
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=6, DEBOILER_MODE="boilerplate",
                                     CONCURRENT_REQUESTS=1, spider_kwargs={"close_after": 3})
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 3 and stat(crawler, "deboiler/sites_provisional") == 1
        assert all(i["deboiler"]["status"] == "cleaned" and i["deboiler"]["provisional"] for i in items)
        (path,) = (tmp_path / "signatures").iterdir()
        doc = json.loads(path.read_text())
        assert doc["version"] == 2 and len(doc["provisional"]["page_keys"]) == 3
        capsys.readouterr()
        assert cli_main(["inspect", str(path)]) == 0
        out = capsys.readouterr().out
        assert "yes: fitted on 3 pages so far" in out and out.count("provisional") == 1
        # The command line says so too of a page it cleans with that file.
        by_path = {u.split("alpha", 1)[1]: h for u, h, _ in site_pages("alpha", 12)}
        url = items[0]["url"]
        (tmp_path / "pages.jsonl").write_text(json.dumps({"url": url, "html": by_path["/" + url.split("/", 3)[3]]}))
        shutil.copytree(tmp_path / "signatures", tmp_path / "sigs-copy")
        assert cli_main(["clean", str(tmp_path / "pages.jsonl"), str(tmp_path / "cli.jsonl"), "--mode",
                         "boilerplate", "--signatures", str(tmp_path / "sigs-copy")]) == 0
        (rec,) = [json.loads(line) for line in (tmp_path / "cli.jsonl").read_text().splitlines()]
        assert rec["deboiler"]["model"] == "file" and rec["deboiler"]["provisional"] is True

        # 2. The next crawl (DEBOILER_LEARN off) cleans with it at once, and
        # learns from the pages it has not seen until it has six.
        (tmp_path / "items.jsonl").unlink()
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=6, DEBOILER_MODE="boilerplate",
                                     CONCURRENT_REQUESTS=1)
        check_all_items_reached_the_feed(crawler, items)
        (tmp_path / "items.jsonl").unlink()
        # 3. The crawl after that uses the completed model for every page.
        crawler3, items3 = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=6, DEBOILER_MODE="boilerplate",
                                       CONCURRENT_REQUESTS=1)
    finally:
        close(pa)
    assert len(items) == 12 and stat(crawler, "deboiler/items_held") == 0
    assert stat(crawler, "deboiler/sites_reused_provisional") == 1
    assert stat(crawler, "deboiler/sites_completed") == 1
    by_n = sorted(items, key=lambda i: i["n"])
    states = [bool(i["deboiler"].get("provisional")) for i in by_n]
    # The three pages it knew, the new ones until it has seen six, and any
    # cleaned while the completed model was being fitted (on a busy machine
    # that can be all the rest): the weak model (its three pages); the rest
    # the completed one.
    k = states.index(False) if False in states else len(states)
    assert k >= 5 and not any(states[k:]), states
    assert {i["deboiler"]["fit_pages"] for i in by_n[:k]} == {3}
    assert {i["deboiler"]["fit_pages"] for i in by_n[k:]} <= {6}
    doc = json.loads(path.read_text())
    assert doc["version"] == 1 and "provisional" not in doc and doc["pages"] == 6
    assert stat(crawler, "deboiler/sites_fitted") == 0
    late = [i for i in items if not i["deboiler"].get("provisional")]
    assert all("Privacy policy" not in i["clean_text"] for i in late)

    # 3. The crawl after: the completed model from its file for every page.
    check_all_items_reached_the_feed(crawler3, items3)
    assert len(items3) == 12 and stat(crawler3, "deboiler/sites_reused") == 1
    assert stat(crawler3, "deboiler/sites_reused_provisional") == 0 and stat(crawler3, "deboiler/items_held") == 0
    assert all(i["deboiler"]["model"] == "file" and not i["deboiler"].get("provisional")
               and i["deboiler"]["fit_pages"] == 6 for i in items3)
    assert all("Privacy policy" not in i["clean_text"] for i in items3)


@pytest_twisted.ensureDeferred
async def test_a_site_smaller_than_min_pages_is_told_why_its_model_is_provisional(tmp_path, caplog):
    """A docs site of fewer pages than DEBOILER_MIN_PAGES is fitted when the
    crawl ends, provisional, on every crawl: its line says how many pages
    the crawl gave of how many, not only that it learns (a new user read
    that as a fault). The fit's share is of its pages, the close's of all
    the site's items: two figures, each named."""
    a, pa = serve_site(6, "alpha")
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=20)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    (fit,) = [r.getMessage() for r in caplog.records if "deboiler: fitted 127.0.0.1" in r.getMessage()]
    assert (f"(provisional: the crawl gave {len(items)} of the 20 pages of DEBOILER_MIN_PAGES; later crawls' "
            "pages complete it)") in fit, fit
    assert "of these pages' HTML removed" in fit, fit
    (close_line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("deboiler: 127.0.0.1:")]
    assert close_line.endswith("of its items' HTML removed"), close_line


@pytest_twisted.ensureDeferred
async def test_sites_released_early_learn_in_the_same_crawl(tmp_path, caplog):
    """The held-bytes budget releases a site after a few pages; its
    provisional model completes itself from the site's later pages. The
    fit's line says why it came early."""
    a, pa = serve_site(16, "alpha")
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=8, DEBOILER_MAX_HELD_BYTES=9_000,
                                         CONCURRENT_REQUESTS=1)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    (fit,) = [r.getMessage() for r in caplog.records if "deboiler: fitted 127.0.0.1" in r.getMessage()]
    assert ("(released early: held HTML over DEBOILER_MAX_HELD_BYTES; provisional: it learns until it has "
            "seen 8)") in fit, fit
    assert stat(crawler, "deboiler/released/budget") >= 1
    assert stat(crawler, "deboiler/sites_provisional") >= 1 and stat(crawler, "deboiler/sites_completed") == 1
    (doc,) = signature_files(tmp_path).values()
    assert doc["version"] == 1 and doc["pages"] >= 8
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}


@pytest.mark.parametrize("mode,processes", [("content", 0), ("boilerplate", 0), ("content", 1)],
                         ids=["content-inline", "boilerplate-inline", "content-worker"])
@pytest_twisted.ensureDeferred
async def test_sites_released_one_page_at_a_time_still_get_a_model(tmp_path, mode, processes, caplog,
                                                                   monkeypatch):
    """A broad crawl over the held-bytes budget releases each site with one
    page held. The first page goes on without a model; its signatures are
    remembered, and the site's next page released so gives it a provisional
    model that learns until it has seen DEBOILER_MIN_PAGES. Lines about
    single sites go to DEBUG after the first few (here 3)."""
    monkeypatch.setattr(_pipeline_state, "_SITE_LINES", 3)
    # Cleaned on the reactor thread, a page's signatures are there before the
    # next page arrives: which pages have a model is then certain. In a
    # worker process, pages released while the first ones are cleaned go
    # without one, however many that is.
    inline = 0 if processes else 10**6
    served = [serve_site(12, name) for name in ("alpha", "beta")]
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [u for u, _ in served], DEBOILER_MIN_PAGES=6,
                                         DEBOILER_MAX_HELD_BYTES=1, DEBOILER_MODE=mode,
                                         DEBOILER_PROCESSES=processes, DEBOILER_INLINE_MAX_BYTES=inline,
                                         CONCURRENT_REQUESTS=1)
    finally:
        for _, port in served:
            close(port)
    check_all_items_reached_the_feed(crawler, items)
    # Two fits and two completions: four lines about sites, the first three at INFO.
    about = [r for r in caplog.records if "fitted 127.0.0.1" in r.getMessage()
             or "model completed" in r.getMessage()]
    assert [r.levelname for r in about] == ["INFO"] * 3 + ["DEBUG"]
    assert sum("more go to DEBUG" in r.getMessage() for r in caplog.records) == 1
    assert len(items) == 24
    # Every page without a model went alone, over the budget.
    assert stat(crawler, "deboiler/released/budget") == stat(crawler, "deboiler/items_held") >= 4
    assert stat(crawler, "deboiler/sites_fitted_alone") == 2 and stat(crawler, "deboiler/sites_completed") == 2
    docs = signature_files(tmp_path)
    assert len(docs) == 2 and all(d["version"] == 1 and d["pages"] == 6 for d in docs.values())
    alone = "unchanged" if mode == "boilerplate" else "single_page"
    for name in ("alpha", "beta"):
        mine = sorted((i for i in items if i["deboiler"].get("site", "").endswith(
            served[("alpha", "beta").index(name)][0].split("//")[1].rstrip("/"))), key=lambda i: i["n"])
        assert len(mine) == 12
        states = [i["deboiler"]["status"] for i in mine]
        # The pages released before the site had two (and those in flight
        # then) are without a model; every later page has it.
        k = states.index("cleaned") if "cleaned" in states else 12
        assert states[:k] == [alone] * k and states[k:] == ["cleaned"] * (12 - k), states
        assert all(i["deboiler"]["reason"] == "released with 1 page(s) held (held HTML over "
                   "DEBOILER_MAX_HELD_BYTES); fitting needs 2" for i in mine[:k])
        assert all(i["clean_text"] and i["clean_html"] and "html" not in i for i in mine)
        if inline:  # the second page gives the model; the sixth completes it
            assert k == 2 and [i["deboiler"]["fit_pages"] for i in mine[2:]] == [2] * 4 + [6] * 6
            assert all("Privacy policy" not in i["clean_text"] for i in mine[6:])
            assert all(i["deboiler"].get("provisional") for i in mine[2:6])


class _Slow(Resource):
    """One page that takes ``delay`` seconds to answer: the crawl goes on."""

    isLeaf = True

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.answered = False

    def render_GET(self, request):
        def answer():
            self.answered = True
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            request.write(b"<html><body><main><p>Late, but here.</p></main></body></html>")
            request.finish()

        call = reactor.callLater(self.delay, answer)
        request.notifyFinish().addErrback(lambda _: call.active() and call.cancel())
        return NOT_DONE_YET


@pytest_twisted.ensureDeferred
async def test_a_small_site_does_not_wait_for_the_crawl_to_end(tmp_path):
    """A one-page site in a crawl that goes on (here one slow download): its
    item leaves after DEBOILER_MAX_HOLD_SECONDS, not at the end."""
    tiny, pt = serve_site(1, "tiny")
    resource = _Slow(3.0)
    slow = reactor.listenTCP(0, Site(resource), interface="127.0.0.1")
    slow_url = f"http://127.0.0.1:{slow.getHost().port}/articles/slow.html"
    left = {}  # URL -> was the slow page answered when the item left the pipelines?

    def scraped(item, response, spider):
        left[item["url"]] = resource.answered

    try:
        crawler, items = await crawl(tmp_path, [tiny, slow_url], DEBOILER_MAX_HOLD_SECONDS=0.3,
                                     on_signal=(scraped, signals.item_scraped))
    finally:
        close(pt)
        close(slow)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 2 and left == {i["url"]: i["url"] == slow_url for i in items}, left
    assert {i["deboiler"]["status"] for i in items} == {"single_page"}
    reasons = {i["url"] == slow_url: i["deboiler"]["reason"] for i in items}
    assert reasons == {False: "released with 1 page(s) held (held for DEBOILER_MAX_HOLD_SECONDS); fitting needs 2",
                       True: "site has 1 page(s); fitting needs 2"}
    assert stat(crawler, "deboiler/released/timeout") == 1


@pytest_twisted.ensureDeferred
async def test_held_items_do_not_keep_the_spiders_parsed_tree(tmp_path):
    """A spider that reads its pages with css() leaves each response's parsed
    tree cached; held items keep the response, and the middleware drops that
    tree once the callback's output is through (a 66 KB page's is 150 KB)."""
    a, pa = serve_site(8, "alpha")
    seen = []

    def scraped(item, response, spider):
        # Dropped; asked again, it is parsed again.
        seen.append((response._cached_selector is None, bool(response.css("title::text").get())))

    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=5,
                                     spider_kwargs={"read_title": True},
                                     on_signal=(scraped, signals.item_scraped))
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 8 and all(i["title"] for i in items) and seen == [(True, True)] * 8
    assert stat(crawler, "deboiler/items_held") >= 5


BAD_SETTINGS = [
    ("DEBOILER_MIN_PAGES", 0, "DEBOILER_MIN_PAGES = 0: must be an integer >= 2"),
    ("DEBOILER_MIN_PAGES", -1, "DEBOILER_MIN_PAGES = -1: must be an integer >= 2"),
    ("DEBOILER_MIN_PAGES", "abc", "DEBOILER_MIN_PAGES = 'abc': expected an integer >= 2"),
    ("DEBOILER_WATCHDOG_INTERVAL", 0, "DEBOILER_WATCHDOG_INTERVAL = 0: must be a number of seconds over 0"),
    ("DEBOILER_WATCHDOG_INTERVAL", -1, "DEBOILER_WATCHDOG_INTERVAL = -1"),
    ("DEBOILER_WATCHDOG_INTERVAL", "nan", "DEBOILER_WATCHDOG_INTERVAL = 'nan'"),
    ("DEBOILER_MODE", "fast", "DEBOILER_MODE = 'fast': must be one of 'boilerplate', 'content'"),
    ("DEBOILER_KEEP_HTML", "maybe", "DEBOILER_KEEP_HTML = 'maybe': expected True or False"),
    ("DEBOILER_MAX_SITES", 0, "DEBOILER_MAX_SITES = 0: must be an integer >= 1"),
    ("DEBOILER_MAX_HOLD_SECONDS", 0, "DEBOILER_MAX_HOLD_SECONDS = 0: must be a number of seconds over 0"),
    ("DEBOILER_THREADS", 0, "DEBOILER_THREADS = 0: must be an integer from 1 to 64"),
    ("DEBOILER_WORKER_TIMEOUT", 0, "DEBOILER_WORKER_TIMEOUT = 0: must be a number of seconds over 0"),
    ("DEBOILER_TEXT_FIELD", "html", "DEBOILER_TEXT_FIELD = 'html': is also DEBOILER_HTML_FIELD"),
    ("DEBOILER_STATUS_FIELD", "", "DEBOILER_STATUS_FIELD = '': expected a field name"),
    ("DEBOILER_STORE", "no.such.Store", "DEBOILER_STORE = 'no.such.Store': cannot be imported"),
    ("DEBOILER_SIGNATURES_DIR", "FILE", "is a file, not a folder"),
    ("DEBOILER_REPORT", "DIR", "is a folder, not a file"),
    ("DEBOILER_REPORT", "DIR/missing/report.html", "does not exist"),
    ("DEBOILER_REDIS_URL", "http://:pw@127.0.0.1:6379", "DEBOILER_REDIS_URL = 'http://:***@127.0.0.1:6379': "
                                                        "expected a redis://, rediss:// or unix:// URL"),
    ("DEBOILER_REDIS_POOL_WAIT", -1, "DEBOILER_REDIS_POOL_WAIT = -1: must be a number of seconds over 0"),
    ("DEBOILER_REDIS_POOL_TTL", 0, "DEBOILER_REDIS_POOL_TTL = 0: must be an integer >= 1"),
    ("DEBOILER_REDIS_TIMEOUT", "soon", "DEBOILER_REDIS_TIMEOUT = 'soon'"),
    ("DEBOILER_REDIS_PREFIX", "my prefix", "DEBOILER_REDIS_PREFIX = 'my prefix': expected 1-100 letters"),
]


@pytest.mark.parametrize("name, value, message", BAD_SETTINGS, ids=[f"{n}={v}" for n, v, _ in BAD_SETTINGS])
@pytest_twisted.ensureDeferred
async def test_a_bad_setting_stops_the_crawl_at_once_naming_it(tmp_path, name, value, message, caplog):
    (tmp_path / "file").write_text("not a folder")
    value = {"FILE": str(tmp_path / "file"), "DIR": str(tmp_path)}.get(value, value)
    if isinstance(value, str) and value.startswith("DIR/"):
        value = str(tmp_path / value[4:])
    served = []
    a, pa = serve_site(3, "alpha", on_request=lambda r: served.append(r.served))
    try:
        with pytest.raises(DeboilerSettingsError) as err:
            await crawl(tmp_path, [a], **{name: value})
    finally:
        close(pa)
    assert message in str(err.value) and err.value.name == name
    # One line says it first (Scrapy's traceback of the failed start follows it).
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR" and r.name.startswith("scrapy_deboiler")]
    assert len(errors) == 1 and message in errors[0] and "the crawl stops before it starts" in errors[0], errors
    assert not served and not (tmp_path / "items.jsonl").exists()  # nothing was crawled


@pytest_twisted.ensureDeferred
async def test_an_unknown_setting_is_named_with_its_likely_meaning(tmp_path, caplog):
    a, pa = serve_site(3, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGE=3)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING
              and "unknown setting DEBOILER_MIN_PAGE (did you mean DEBOILER_MIN_PAGES?)" in r.getMessage()]
    assert len(warned) == 1


@pytest_twisted.ensureDeferred
async def test_items_without_html_give_one_warning_naming_the_cause(tmp_path, caplog):
    a, pa = serve_site(6, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], SPIDER_MIDDLEWARES={})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert {i["deboiler"]["status"] for i in items} == {"unchanged"}
    warnings = [r.getMessage() for r in caplog.records
                if r.levelno == logging.WARNING and "without 'html'" in r.getMessage()]
    assert len(warnings) == 1 and "DeboilerSpiderMiddleware is not enabled" in warnings[0]
    assert stat(crawler, "deboiler/items_without_html") == 6


NON_HTML = {
    "/articles/data.json": (b'{"products": [{"name": "lamp", "price": 12}]}', "application/json"),
    "/articles/feed.xml": (b'<?xml version="1.0"?><rss><channel><title>News</title></channel></rss>',
                           "application/rss+xml"),
    "/articles/notes.txt": (b"Just some text, no markup.", "text/plain"),
}


@pytest_twisted.ensureDeferred
async def test_non_html_responses_give_no_html_and_skipped_items_keep_no_body(tmp_path, caplog):
    extra = {path: body for path, (body, _) in NON_HTML.items()}
    types = {path: ctype for path, (_, ctype) in NON_HTML.items()}
    a, pa = serve_site(6, "alpha", extra_pages=extra, types=types)
    try:
        crawler, items = await crawl(tmp_path, [a])
        check_all_items_reached_the_feed(crawler, items)
        other = {i["url"].rsplit("/", 1)[1]: i for i in items if not i["url"].endswith(".html")}
        assert set(other) == {"data.json", "feed.xml", "notes.txt"}
        for item in other.values():  # the middleware gave them no body, and said why
            assert "html" not in item and item["deboiler"]["status"] == "skipped"
            assert item["deboiler"]["kind"] == "not-html" and "not an HTML response (" in item["deboiler"]["reason"]
        assert other["data.json"]["deboiler"]["reason"] == "not an HTML response (application/json)"
        assert stat(crawler, "deboiler/middleware/not_html") == 3 and stat(crawler, "deboiler/skipped/not-html") == 3
        assert stat(crawler, "deboiler/items_without_html") == 0
        assert [i for i in items if i["url"].endswith(".html") and i["deboiler"]["status"] != "cleaned"] == []
        # Nothing is misconfigured: no warning about items without HTML.
        assert not any("without 'html'" in r.getMessage() for r in caplog.records)

        # A spider that puts every body in its items itself: JSON and XML are
        # skipped, and leave without the body (DEBOILER_KEEP_HTML is off).
        (tmp_path / "items.jsonl").unlink()
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"body": "text"})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    skipped = {i["url"].rsplit("/", 1)[1]: i for i in items if i["deboiler"]["status"] == "skipped"}
    assert {k: i["deboiler"]["kind"] for k, i in skipped.items()} == {"data.json": "json", "feed.xml": "xml"}
    assert all("html" not in i for i in skipped.values())
    assert all("html" not in i for i in items)


NAMES = "Zoë Łukasiewicz and Ångström Straße"


def with_names(html: str) -> str:
    """The page with non-ASCII words starting its first paragraph."""
    return html.replace("By Staff Writer</p>\n<p>", f"By Staff Writer</p>\n<p>{NAMES} wrote: ")


@pytest.mark.parametrize("declared", ["utf-16", "latin-1"])
@pytest_twisted.ensureDeferred
async def test_bytes_with_a_wrong_declared_encoding_are_read_and_kept(tmp_path, declared):
    """Items carrying the raw body and a wrong encoding (UTF-8 bytes): the
    page is read as UTF-8 after all, noted, and its raw HTML stays in the
    item (as latin-1 text, which JSON can hold) so it can be read again."""
    a, pa = serve_site(6, "alpha", transform=lambda h: with_names(h).encode("utf-8"))
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"body": f"bytes:{declared}"})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 6
    for item in items:
        status = item["deboiler"]
        assert status["status"] == "cleaned" and "encoding-fallback" in status["notes"]
        assert NAMES in item["clean_text"] and "Privacy policy" not in item["clean_text"]
        raw = item["html"].encode("latin-1")
        assert status["raw_html"] == "latin-1" and raw.decode("utf-8").count(NAMES) == 1
    assert stat(crawler, "deboiler/items_raw_html_kept") == 6


@pytest_twisted.ensureDeferred
async def test_a_pdf_served_as_html_is_skipped_without_being_decoded_again(tmp_path, caplog):
    """A server that says text/html for a PDF (common on the open web): the
    item is skipped as binary; the body is not decoded again by byte
    statistics, nor logged as a wrong charset."""
    pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nstream\n" + bytes(range(256)) * 40
    a, pa = serve_site(3, "alpha", extra_pages={"/files/report.pdf": pdf})
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [a], spider_kwargs={"follow": r"/(articles|files)/"})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    (item,) = [i for i in items if i["url"].endswith(".pdf")]
    assert item["deboiler"] == {"status": "skipped", "kind": "binary", "reason": "pdf content"}
    assert "html" not in item
    assert stat(crawler, "deboiler/middleware/encoding_fallback") == 0
    assert not any("garbled characters" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("charset", ["utf-16", "iso-8859-1"])
@pytest_twisted.ensureDeferred
async def test_a_server_declaring_the_wrong_charset(tmp_path, caplog, charset):
    """The server says UTF-16 (Scrapy's response.text is garbage) or
    ISO-8859-1 (mojibake: "ZoÃ«", without a single replacement character)
    for UTF-8 pages: the middleware reads the bytes again, and says so once
    for the host (then in the stat)."""
    a, pa = serve_site(6, "alpha", transform=lambda h: with_names(h).encode("utf-8"))
    pa.factory.resource.types.update({f"/articles/{i:04d}.html": f"text/html; charset={charset}"
                                      for i in range(6)})
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [a])
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "deboiler/middleware/encoding_fallback") == 6
    said = [r for r in caplog.records if "lost or garbled characters" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO] and "encoding_fallback" in said[0].getMessage()
    for item in items:
        assert item["deboiler"]["status"] == "cleaned" and "encoding-fallback" in item["deboiler"]["notes"]
        assert NAMES in item["clean_text"]
        assert item["deboiler"]["raw_html"] == "kept" and NAMES in item["html"]


RUSSIAN = "Сегодня в городе прошёл большой праздник"


@pytest.mark.parametrize("body", ["text", "text+"])
@pytest_twisted.ensureDeferred
async def test_a_spider_s_own_text_of_a_page_in_the_wrong_charset(tmp_path, caplog, body):
    """windows-1251 pages served as UTF-8, and a spider that yields
    ``html=response.text`` (Scrapy's garbled reading): the middleware
    reads the bytes again. A spider that yields an edited copy of it gives
    text whose words are lost: noted, counted, logged, its HTML kept."""
    a, pa = serve_site(6, "alpha", transform=lambda h: h.replace(
        "By Staff Writer</p>\n<p>", "By Staff Writer</p>\n<p>" + f"{RUSSIAN}. " * 12).encode("cp1251"))
    pa.factory.resource.types.update({f"/articles/{i:04d}.html": "text/html; charset=utf-8" for i in range(6)})
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [a], spider_kwargs={"body": body})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 6
    for item in items:
        status = item["deboiler"]
        assert status["status"] == "cleaned" and status["raw_html"] == "kept"
        if body == "text":
            assert "encoding-fallback" in status["notes"] and RUSSIAN in item["clean_text"]
            assert RUSSIAN in item["html"] and "replacement-characters" not in status["notes"]
        else:
            assert "replacement-characters" in status["notes"] and RUSSIAN not in item["clean_text"]
            assert item["html"].count("\ufffd") > 100
    garbled = 6 if body == "text+" else 0
    assert stat(crawler, "deboiler/notes/replacement-characters") == garbled
    said = [r for r in caplog.records if "already lost (U+FFFD)" in r.getMessage()]
    assert len(said) == garbled and all("alpha" in r.getMessage() or "127.0.0.1" in r.getMessage() for r in said)


@pytest_twisted.ensureDeferred
async def test_pages_are_cleaned_in_the_pipeline_threads(tmp_path, monkeypatch):
    from scrapy_deboiler import _workplace

    threads = []
    clean_one, fit_site = _workplace.clean_one, _workplace.fit_site

    def recording(f):
        def run(*args):
            threads.append(threading.current_thread().name)
            return f(*args)
        return run

    monkeypatch.setattr(_workplace, "clean_one", recording(clean_one))
    monkeypatch.setattr(_workplace, "fit_site", recording(fit_site))
    a, pa = serve_site(12, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_THREADS=2, DEBOILER_PROCESSES=0)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert len(threads) == 1 + 7  # one fit, then the seven later pages one by one
    assert all("deboiler" in name for name in threads) and threading.main_thread().name not in threads


def feed_and_yielded(tmp_path):
    feed = tmp_path / "items.jsonl"
    items = [json.loads(line) for line in feed.read_text().splitlines()] if feed.exists() else []
    yielded = (tmp_path / "yielded.txt").read_text().splitlines()
    return items, yielded


def ended_crawl(tmp_path, proc, code: int) -> tuple[str, list[dict], list[str]]:
    """An ended ``scrapy crawl``'s log (kept in crawl.log), its feed and the
    URLs its spider yielded, once checked that the timeout did not kill it
    and that every yielded item reached the feed."""
    log = b"".join(proc.out).decode("utf-8", "replace")
    (tmp_path / "crawl.log").write_text(log + f"\nEXIT CODE {code}\n")
    assert code != 137, log[-3000:]  # not killed by the timeout
    items, yielded = feed_and_yielded(tmp_path)
    assert sorted(i["url"] for i in items) == sorted(yielded), log[-3000:]
    return log, items, yielded


async def ctrl_c_twice(proc, pid: int) -> int:
    """SIGINT to the crawl ``pid``, again 0.3 s later; its exit code."""
    import signal

    os.kill(pid, signal.SIGINT)
    reactor.callLater(0.3, os.kill, pid, signal.SIGINT)
    return await proc.ended


def crawl_args(tmp_path, start: str, settings: dict) -> list[str]:
    """``scrapy crawl site`` arguments of the written project's spider: it
    starts at ``start``, writes the URLs it yields and its pid to files in
    ``tmp_path``; the feed and the signature files go there too."""
    settings = {"DEBOILER_SIGNATURES_DIR": str(tmp_path / "signatures"),
                "FEEDS": json.dumps({str(tmp_path / "items.jsonl"): {"format": "jsonlines"}}), **settings}
    args = ["site", "-a", f"start={start}", "-a", f"yielded={tmp_path / 'yielded.txt'}",
            "-a", f"pidfile={tmp_path / 'pid'}"]
    for k, v in settings.items():
        args += ["-s", f"{k}={v}"]
    return args


@pytest_twisted.ensureDeferred
async def test_two_sigints_lose_no_held_item(tmp_path):
    """Ctrl-C twice, 0.3 s apart, in a real ``scrapy crawl``: the second one
    stops the reactor. Every held item is released as it stops, passes the
    later pipelines and reaches the feed before the process ends."""
    from twisted.internet.defer import Deferred

    from crawling import run_scrapy, write_project

    project = write_project(tmp_path)
    first: Deferred = Deferred()

    def on_request(resource):
        if resource.served == 15 and not first.called:
            first.callback(None)

    a, pa = serve_site(60, "alpha", on_request=on_request)
    settings = {"DEBOILER_MIN_PAGES": 100,  # everything is held
                "DEBOILER_WATCHDOG_INTERVAL": 5,  # the watchdog sleeps through it all
                "CONCURRENT_REQUESTS": 2, "DOWNLOAD_DELAY": 0.05}
    args = crawl_args(tmp_path, a, settings)
    try:
        _, proc = run_scrapy(project, args)
        await first
        code = await ctrl_c_twice(proc, int((tmp_path / "pid").read_text()))
    finally:
        close(pa)
    log, items, yielded = ended_crawl(tmp_path, proc, code)
    assert "Received SIGINT twice, forcing unclean shutdown" in log, log[-3000:]
    assert 10 <= len(yielded) < 60
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert all(i["deboiler"]["provisional"] for i in items)  # fitted on what it had


def _descendants(pid: int) -> list[int]:
    """``pid``'s child processes, and theirs (from /proc)."""
    import os

    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


async def scrapy_crawl_until(tmp_path, pages: int, served: int, settings: dict, kill_after: int = 60,
                             **site_kw) -> tuple:
    """A real ``scrapy crawl`` of a served site of ``pages`` pages, once
    ``served`` of its requests were answered: (the process, its pid, its
    worker processes' pids, the site's server port to close)."""
    from twisted.internet.defer import Deferred

    from crawling import run_scrapy, write_project

    project = write_project(tmp_path)
    reached: Deferred = Deferred()

    def on_request(resource):
        if resource.served == served and not reached.called:
            reached.callback(None)

    a, pa = serve_site(pages, "alpha", on_request=on_request, **site_kw)
    try:
        _, proc = run_scrapy(project, crawl_args(tmp_path, a, settings), kill_after=kill_after)
        await reached
        pid = int((tmp_path / "pid").read_text())
        workers = _descendants(pid)
        assert workers, "no worker process started"
    except BaseException:
        close(pa)
        raise
    return proc, pid, workers, pa


@pytest_twisted.ensureDeferred
async def test_ctrl_c_from_a_terminal_fails_no_page_in_the_worker_processes(tmp_path):
    """A terminal sends Ctrl-C to the crawl's whole process group, worker
    processes included: they leave it to the crawl, which closes gracefully
    with every item cleaned (a worker that died of it failed the pages it
    was cleaning: ``status: error``, in every run before the fix)."""
    import os
    import signal

    settings = {"DEBOILER_MIN_PAGES": 5, "DEBOILER_PROCESSES": 1, "CONCURRENT_REQUESTS": 4}
    proc, pid, workers, pa = await scrapy_crawl_until(tmp_path, 80, 30, settings, kill_after=120, paragraphs=300)
    try:
        for p in [pid, *workers]:  # what a terminal's Ctrl-C does
            os.kill(p, signal.SIGINT)
        code = await proc.ended
    finally:
        close(pa)
    log = b"".join(proc.out).decode("utf-8", "replace")
    assert code == 0, log[-3000:]
    assert "Received SIGINT, shutting down gracefully" in log, log[-3000:]
    items, yielded = feed_and_yielded(tmp_path)
    assert 25 <= len(yielded) < 80
    assert sorted(i["url"] for i in items) == sorted(yielded), log[-3000:]
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}, log[-3000:]


@pytest_twisted.ensureDeferred
async def test_ctrl_c_twice_with_a_hung_worker_loses_no_item(tmp_path):
    """The worker process hangs (SIGSTOP), then Ctrl-C twice: the pages it
    had would never come back, and the reactor stopping lost their items
    while the log said they went on unchanged. Now they fail once the
    stopping reactor has waited for them, and reach the feed."""
    import signal

    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    settings = {"DEBOILER_MIN_PAGES": 5, "DEBOILER_PROCESSES": 1, "CONCURRENT_REQUESTS": 2,
                "DOWNLOAD_DELAY": 0.05}
    proc, pid, workers, pa = await scrapy_crawl_until(tmp_path, 60, 20, settings, paragraphs=100)
    try:
        for w in workers:
            os.kill(w, signal.SIGSTOP)
        await deferLater(reactor, 0.5, lambda: None)  # pages pile up with the worker
        code = await ctrl_c_twice(proc, pid)
    finally:
        close(pa)
    log, items, yielded = ended_crawl(tmp_path, proc, code)
    assert 15 <= len(yielded) < 60
    statuses = [i["deboiler"]["status"] for i in items]
    assert "error" in statuses and set(statuses) <= {"cleaned", "error", "single_page"}, log[-3000:]
    # The worker is killed for its silence (a closing crawl waits 10 s), or
    # the stopping reactor's wait (10 s too) ends first and fails its pages.
    assert "answered nothing for" in log or "did not finish their" in log, log[-3000:]


@pytest_twisted.ensureDeferred
async def test_scrapy_crawl_with_a_bad_setting_fails_naming_it(tmp_path):
    from crawling import run_scrapy, write_project

    project = write_project(tmp_path)
    served = []
    a, pa = serve_site(3, "alpha", on_request=lambda r: served.append(1))
    try:
        _, proc = run_scrapy(project, ["site", "-a", f"start={a}", "-a", f"yielded={tmp_path / 'y'}",
                                       "-a", f"pidfile={tmp_path / 'pid'}",
                                       "-s", "DEBOILER_WATCHDOG_INTERVAL=0"])
        code = await proc.ended
    finally:
        close(pa)
    log = b"".join(proc.out).decode("utf-8", "replace")
    assert code == 1 and not served, log[-3000:]
    assert "DEBOILER_WATCHDOG_INTERVAL = '0': must be a number of seconds over 0" in log


def test_none_on_the_command_line_turns_an_optional_setting_off(tmp_path):
    """``scrapy crawl -s DEBOILER_REPORT=None`` gives the string "None": it
    wrote a report to a file named None (and fields named "None"); an empty
    value was an error. Both now turn off what settings.py turned on."""
    from scrapy_deboiler import _settings

    on = {"DEBOILER_REPORT": str(tmp_path / "r.html"), "DEBOILER_COMMENTS_FIELD": "comments",
          "DEBOILER_ENCODING_FIELD": "encoding", "DEBOILER_SIGNATURES_DIR": str(tmp_path / "sigs")}
    for off in ("None", "none", "", " "):
        settings = Settings(on, priority="project")
        settings.setdict({name: off for name in ("DEBOILER_REPORT", "DEBOILER_COMMENTS_FIELD",
                                                 "DEBOILER_ENCODING_FIELD", "DEBOILER_THREADS",
                                                 "DEBOILER_PROCESSES", "DEBOILER_REDIS_URL")}, priority="cmdline")
        cfg = _settings.read_settings(settings)
        assert (cfg.report, cfg.comments_field, cfg.encoding_field, cfg.redis_url) == (None,) * 4, off
        assert cfg.threads >= 1 and cfg.processes in (0, 1)


@pytest.mark.parametrize(("cores", "processes", "threads"), [(1, 0, 1), (2, 1, 1), (4, 1, 3), (16, 1, 4)])
def test_cleaning_goes_to_a_worker_process_where_there_is_a_second_core(monkeypatch, cores, processes, threads):
    from scrapy_deboiler import _settings

    monkeypatch.setattr(_settings.os, "sched_getaffinity", lambda pid: set(range(cores)))
    cfg = _settings.read_settings(Settings(), check_paths=False)
    assert (cfg.processes, cfg.threads) == (processes, threads)
    assert _settings.read_settings(Settings({"DEBOILER_PROCESSES": 0}), check_paths=False).processes == 0
    redis = Settings({"DEBOILER_REDIS_URL": "redis://127.0.0.1:6379/0"})  # pooled pages are signed there too
    assert _settings.read_settings(redis, check_paths=False).processes == processes
    monkeypatch.setattr(_settings.os, "name", "nt")  # the reactor cannot read pipes there
    assert _settings.read_settings(Settings(), check_paths=False).processes == 0
    with pytest.raises(DeboilerSettingsError, match="DEBOILER_PROCESSES = 1: worker processes need a POSIX"):
        _settings.read_settings(Settings({"DEBOILER_PROCESSES": 1}), check_paths=False)


@pytest_twisted.ensureDeferred
async def test_worker_processes_that_cannot_start_leave_the_cleaning_to_the_threads(tmp_path, monkeypatch, caplog):
    """A Python that cannot run the workers (here: one that exits at once)
    does not start them forever: after three, the pages the workers had and
    all later ones are cleaned in the threads, with one ERROR saying so."""
    from scrapy_deboiler import _executor

    monkeypatch.setattr(_executor, "_WORKER", "import sys; sys.exit(3)")
    a, pa = serve_site(8, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=1)
    finally:
        pa.stopListening()
    assert len(items) == crawler.spider.yielded == 8
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert stat(crawler, "deboiler/errors") == 0
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "3 worker processes in a row died while starting" in errors[0]
    assert "exit status 3" in errors[0] and "threads instead" in errors[0]


def signal_worker_at_response(n: int, signum: int, signalled: list):
    """A response_received handler: at the ``n``-th response, send the
    pipeline's worker process ``signum`` (the worker object goes to ``signalled``)."""
    from scrapy_deboiler import DeboilerPipeline

    def handler(response, request, spider):
        if signalled or spider.crawler.stats.get_value("response_received_count", 0) < n:
            return
        pipe, = [m for m in spider.crawler.engine.scraper.itemproc.middlewares if isinstance(m, DeboilerPipeline)]
        worker = pipe.work.cleaner._workers[0]
        signalled.append(worker)
        os.kill(worker.proc.pid, signum)

    return handler, signals.response_received


@pytest_twisted.ensureDeferred
async def test_a_worker_killed_while_it_keeps_held_pages_loses_none_of_them(tmp_path):
    """Held pages are signed by a worker process and kept there parsed for
    their clean. Killed with some of them signed, one maybe being signed:
    its replacement is sent the pages again and the site is fitted on all
    of them, every item cleaned."""
    import signal

    killed = []
    a, pa = serve_site(12, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=1, CONCURRENT_REQUESTS=1,
                                     on_signal=signal_worker_at_response(3, signal.SIGKILL, killed))
    finally:
        pa.stopListening()
    check_all_items_reached_the_feed(crawler, items)
    assert killed and killed[0].dead and len(items) == 12
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"} and stat(crawler, "deboiler/errors") == 0
    assert {i["deboiler"]["fit_pages"] for i in items} == {5}
    assert stat(crawler, "deboiler/pages_signed") >= 3


@pytest_twisted.ensureDeferred
async def test_a_worker_that_hangs_is_killed_and_the_crawl_goes_on(tmp_path, caplog):
    """A worker process that stops answering (here: SIGSTOP) used to stall
    the crawl for good, without a word. After DEBOILER_WORKER_TIMEOUT it is
    killed: the page it was on passes with status error, the rest go to its
    replacement, and the crawl ends with every item."""
    import signal

    stopped = []
    a, pa = serve_site(12, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=1, DEBOILER_WORKER_TIMEOUT=1,
                                     CONCURRENT_REQUESTS=1,
                                     on_signal=signal_worker_at_response(3, signal.SIGSTOP, stopped))
    finally:
        pa.stopListening()
    check_all_items_reached_the_feed(crawler, items)
    assert stopped and stopped[0].dead and len(items) == 12
    statuses = [i["deboiler"]["status"] for i in items]
    assert set(statuses) <= {"cleaned", "error"} and statuses.count("error") <= 1
    assert stat(crawler, "deboiler/worker_restarts") == 1
    for i in items:
        if i["deboiler"]["status"] == "error":
            assert "answered nothing" in i["deboiler"]["reason"] and i["deboiler"]["site"]
    assert any("answered nothing for" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_a_provisional_model_from_a_redis_pool_does_not_count_its_pages_twice(tmp_path):
    """A model fitted on a Redis pool keys its pages by URL; learning keys
    them by URL and content. The same three pages crawled again counted as
    three more, and a site of three pages "completed" on six."""
    from scrapy_deboiler._pagekey import pooled_key as page_key

    a, pa = serve_site(12, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=6, DEBOILER_MODE="boilerplate",
                                     CONCURRENT_REQUESTS=1, spider_kwargs={"close_after": 3})
        (path,) = (tmp_path / "signatures").iterdir()
        doc = json.loads(path.read_text())
        doc["provisional"]["page_keys"] = sorted(page_key(i["url"].split("#", 1)[0]) for i in items)
        path.write_text(json.dumps(doc))  # as a worker fitting the site's Redis pool saved it
        (tmp_path / "items.jsonl").unlink()
        crawler, again = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=6, DEBOILER_MODE="boilerplate",
                                     CONCURRENT_REQUESTS=1, spider_kwargs={"close_after": 3})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, again)
    assert sorted(i["url"] for i in again) == sorted(i["url"] for i in items)
    assert stat(crawler, "deboiler/sites_reused_provisional") == 1 and stat(crawler, "deboiler/sites_completed") == 0
    doc = json.loads(path.read_text())
    assert doc["version"] == 2 and len(doc["provisional"]["page_keys"]) == 3
    assert all(i["deboiler"]["provisional"] and i["deboiler"]["fit_pages"] == 3 for i in again)


@pytest_twisted.ensureDeferred
async def test_a_settings_module_without_scrapy_cfg_keeps_the_pipeline_on(tmp_path, monkeypatch, caplog):
    """SCRAPY_SETTINGS_MODULE set and no scrapy.cfg (an installed project, a
    container): Scrapy's data_path raises NotConfigured for the default
    relative signatures folder, which switched the pipeline off while the
    middleware went on adding HTML (found by a user trial)."""
    (tmp_path / "installed").mkdir()
    (tmp_path / "installed" / "__init__.py").write_text("")
    (tmp_path / "installed" / "settings.py").write_text("BOT_NAME = 'installed'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "installed.settings")  # importable: "inside a project"
    monkeypatch.chdir(tmp_path)
    a, pa = serve_site(6, "alpha")
    caplog.set_level(logging.WARNING)
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_SIGNATURES_DIR="deboiler")
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 6 and all(i["deboiler"]["status"] == "cleaned" and "html" not in i for i in items)
    assert len(os.listdir(tmp_path / ".scrapy" / "deboiler")) == 1
    assert any("no scrapy.cfg" in r.getMessage() and str(tmp_path / ".scrapy" / "deboiler") in r.getMessage()
               for r in caplog.records)


def _worker_dying_on(marker: str) -> str:
    """A worker process (``_executor._WORKER``) that kills itself with
    SIGKILL when it is given a page holding ``marker``, as a memory limit or
    the OOM killer ends a worker on a page too big for it: every time."""
    return ("import json, os, signal, sys; sys.path[:] = json.loads(sys.argv[1])\n"
            "from scrapy_deboiler import _worker\n"
            "_Page = _worker.Page\n"
            "def Page(html, *args, **kwargs):\n"
            f"    if {marker!r} in (html if isinstance(html, str) else html.decode('utf-8', 'replace')):\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "    return _Page(html, *args, **kwargs)\n"
            "_worker.Page = Page\n"
            "_worker.worker_main(int(sys.argv[2]), int(sys.argv[3]))\n")


@pytest.mark.parametrize("signed", [True, False], ids=["signed-as-held", "fit-task"])
@pytest_twisted.ensureDeferred
async def test_a_held_page_that_kills_its_worker_fails_alone(tmp_path, monkeypatch, caplog, signed):
    """A page whose worker process dies on it (a memory limit, an OOM kill)
    while its site is held failed every held item of the site and no model
    was saved: its signing failed, the fit fell back to one task of all the
    pages, which died on it again (and the warning named the fit's first
    page). Now that page alone is an error, naming it, and the site is
    fitted on the others: signed as they are held, or (pages small enough
    to clean inline are not signed ahead) when the fit task dies, each page
    signed on its own."""
    from scrapy_deboiler import _executor

    monkeypatch.setattr(_executor, "_WORKER", _worker_dying_on('class="page-3"'))
    extra = {} if signed else {"DEBOILER_INLINE_MAX_BYTES": 10_000_000}
    a, pa = serve_site(10, "alpha")
    try:  # all ten pages held: the model is fitted on the nine that do not fail
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=1, DEBOILER_MIN_PAGES=10, **extra)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 10
    bad = a + "articles/0003.html"
    errors = [i for i in items if i["deboiler"]["status"] == "error"]
    assert [i["url"] for i in errors] == [bad]
    assert "worker process died" in errors[0]["deboiler"]["reason"] and errors[0]["deboiler"]["site"]
    cleaned = [i for i in items if i["deboiler"]["status"] == "cleaned"]
    assert len(cleaned) == 9 and {i["deboiler"]["fit_pages"] for i in cleaned} == {9}
    assert stat(crawler, "deboiler/errors") == 1 and stat(crawler, "deboiler/sites_fitted") == 1
    (path,) = (tmp_path / "signatures").iterdir()
    doc = json.loads(path.read_text())
    assert doc["pages"] == 9 and len(doc["provisional"]["page_keys"]) == 9  # fewer than DEBOILER_MIN_PAGES
    died = [r.getMessage() for r in caplog.records if "worker process died" in r.getMessage()
            and r.levelname == "WARNING" and "fitting" not in r.getMessage()]
    assert died and all(bad in m for m in died), died
    failed = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(failed) == 1 and bad in failed[0] and "1 item(s)" in failed[0], failed


@pytest_twisted.ensureDeferred
async def test_a_held_page_that_raises_in_the_threads_fails_alone(tmp_path, monkeypatch, caplog):
    """Without worker processes, a page that raises while its site's held
    pages are fitted (a parser bug) failed every held item of the site:
    now the fit is split, each page signed alone in the threads; that page
    is an error naming it, the others are fitted and cleaned without it."""
    from scrapy_deboiler import _workplace

    def page(html, *args, **kwargs):
        if 'class="page-3"' in html:
            raise ValueError("a parser bug")
        return _workplace.Page.__wrapped__(html, *args, **kwargs)

    page.__wrapped__ = _workplace.Page
    monkeypatch.setattr(_workplace, "Page", page)
    a, pa = serve_site(10, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=0, DEBOILER_MIN_PAGES=10)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    errors = [i for i in items if i["deboiler"]["status"] == "error"]
    assert [i["url"] for i in errors] == [a + "articles/0003.html"]
    assert "a parser bug" in errors[0]["deboiler"]["reason"]
    cleaned = [i for i in items if i["deboiler"]["status"] == "cleaned"]
    assert len(cleaned) == 9 and {i["deboiler"]["fit_pages"] for i in cleaned} == {9}
    assert stat(crawler, "deboiler/fits_split") == 1 and stat(crawler, "deboiler/pages_failed_held") == 1
    assert "in the threads failed (a parser bug)" in caplog.text


@pytest_twisted.ensureDeferred
async def test_a_finished_model_another_crawl_saved_is_not_replaced(tmp_path, caplog):
    """Two crawls sharing a signatures folder: while this one held a site's
    first pages, the other saved a finished model of it; this one, stopped
    early, fitted a provisional model on its few pages and saved it over the
    finished one. Now the finished model stays (and this crawl takes it up),
    and a killed save's temporary file is swept as the crawl starts."""
    from scrapy_deboiler import Page, SignatureStore, SiteModel
    from scrapy_deboiler._pipeline import DeboilerPipeline

    folder = tmp_path / "signatures"
    folder.mkdir()
    stale = folder / ".x--0123456789abcdef.json.0a1b2c3d4e5f.tmp"  # a save killed a moment ago
    stale.write_text('{"format": "scrapy-deboiler-signatures", "ver')
    finished = SiteModel.fit([Page(h, u) for u, h, _ in site_pages("alpha", 10, seed=1)])
    a, pa = serve_site(12, "alpha")
    name = a.split("/")[2]
    written, waiting = [], []

    def other_crawl_saves(response, request, spider):
        pipe, = [m for m in spider.crawler.engine.scraper.itemproc.middlewares if isinstance(m, DeboilerPipeline)]
        site = pipe.sites.get(name)
        if written or waiting or site is None or site.model is not None:
            return

        def save(_=None):
            if not written and site.model is None:
                written.append(SignatureStore(folder).save(name, finished))

        # After this crawl's own read of the folder, which runs on the store's
        # thread: at once if it is done, else as it is (on a loaded machine
        # the read outlasted the crawl's few responses, and nothing was saved).
        if site.loading is None:
            save()
        else:
            waiting.append(Deferred().addCallback(save))
            site.loading.append(waiting[0])

    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=8, CONCURRENT_REQUESTS=1,
                                     spider_kwargs={"close_after": 4},
                                     on_signal=(other_crawl_saves, signals.response_received))
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert written and written[0] is not None
    assert not stale.exists()
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)
    assert stat(crawler, "deboiler/sites_provisional") == 1 and stat(crawler, "deboiler/saves_kept_better") >= 1
    model = SignatureStore(folder).load(name)
    assert (model.pages, model.provisional) == (10, False)
    assert [p.name for p in folder.iterdir()] == [SignatureStore(folder).path(name).name]


@pytest_twisted.ensureDeferred
async def test_a_full_disk_fails_saves_with_one_warning_a_site_and_the_summary_counts_them(tmp_path, caplog):
    """A full (or unwritable) signatures folder logged a 20-line traceback
    for each failed save, and the closing summary said "0 errors". Now: one
    WARNING a site and cause, the crawl goes on with the models in memory,
    and the stats and the summary count the failed saves. The folder is a
    real filesystem that is full (a 64 KiB tmpfs)."""
    import subprocess

    small = tmp_path / "small"
    small.mkdir()
    # The suite runs as root (scripts/test.sh installs Debian packages): a
    # failed mount is a failure of the test's setup, not a reason to skip.
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)],
                             capture_output=True, text=True)
    assert mounted.returncode == 0, f"mounting a 64 KiB tmpfs (needs root): {mounted.stderr}"
    try:
        with open(small / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        a, pa = serve_site(12, "alpha")
        b, pb = serve_site(12, "beta")
        caplog.set_level(logging.INFO)
        try:
            crawler, items = await crawl(tmp_path, [a, b], DEBOILER_SIGNATURES_DIR=str(small), DEBOILER_MIN_PAGES=3,
                                         DEBOILER_LEARN=True)
        finally:
            close(pa)
            close(pb)
        left = sorted(p.name for p in small.iterdir())
    finally:
        subprocess.run(["umount", str(small)], check=True)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 24 and all(i["deboiler"]["status"] == "cleaned" for i in items)
    failed = stat(crawler, "deboiler/saves_failed")
    assert failed >= 4 and stat(crawler, "deboiler/store_errors") == failed
    assert left == ["filler"]  # no temporary file left behind
    warnings = [r for r in caplog.records if "cannot save the signatures" in r.getMessage()]
    assert len(warnings) == 2 and all(r.levelname == "WARNING" and not r.exc_info for r in warnings)
    assert all("No space left on device" in r.getMessage() for r in warnings)
    summary = [r.getMessage() for r in caplog.records if "sites, 24 items" in r.getMessage()]
    assert len(summary) == 1 and f"{failed} failed saves of signature files (2 sites" in summary[0], summary


@pytest_twisted.ensureDeferred
async def test_two_crawlers_in_one_process_keep_their_middleware_state_apart(tmp_path):
    """What the middleware tells the pipeline (the response a page came
    from, its decoding notes, non-HTML items) belongs to its crawler: it was
    one process-wide table keyed by the HTML object's id. Two listing
    crawls run side by side, each item with its own detail URL: each
    crawl's pages are counted, fitted and cleaned as its own; and a page one
    crawler's middleware handled is unknown to the other's pipeline."""
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from scrapy_deboiler import DeboilerPipeline, DeboilerSpiderMiddleware

    one, two = (get_crawler(settings_dict=settings(tmp_path / name)) for name in ("one", "two"))
    mw, pipe_one, pipe_two = (DeboilerSpiderMiddleware.from_crawler(one), DeboilerPipeline.from_crawler(one),
                              DeboilerPipeline.from_crawler(two))
    response = HtmlResponse("http://alpha.example/list", body=b"<html><body><p>x</p></body></html>",
                            encoding="utf-8")
    item = mw.get_processed_item({"url": "http://alpha.example/item/1"}, response)
    assert pipe_one.handoff.origin(item["html"]).url == "http://alpha.example/list"
    assert pipe_two.handoff.origin(item["html"]) is None
    served = [serve_site(12, name) for name in ("alpha", "beta")]
    try:
        crawls = [crawl(tmp_path / name, [url], DEBOILER_MIN_PAGES=5, DEBOILER_MODE="boilerplate",
                        spider_kwargs={"items_per_page": 3, "detail_urls": True})
                  for name, (url, _) in zip(("a", "b"), served)]
        results = await DeferredList([Deferred.fromCoroutine(c) for c in crawls], fireOnOneErrback=True)
    finally:
        for _, port in served:
            close(port)
    for _, (crawler, items) in results:
        check_all_items_reached_the_feed(crawler, items)
        assert len(items) == 36 and {i["deboiler"]["status"] for i in items} == {"cleaned"}
        assert len({i["deboiler"]["site"] for i in items}) == 1
        assert stat(crawler, "deboiler/pages_cleaned") == 12


def _bilingual_page(lang: str, k: int) -> str:
    """An article of a council's site in English or Czech: one layout, its
    template's words in the page's language."""
    import random

    from sitegen import sentence

    rng = random.Random(f"{lang}/{k}")
    words = {"en": ("We use cookies to run this site.", "Was this page helpful?", "City Council, Main Square 1",
                    "News", "Services", "Contact"),
             "cs": ("Tento web používá soubory cookie.", "Byla pro vás tato stránka užitečná?",
                    "Městský úřad, Náměstí 1", "Aktuality", "Služby", "Kontakt")}[lang]
    body = "".join(f"<p>{sentence(rng, 30)}</p>" for _ in range(4))
    return (f"<html lang='{lang}'><head><title>{sentence(rng, 4)[:-1]}</title></head><body>"
            f"<div class='cookies'>{words[0]} <a href='/ok'>OK</a></div><nav><a href='/n'>{words[3]}</a> "
            f"<a href='/s'>{words[4]}</a> <a href='/c'>{words[5]}</a></nav><main><h1>{sentence(rng, 6)[:-1]}</h1>"
            f"{body}</main><div class='feedback'><p>{words[1]}</p><a href='/y'>+</a> <a href='/n'>-</a></div>"
            f"<footer><p>{words[2]}</p></footer></body></html>")


@pytest.mark.parametrize("named", [False, True])
@pytest_twisted.ensureDeferred
async def test_a_bilingual_site_named_per_language_loses_each_language_s_template(tmp_path, named, caplog):
    """A council's pages in English and in Czech: one layout, the template's
    words in two languages. Fitted on the first pages (English), the Czech
    pages kept their cookie banner, feedback box and footer (a new user's
    crawl), all "cleaned": now counted and said once. With
    DEBOILER_SITE_FIELD naming the site per language, each is fitted apart."""
    from crawling import Pages

    caplog.set_level(logging.INFO, logger="scrapy_deboiler")
    pages = {f"/articles/{lang}-{k:02d}.html": _bilingual_page(lang, k) for lang in ("en", "cs") for k in range(8)}
    links = "".join(f"<a href='{p}'>{p}</a> " for p in sorted(pages, key=lambda p: (p[10:12] != "en", p)))
    pages["/"] = f"<html><body>{links}</body></html>"
    port = reactor.listenTCP(0, Site(Pages(pages)), interface="127.0.0.1")
    extra = {"DEBOILER_SITE_FIELD": "site"} if named else {}
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"], DEBOILER_MIN_PAGES=4,
                                     CONCURRENT_REQUESTS=1, DEBOILER_MODE="boilerplate",
                                     SCHEDULER_MEMORY_QUEUE="scrapy.squeues.FifoMemoryQueue",
                                     spider_kwargs={"lang_sites": True}, **extra)
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    czech = [i for i in items if "/cs-" in i["url"]]
    assert len(czech) == 8 and all(i["deboiler"]["status"] == "cleaned" for i in items)
    kept = sum("Byla pro vás" in i["clean_text"] or "Tento web" in i["clean_text"] for i in czech)
    assert kept == (0 if named else 8), kept
    assert all("Was this page helpful" not in i["clean_text"] for i in items if "/en-" in i["url"])
    assert stat(crawler, "deboiler/sites_fitted") == (2 if named else 1)
    # Not silently: the Czech pages that kept their template are counted and said.
    assert stat(crawler, "deboiler/items_template_unmatched") == (0 if named else 8)
    told = [r for r in caplog.records if "DEBOILER_SITE_FIELD" in r.getMessage()]
    assert len(told) == (0 if named else 1) and (named or told[0].levelno == logging.INFO)
