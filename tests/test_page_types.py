"""Content mode on every kind of page a site has, in a real crawl: listings,
products, forum threads, documentation and service pages, not only
articles. Each page's own content is kept whole (every entry, post and
specification row), the site's template is not, and clean_html keeps the
page's structure."""

import re

import pytest
import pytest_twisted
from lxml import etree, html as lxml_html
from twisted.internet import reactor
from twisted.web.server import Site

from crawling import Pages, crawl
from sitegen import KINDS, typed_page
from test_pipeline import check_all_items_reached_the_feed, close

PAGES_A_KIND = 4
_WORD = re.compile(r"\w+")
TEMPLATE = ("All rights reserved", "Elsewhere on", "Privacy policy", "Terms of use", "About us")


def words(text: str) -> str:
    return " ".join(_WORD.findall(text))


def serve_typed_site(name: str) -> tuple[str, object, dict[str, str]]:
    """Pages of every kind under one template, and an index linking them."""
    pages, by_path = {}, {}
    for kind in KINDS:
        for i in range(PAGES_A_KIND):
            url, html = typed_page(kind, name, i)
            path = url.split(name, 1)[1]
            pages[path] = by_path[path] = html
    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in sorted(pages))
    pages["/"] = f"<html><body><ul>{links}</ul></body></html>"
    port = reactor.listenTCP(0, Site(Pages(pages)), interface="127.0.0.1")
    return f"http://127.0.0.1:{port.getHost().port}/", port, by_path


def own_content(kind: str, html: str) -> list[str]:
    """The parts of a generated page a reader comes for, as words."""
    root = lxml_html.fromstring(html)
    main = root.find(".//main")
    found = {
        "listing": main.xpath(".//li[@class='entry']"),
        "product": main.xpath(".//table[@class='specs']//tr") + main.xpath(".//div[@class='description']/*"),
        "forum": main.xpath(".//div[@class='post']"),
        "docs": main.xpath(".//pre") + main.xpath(".//table//tr") + main.xpath(".//dd"),
        "service": main.xpath(".//section"),
        "article": main.xpath(".//p[not(@class)]"),
    }[kind]
    assert found
    return [words(" ".join(e.itertext())) for e in found]


@pytest.mark.parametrize("processes", [1, 0])
@pytest_twisted.ensureDeferred
async def test_every_kind_of_page_keeps_its_own_content_and_structure(tmp_path, processes):
    url, port, by_path = serve_typed_site("mixed.test")
    try:
        crawler, items = await crawl(
            tmp_path, [url], DEBOILER_MIN_PAGES=5, DEBOILER_PROCESSES=processes,
            spider_kwargs={"follow": "/(" + "|".join(KINDS) + ")/"})
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == len(KINDS) * PAGES_A_KIND
    assert {i["deboiler"]["status"] for i in items} == {"cleaned"}
    for item in items:
        path = "/" + item["url"].split("/", 3)[3]
        kind = path.split("/")[1]
        text = words(item["clean_text"])
        for part in own_content(kind, by_path[path]):
            assert part in text, (path, part)
        for line in TEMPLATE:
            assert line not in item["clean_text"], (path, line)
        # clean_html: well-formed, lists in lists, rows in tables, links
        # with their targets, no element the page did not have.
        doc = etree.fromstring(item["clean_html"].encode(), etree.HTMLParser(recover=False))
        for li in doc.iter("li"):
            assert li.getparent().tag in ("ul", "ol"), path
        for tr in doc.iter("tr"):
            assert tr.getparent().tag in ("table", "thead", "tbody", "tfoot"), path
        for a in doc.iter("a"):
            assert a.get("href", "").startswith("http://127.0.0.1:"), path
        assert doc.find(".//article") is None or kind == "article"
        assert words(" ".join(doc.find("body").itertext())) == text, path
    kinds = {"/" + i["url"].split("/", 3)[3]: i for i in items}
    listing = kinds["/listing/1.html"]
    assert lxml_html.fromstring(listing["clean_html"]).xpath("count(//ul/li/h2/a[@href])") == 6
