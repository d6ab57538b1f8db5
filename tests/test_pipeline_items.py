"""Item types, the add-on, settings, and faults: no item is ever lost."""

import dataclasses
import logging

import attr
import pytest
import pytest_twisted
import scrapy
from scrapy import signals

from crawling import crawl, serve_site, stat
from sitegen import site_pages
from test_pipeline import check_all_items_reached_the_feed, close


class DeclaredItem(scrapy.Item):
    url = scrapy.Field()
    n = scrapy.Field()
    html = scrapy.Field()
    clean_text = scrapy.Field()
    clean_html = scrapy.Field()
    deboiler = scrapy.Field()


class BareItem(scrapy.Item):
    url = scrapy.Field()
    n = scrapy.Field()
    html = scrapy.Field()


@dataclasses.dataclass
class DataItem:
    url: str
    n: int
    html: str | None = None
    clean_text: str | None = None
    clean_html: str | None = None
    deboiler: dict | None = None


@attr.s(auto_attribs=True)
class AttrsItem:
    url: str
    n: int
    html: str | None = None
    clean_text: str | None = None
    clean_html: str | None = None
    deboiler: dict | None = None


class NoHtmlFieldOutItem(BareItem):
    """Declares the text and the status but not ``clean_html``."""
    clean_text = scrapy.Field()
    deboiler = scrapy.Field()


class NoTextItem(BareItem):
    """Declares the status and ``clean_html`` but not the text."""
    clean_html = scrapy.Field()
    deboiler = scrapy.Field()


def boom(*args, **kwargs):
    raise RuntimeError("injected fault")


NO_PIPELINE_SETTINGS = {"ITEM_PIPELINES": {}, "SPIDER_MIDDLEWARES": {},
                        "ADDONS": {"scrapy_deboiler.Addon": 100}}


@pytest.mark.parametrize("item_type", [DeclaredItem, DataItem])
@pytest_twisted.ensureDeferred
async def test_item_types_through_the_addon(tmp_path, item_type):
    a, pa = serve_site(7, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"item_type": item_type},
                                     **NO_PIPELINE_SETTINGS)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)
    assert all("Privacy policy" not in i["clean_text"] for i in items)
    assert all(not i.get("html") for i in items)


async def crawl_with_items_of(tmp_path, caplog, item_type) -> tuple:
    """A crawl of 7 pages whose spider yields ``item_type`` items: (crawler,
    items, the warnings that fields could not be added)."""
    a, pa = serve_site(7, "alpha")
    caplog.set_level(logging.WARNING)
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"item_type": item_type})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    return crawler, items, [r.getMessage() for r in caplog.records if "cannot add" in r.getMessage()]


@pytest_twisted.ensureDeferred
async def test_items_that_cannot_take_the_fields_pass_unchanged_with_one_warning(tmp_path, caplog):
    crawler, items, warnings = await crawl_with_items_of(tmp_path, caplog, BareItem)
    assert all(i["html"] and "clean_text" not in i for i in items)
    assert len(warnings) == 1 and "BareItem" in warnings[0]
    assert stat(crawler, "deboiler/items_unwritable") == 7


@pytest_twisted.ensureDeferred
async def test_attrs_items_stay_whole_objects_after_the_pipeline(tmp_path):
    """Deleting an attribute of an attrs instance breaks its repr, asdict
    and eq: the HTML field is set to None instead, as for dataclasses."""
    seen = []

    def scraped(item, **kw):  # what later pipelines and Scrapy's log get
        try:
            seen.append((repr(item), attr.asdict(item)))
        except Exception as e:
            seen.append(e)

    a, pa = serve_site(7, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"item_type": AttrsItem},
                                     on_signal=(scraped, signals.item_scraped), **NO_PIPELINE_SETTINGS)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(seen) == 7 and not [x for x in seen if isinstance(x, Exception)], seen[:1]
    assert all(d["html"] is None and d["deboiler"]["status"] == "cleaned" and d["clean_text"] for _, d in seen)


@pytest_twisted.ensureDeferred
async def test_items_lacking_some_clean_fields_get_the_others_and_one_warning(tmp_path, caplog):
    crawler, items, warnings = await crawl_with_items_of(tmp_path, caplog, NoHtmlFieldOutItem)
    assert all(i["clean_text"] and i["deboiler"]["status"] == "cleaned" and "clean_html" not in i
               and "html" not in i for i in items)
    assert len(warnings) == 1 and "cannot add clean_html to NoHtmlFieldOutItem" in warnings[0]
    assert "the other fields are written" in warnings[0]
    assert stat(crawler, "deboiler/items_cleaned") == 7 and stat(crawler, "deboiler/items_partly_written") == 7


@pytest_twisted.ensureDeferred
async def test_items_that_cannot_hold_the_text_are_left_exactly_unchanged(tmp_path, caplog):
    a, pa = serve_site(7, "alpha")
    caplog.set_level(logging.INFO)
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"item_type": NoTextItem})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    # clean_html and the status could be written, and were taken back: nothing half-written.
    assert all(i["html"] and set(i) == {"url", "n", "html"} for i in items), items[0].keys()
    assert stat(crawler, "deboiler/items_unwritable") == 7 and stat(crawler, "deboiler/items_cleaned") == 0
    assert any("7 that cannot hold the clean fields" in r.getMessage() for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_keep_html_and_renamed_fields(tmp_path):
    a, pa = serve_site(6, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_KEEP_HTML=True, DEBOILER_TEXT_FIELD="text",
                                     DEBOILER_STATUS_FIELD="cleaning")
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert all(i["html"].startswith("<!DOCTYPE") and i["text"] and i["cleaning"]["status"] == "cleaned"
               for i in items)


@pytest_twisted.ensureDeferred
async def test_a_fault_in_the_pipeline_itself_loses_no_item(tmp_path, monkeypatch):
    from scrapy_deboiler import _intake

    monkeypatch.setattr(_intake, "site_of_url", boom)
    a, pa = serve_site(4, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a])
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert all(i["deboiler"]["status"] == "error" for i in items)
    assert stat(crawler, "deboiler/errors") == 4


@pytest.mark.parametrize("where", [
    "_fit_site", "_clean_one", "check_page", "crawl_state", "DeboilerPipeline._finish",
    "DeboilerPipeline._write", "DeboilerPipeline._save", "DeboilerPipeline._release_held",
    "DeboilerPipeline._start_fit", "DeboilerPipeline._over_budget", "DeboilerPipeline._load",
    "DeboilerPipeline._skipped", "ItemAdapter",
])
@pytest_twisted.ensureDeferred
async def test_a_fault_while_fitting_or_cleaning_releases_items_unchanged(tmp_path, monkeypatch, where):
    from scrapy_deboiler import _intake, _output, _pipeline, _watchdog, _workplace

    # Where each name is looked up; ItemAdapter in every part that reads or writes items.
    modules = {"_fit_site": [(_workplace, "fit_site")], "_clean_one": [(_workplace, "clean_one")],
               "check_page": [(_intake, "check_page")], "crawl_state": [(_watchdog, "crawl_state")],
               "ItemAdapter": [(_intake, "ItemAdapter"), (_output, "ItemAdapter")]}
    target, _, name = where.rpartition(".")
    for module, name_in in modules[where] if where in modules else [(getattr(_pipeline, target), name)]:
        monkeypatch.setattr(module, name_in, boom)
    # 12 pages and one PDF for the skip path.
    a, pa = serve_site(12, "alpha", extra_pages={"/articles/z-pdf.html": b"%PDF-1.4 binary"})
    try:
        # Holding everything makes the watchdog's and the budget's paths run.
        extra = {"crawl_state": {"DEBOILER_MIN_PAGES": 50},
                 "DeboilerPipeline._over_budget": {"DEBOILER_MIN_PAGES": 50,
                                                   "DEBOILER_MAX_HELD_BYTES": 10_000},
                 # faults injected into the tasks reach them in the threads only
                 "_fit_site": {"DEBOILER_PROCESSES": 0}, "_clean_one": {"DEBOILER_PROCESSES": 0}}.get(where, {})
        crawler, items = await crawl(tmp_path, [a], **extra)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 13
    errors = [i for i in items if isinstance(i.get("deboiler"), dict) and i["deboiler"]["status"] == "error"]
    if where == "ItemAdapter":  # not even the status can be written: items pass as they came
        assert all("clean_text" not in i for i in items)
        return
    if where == "_fit_site":  # the fit is split: each page signed alone, then fitted on and cleaned
        assert stat(crawler, "deboiler/fits_split") >= 1 and not errors
        assert {i["deboiler"]["status"] for i in items} == {"cleaned", "skipped"}
        return
    if where == "DeboilerPipeline._save":  # after the items went on, cleaned: only counted
        assert not errors and stat(crawler, "deboiler/errors") >= 1
        assert {i["deboiler"]["status"] for i in items} == {"cleaned", "skipped"}
        return
    if where not in ("crawl_state", "DeboilerPipeline._load", "DeboilerPipeline._over_budget"):
        # the others are handled without touching items
        assert errors and all("injected fault" in i["deboiler"]["reason"] for i in errors)
    assert stat(crawler, "deboiler/errors") + stat(crawler, "deboiler/store_errors") >= 1


HOSTILE_FILES = {
    "truncated": b"{ truncated",
    "wrong-version": b'{"format": "scrapy-deboiler-signatures", "version": 3}',
    "deeply-nested": b'{"format": "scrapy-deboiler-signatures", "params": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "huge-array": b'{"format": "scrapy-deboiler-signatures", "version": 1, "domain": "x", "params": {}, '
                  b'"signatures": [' + b"0," * 2_000_000 + b"0]}",
    "huge-number": b'{"format": "scrapy-deboiler-signatures", "version": 1, "pages": ' + b"9" * 100_000 + b"}",
    "binary": bytes(range(256)) * 100,
}


@pytest.mark.parametrize("content", HOSTILE_FILES.values(), ids=HOSTILE_FILES.keys())
@pytest_twisted.ensureDeferred
async def test_a_corrupt_signature_file_is_refitted(tmp_path, content, caplog):
    a, pa = serve_site(8, "alpha")
    try:
        await crawl(tmp_path, [a])
        (path,) = (tmp_path / "signatures").iterdir()
        path.write_bytes(content)
        (tmp_path / "items.jsonl").unlink()
        crawler, items = await crawl(tmp_path, [a])
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "deboiler/store_errors") == 1 and stat(crawler, "deboiler/sites_fitted") == 1
    assert path.read_text().startswith("{\n")
    assert any(str(path) in r.getMessage() and "fitted again" in r.getMessage() for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_disabled(tmp_path):
    a, pa = serve_site(3, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_ENABLED=False)
    finally:
        close(pa)
    assert len(items) == 3 and all("clean_text" not in i and "html" not in i for i in items)


@pytest_twisted.ensureDeferred
async def test_held_html_stays_under_the_byte_budget_oldest_sites_first(tmp_path):
    a, pa = serve_site(12, "alpha")
    b, pb = serve_site(12, "beta")
    page_bytes = 3_000
    try:
        crawler, items = await crawl(tmp_path, [a, b], DEBOILER_MIN_PAGES=50,
                                     DEBOILER_MAX_HELD_BYTES=4 * page_bytes, CONCURRENT_REQUESTS=2)
    finally:
        close(pa)
        close(pb)
    check_all_items_reached_the_feed(crawler, items)
    assert max(len(h) for name in ("alpha", "beta") for _, h, _ in site_pages(name, 12)) < page_bytes
    # Without the budget all 24 pages (~60 KB) would wait to the end. With it,
    # what waits for the threshold is the budget plus the page that tipped it.
    assert stat(crawler, "deboiler/max_held_bytes") <= 5 * page_bytes
    assert stat(crawler, "deboiler/released/budget") >= 1
    assert {i["deboiler"]["status"] for i in items} <= {"cleaned", "single_page"}


@pytest.mark.parametrize("processes", [0, 1])
@pytest_twisted.ensureDeferred
async def test_idle_sites_beyond_max_sites_are_forgotten(tmp_path, processes):
    served = [serve_site(6, name) for name in ("alpha", "beta", "gamma", "delta")]
    try:
        # Sites are forgotten when a new one comes and they are idle. A
        # polite crawl (a page every 0.1 to 0.3 s: DOWNLOAD_DELAY, randomised)
        # leaves each site done (fitted, saved, cleaned, in the threads or a
        # worker process) before the next one's first page; at full speed
        # whether the first sites are still busy then is down to the
        # machine's load (seen once on a loaded CI machine).
        crawler, items = await crawl(tmp_path, [u for u, _ in served], DEBOILER_MIN_PAGES=3,
                                     DEBOILER_MAX_SITES=1, CONCURRENT_REQUESTS=1, DEBOILER_PROCESSES=processes,
                                     DOWNLOAD_DELAY=0.2)
    finally:
        for _, port in served:
            close(port)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 24 and {i["deboiler"]["status"] for i in items} == {"cleaned"}
    assert stat(crawler, "deboiler/sites_fitted") == 4 and stat(crawler, "deboiler/sites_evicted") >= 1
    assert len(list((tmp_path / "signatures").iterdir())) == 4  # what was forgotten is on disk


@dataclasses.dataclass
class BlankDefaults:
    """A dataclass as users write them: empty strings, not None, by default."""
    n: int = 0
    url: str = ""
    html: str = ""
    clean_text: str = ""
    clean_html: str = ""
    deboiler: dict | None = None


@pytest_twisted.ensureDeferred
async def test_fields_left_empty_are_filled_like_missing_ones(tmp_path):
    """``url: str = ""`` never got the response's URL, nor ``html: str = ""``
    its HTML (the middleware filled None only; found by a user trial)."""
    a, pa = serve_site(6, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={
            "item_type": lambda url, n: BlankDefaults(n=n)})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == 6 and all(i["deboiler"]["status"] == "cleaned" for i in items)
    assert all(i["url"].startswith(a) and "/articles/" in i["url"] for i in items)
    assert all("Privacy policy" not in i["clean_text"] and i["clean_text"] for i in items)


@pytest_twisted.ensureDeferred
async def test_an_html_field_holding_something_else_is_named_as_such(tmp_path):
    """An ``html`` field holding a number or a list passed with the reason
    "no 'html' in item" (and a warning about the middleware)."""
    from scrapy.utils.test import get_crawler

    from crawling import settings
    from scrapy_deboiler import DeboilerPipeline

    crawler = get_crawler(settings_dict=settings(tmp_path))
    crawler._apply_settings()
    pipe = DeboilerPipeline.from_crawler(crawler)
    for value, kind in [(123, "int"), (["<p>a</p>"], "list"), (1.5, "float"), ({"p": "a"}, "dict")]:
        item = await pipe.process_item({"url": "http://a.example/", "html": value})
        assert item["deboiler"] == {"status": "unchanged",
                                    "reason": f"'html' holds {kind}, not the page's HTML (str or bytes)"}
    assert crawler.stats.get_value("deboiler/items_html_not_text") == 4
    assert crawler.stats.get_value("deboiler/items_without_html") is None
    item = await pipe.process_item({"url": "http://a.example/", "html": None})
    assert item["deboiler"]["reason"] == "no 'html' in item"
