"""Hostile pages: each has a defined outcome, in the core and in a crawl."""

import pytest
import pytest_twisted

from crawling import crawl, serve_site, stat
from hostile import CASES, LIBXML2_LIMITS_DEPTH, SURROGATES
from scrapy_deboiler import Limits, Page, SiteModel, check_page, clean_page
from sitegen import site_pages
from test_pipeline import check_all_items_reached_the_feed, close


def normal_pages(n=6):
    return [(url, html) for url, html, _ in site_pages("example.org", n)]


@pytest.mark.parametrize("mode", ["boilerplate", "content"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_hostile_page_has_its_outcome(name, mode):
    body, status, what = CASES[name]
    model = SiteModel.fit([Page(h, u) for u, h in normal_pages()])
    page = Page(body, "http://example.org/hostile")
    result = clean_page(page, model, mode=mode)
    if status == "skipped":
        assert result.skipped is not None and result.skipped.kind == what
        assert result.text == result.html == "" and page.signatures == frozenset()
    else:
        assert result.skipped is None
        if what:
            assert what in result.notes
    if name.startswith("deep"):
        assert "deep text" in result.text
    if name == "malformed-names":
        assert "Odd names" in result.text and "zero width" in result.text
    if name in ("bogus-encoding", "lying-encoding"):  # read as windows-1252 after all
        assert "Café crème brûlée" in result.text or "Naïve façade" in result.text
    if name == "million-entities":
        assert result.text.count("&é<") == 200_000 or mode == "content"
        assert "&é<" in result.text


def test_lone_surrogates_are_replaced_and_noted():
    result = clean_page(Page(SURROGATES), None)
    assert "Broken ? pair ? here" in result.text and result.notes == ["surrogates"]


def test_text_decoded_with_the_wrong_encoding_before_it_came_is_noted():
    russian = ("<html><body><h1>Новости</h1><p>" + "Сегодня в городе прошёл большой праздник. " * 20
               + "</p></body></html>")
    garbled = russian.encode("cp1251").decode("utf-8", "replace")  # html=response.text, charset=utf-8 said
    result = clean_page(Page(garbled), None)
    assert "replacement-characters" in result.notes
    assert "replacement-characters" not in clean_page(Page(russian), None).notes
    # A page quoting a few of its own is no garbled page.
    quoted = russian.replace("<p>", "<p>" + "\ufffd" * 15, 1)
    assert "replacement-characters" not in clean_page(Page(quoted), None).notes
    # Bytes are read again instead.
    assert "encoding-fallback" in clean_page(Page(russian.encode("cp1251"), encoding="utf-8"), None).notes


def test_skipped_pages_do_not_weaken_a_site_model():
    pages = normal_pages(8)
    hostile = [(f"http://example.org/articles/{i:04d}x.html", CASES[n][0])
               for i, n in enumerate(["pdf", "json", "million-siblings", "empty"])]
    clean = SiteModel.fit([Page(h, u) for u, h in pages])
    mixed = SiteModel.fit([Page(h, u) for u, h in pages + hostile])
    assert mixed.support == clean.support and mixed.pages == clean.pages == 8


def test_limits_are_settings():
    page = "<html><body>" + "<p>x</p>" * 50 + "</body></html>"
    assert check_page(page) is None
    assert check_page(page, Limits(max_elements=40)).kind == "too-many-elements"
    assert check_page(page, Limits(max_bytes=100)).kind == "too-large"
    assert check_page(page.encode(), Limits(max_bytes=100)).reason.endswith("over the limit of 100")


def test_xhtml_with_an_xml_declaration_is_html():
    page = b'<?xml version="1.0"?>\n<!DOCTYPE html>\n<html><body><p>Words.</p></body></html>'
    assert check_page(page) is None and check_page(page.decode()) is None


@pytest_twisted.ensureDeferred
async def test_a_crawl_keeps_every_hostile_item_with_a_status_and_a_stat(tmp_path):
    """The bodies are served as text/html (lying, for the binary ones), so
    they reach the pipeline as Scrapy's decoded response.text."""
    extra = {f"/articles/hostile-{name}.html": body for name, (body, _, _) in CASES.items()}
    a, pa = serve_site(8, "alpha", extra_pages=extra)
    try:
        crawler, items = await crawl(tmp_path, [a], guard=120)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    by_name = {i["url"].rsplit("hostile-", 1)[1][:-5]: i for i in items if "hostile-" in i["url"]}
    assert sorted(by_name) == sorted(CASES)
    for name, (_, status, what) in CASES.items():
        got = by_name[name]["deboiler"]
        if status == "skipped":
            assert got["status"] == "skipped" and got["kind"] == what, (name, got)
            assert "clean_text" not in by_name[name]
        else:
            assert got["status"] == "cleaned", (name, got)
    skipped = [n for n, c in CASES.items() if c[1] == "skipped"]
    assert stat(crawler, "deboiler/items_skipped") == len(skipped)
    for kind in {CASES[n][2] for n in skipped}:
        assert stat(crawler, f"deboiler/skipped/{kind}") == sum(CASES[n][2] == kind for n in skipped)
    assert stat(crawler, "deboiler/notes/depth-flattened") == (2 if LIBXML2_LIMITS_DEPTH else 0)
    assert stat(crawler, "deboiler/items_cleaned") == 8 + len(CASES) - len(skipped)
