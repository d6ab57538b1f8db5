"""Content mode's clean_html keeps the page's structure: items in their
lists, rows in their tables, links with their targets, images, quotes and
code, and nothing the page did not have; its text is clean_text's. Checked
with two parsers (lxml, html5lib in strict mode) and in Chromium."""

from __future__ import annotations

import html as html_lib
import re

import html5lib
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from lxml import etree

from scrapy_deboiler import Page, SiteModel, clean_page
from scrapy_deboiler._content_html import ATTRIBUTES, content_html
from scrapy_deboiler._loading import parse_html
from scrapy_deboiler._text import pre_text, tree_text
from sitegen import KINDS, typed_page
from test_views import browser  # noqa: F401 (the fixture: Chromium through Selenium)

ALLOWED = set(ATTRIBUTES) | {"open"}
GENERIC = {"div", "section", "article", "main", "aside", "header", "footer", "nav", "span", "font"}


def parse(html: str) -> etree._Element:
    """The tree of clean_html; lxml must read it without errors (other
    than libxml2 not knowing HTML5's tags), and html5lib, strict, must
    read it without a parse error and to the same elements."""
    parser = etree.HTMLParser()
    root = etree.fromstring(html, parser)
    errors = [e.message for e in parser.error_log if not re.match(r"Tag \w+ invalid", e.message)]
    assert not errors, errors
    strict = html5lib.HTMLParser(html5lib.getTreeBuilder("lxml"), strict=True, namespaceHTMLElements=False)
    other = strict.parse("<!DOCTYPE html>" + html).getroot()  # raises on any parse error
    assert paths(other) == paths(root)
    return root


def paths(root) -> list[str]:
    """Each element as the path of tags down to it (``tbody``, which
    html5lib adds to a table without it, left out)."""
    out = []
    for el in root.find("body").iter():
        if isinstance(el.tag, str) and el.tag != "tbody":
            out.append("/".join(a.tag for a in reversed([el, *el.iterancestors()]) if a.tag != "tbody"))
    return out


def bare(text: str) -> str:
    """The text without white space: clean_text joins the text pieces of a
    block with spaces ("By Ann Lee , May 4" for ``Ann Lee</span>, May``)
    and a <br> with a space, the HTML keeps the page's spacing."""
    return "".join(text.split())


def cleaned(kind: str, i: int = 3, fitted: bool = True):
    pages = [typed_page(kind, f"{kind}.example", k) for k in range(8)]
    model = SiteModel.fit([Page(h, u) for u, h in pages]) if fitted else None
    url, html = pages[i]
    return url, html, clean_page(Page(html, url), model, mode="content")


def check_structure(url: str, page_html: str, result) -> etree._Element:
    """What every content-mode clean_html holds to."""
    root = parse(result.html)
    assert bare(tree_text(root)) == bare(result.text)  # the same text, block for block
    page_tags = {el.tag for el in Page(page_html).root.iter()}
    tags = {el.tag for el in root.iter()}
    assert tags <= page_tags  # nothing invented
    for el in root.iter(*GENERIC):  # a container only as a kept block: with text of its own
        assert (el.text or "").strip() or any((c.tail or "").strip() for c in el), etree.tostring(el)
    assert root.findtext("head/title") == Page(page_html).root.findtext("head/title")
    for el in root.iter():
        assert set(el.attrib) <= ALLOWED, (el.tag, el.attrib)
    for li in root.iter("li"):
        assert li.getparent().tag in ("ul", "ol"), etree.tostring(li)
    for el in root.iter("dt", "dd"):
        assert el.getparent().tag == "dl"
    for tr in root.iter("tr"):
        assert next(tr.iterancestors("table"), None) is not None
    for cell in root.iter("td", "th"):
        assert cell.getparent().tag == "tr"
    site = url.split("/")[2]
    for a in root.iter("a"):
        assert a.get("href", "").startswith(f"http://{site}/"), a.attrib
    for img in root.iter("img"):
        assert img.get("src", "").startswith(f"http://{site}/") and img.get("alt")
    return root


def texts(root, path: str) -> list[str]:
    return [" ".join(tree_text(el).split()) for el in root.xpath(path)]


@pytest.mark.parametrize("fitted", [True, False], ids=["site model", "single page"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_page_keeps_its_structure(kind, fitted):
    url, page_html, result = cleaned(kind, fitted=fitted)
    root = check_structure(url, page_html, result)
    src = Page(page_html).root
    assert len(root.findall("body/h1")) == 1
    if kind == "article":
        fig = root.find("body/figure")
        assert [c.tag for c in fig] == ["img", "figcaption"]  # the figure's image beside its caption
        assert [c.tag for c in root.find("body/blockquote")] == ["p", "p"]
        assert root.xpath("//p/em") and root.xpath("//p/strong") and root.xpath("//p/br")
        assert root.find(".//time").get("datetime").startswith("2026-05-")
        assert root.xpath("//p/a/@href") == [f"http://article.example/story/{3}/context"]
    elif kind == "listing":
        items = root.xpath("/html/body/ul/li")
        assert len(items) == 6 and [c.tag for c in items[0]] == ["h2", "p"]
        assert root.xpath("//li/h2/a/@href") == [f"http://listing.example/posts/3-{k}" for k in range(6)]
        assert root.xpath("//li/p/a/@title") == ["Read on"] * 6
    elif kind == "product":
        table = root.find("body/table")
        assert [c.tag for c in table] == ["thead", "tbody"]
        assert texts(table, ".//tr") == texts(src, "//table[@class='specs']//tr")
        assert table.xpath("tbody/tr/th/@scope") == ["row"] * 6
        assert len(root.xpath("/html/body/ul/li")) == 3
    elif kind == "forum":
        assert len(root.xpath("/html/body/blockquote/p")) == 2
        assert len(root.xpath("//p/a[@href='http://forum.example/thread/3?page=2']")) == 5
    elif kind == "docs":
        pre = root.find("body/pre")
        assert [c.tag for c in pre] == ["code"] and pre_text(pre) == pre_text(src.find(".//pre"))
        assert "total += item * 3  # <scaled>" in pre_text(pre)
        assert texts(root, "//table//tr") == texts(src, "//table//tr") and root.xpath("//td/code")
        assert root.xpath("/html/body/dl/dd") and len(root.xpath("//p/kbd")) == 2
    elif kind == "service":
        assert [len(ol) for ol in root.iter("ol")] == [3, 3, 3] and len(root.xpath("/html/body/h2")) == 3
        assert root.xpath("//p/a/@href") == ["http://service.example/contact"]


def test_chromium_reads_lists_links_and_tables_where_they_belong(tmp_path, browser):
    """Rendered by a browser (whose parser repairs what lxml lets through),
    the clean HTML's items are in lists, its rows in tables and its links
    lead somewhere; what it shows is clean_text."""
    for kind in KINDS:
        _, _, result = cleaned(kind)
        path = tmp_path / f"{kind}.html"
        path.write_text(result.html, encoding="utf-8")
        browser.get(path.as_uri())
        facts = browser.execute_script("""
            const all = s => Array.from(document.querySelectorAll(s));
            return {
              items: all('li').map(e => e.parentElement.tagName),
              rows: all('tr').map(e => !!e.closest('table')),
              cells: all('td, th').map(e => e.parentElement.tagName),
              links: all('a').map(e => e.href),
              images: all('img').map(e => e.src),
              quotes: all('blockquote > p').length,
              code: all('pre > code').map(e => e.innerText),
              text: document.body.innerText,
              title: document.title,
            };""")
        assert set(facts["items"]) <= {"UL", "OL"}, kind
        assert all(facts["rows"]) and set(facts["cells"]) <= {"TR"}, kind
        assert all(h.startswith(f"http://{kind}.example/") for h in facts["links"]), kind
        assert all(s.startswith(f"http://{kind}.example/") for s in facts["images"]), kind
        assert bare(facts["text"]) == bare(result.text), kind
        want = {"listing": ("items", 6), "service": ("items", 9), "product": ("rows", 7),
                "docs": ("rows", 5), "forum": ("quotes", 2), "article": ("images", 1)}[kind]
        assert len(facts[want[0]]) == want[1] if want[0] != "quotes" else facts["quotes"] == want[1]
        assert facts["title"] == etree.fromstring(result.html, etree.HTMLParser()).findtext("head/title")
        if kind == "docs":
            assert facts["code"] and "for item in request.items:\n        total" in facts["code"][0]


PAGE = """<html lang="de" dir="ltr"><head><title> A  test </title><base href="/docs/v2/"></head><body>
<nav class="menu"><a href="/">Home</a> <a href="/a">About</a></nav>
<div class="story"><h1 class="big" id="top" style="color: red" onclick="x()">Release notes</h1>
<p>First paragraph of the notes with a <a href="guide.html" class="btn" onclick="go()">relative link</a>,
a <a href="javascript:alert(1)">script link</a>, an <a name="anchor">anchor</a>, an
<img src="data:image/gif;base64,R0lGOD" alt=""> empty image, <span class="sr-only">screen reader words</span>
and <abbr title="HyperText Markup Language">HTML</abbr> and a <a href="//cdn.example.org/x">protocol link</a>.</p>
<p>Second paragraph<span style="display:none"> hidden words</span>: <b></b> <a href="#top"></a>
<q cite="/sources/1">quoted words</q> <a href="?page=2#c">next page</a>, <a href="/abs">root link</a>.</p>
<p>A paragraph before the table, to say what the table below holds and why it matters here.</p>
<table><tr><td colspan="2" style="width: 10px" class="x">A wide cell of the table, with a sentence in it.</td></tr>
<tr><td>The left cell, with words too</td><td rowspan="1">and the right cell, with more words.</td></tr></table>
<p>A paragraph after the table, to say what the table above held and why it mattered there.</p>
<details><summary>More details</summary><p>The details paragraph that content mode keeps for readers.</p></details>
<pre>line one  <span hidden>hidden in code</span>
    indented line two</pre>
</div></body></html>"""


def test_attributes_urls_and_hidden_parts():
    """A short list of attributes (no class, style, id or handlers);
    targets joined with the page's URL and its <base>; unsafe targets,
    links without one and empty inline elements left out; hidden parts
    left out as clean_text leaves them out (but a <pre>'s)."""
    page = Page(PAGE, "https://example.org/docs/intro.html")
    result = clean_page(page, None, mode="content")
    root = parse(result.html)
    assert bare(tree_text(root)) == bare(result.text)
    assert root.get("lang") == "de" and root.get("dir") == "ltr" and root.findtext("head/title") == "A test"
    assert "screen reader" not in result.html and "hidden words" not in result.html
    assert "hidden in code" in result.text and "hidden in code" in result.html  # as the <pre> reads
    assert [(a.get("href"), a.text) for a in root.iter("a")] == [
        ("https://example.org/docs/v2/guide.html", "relative link"),
        ("https://cdn.example.org/x", "protocol link"),
        ("https://example.org/docs/v2/?page=2#c", "next page"),
        ("https://example.org/abs", "root link")]
    assert not root.xpath("//img|//b")  # no source or text, nothing inside
    assert root.find(".//abbr").get("title") == "HyperText Markup Language"
    assert root.find(".//q").get("cite") == "https://example.org/sources/1"
    assert [dict(td.attrib) for td in root.iter("td")] == [{"colspan": "2"}, {}, {"rowspan": "1"}]
    details = Page(PAGE).root.find(".//details")
    opened = parse(content_html(details.getroottree().getroot(), [details[1]]))
    assert opened.find("body/details").get("open") is not None  # a closed one would hide the kept text
    assert "onclick" not in result.html and "class=" not in result.html and "style" not in result.html
    assert "javascript" not in result.html and "data:" not in result.html and "id=" not in result.html
    # Without a URL relative targets stay as they are (but the <base>'s).
    no_url = parse(clean_page(Page(PAGE), None, mode="content").html)
    assert no_url.xpath("//a/@href")[0] == "/docs/v2/guide.html"


def test_a_page_all_hidden_keeps_its_hidden_text_as_clean_text_does():
    html = ("<html><body><div aria-hidden='true'>"
            + "".join(f"<p>Paragraph {i} of a page shown only once its dialog closes, <span hidden>with "
                      f"hidden words {i}</span> and more.</p>" for i in range(5)) + "</div></body></html>")
    result = clean_page(Page(html), None, mode="content")
    assert "hidden words 3" in result.text
    assert bare(tree_text(parse(result.html))) == bare(result.text)


def test_deep_nesting_does_not_recurse():
    """5,000 nested elements: lists in lists, and divs each with a
    sentence (5,000 blocks, each an ancestor of the next)."""
    lists = ("<html><body><p>" + "An introduction to a very deep list of items. " * 3 + "</p>"
             + "<ul><li>item words here" * 5000 + "</li></ul>" * 5000 + "</body></html>")
    divs = "<html><body>" + "<div>Words of a nested division here" * 5000 + "</div>" * 5000 + "</body></html>"
    for html in (lists, divs):
        page = Page(html)
        result = clean_page(page, None, mode="content")
        assert result.text and ("<li>" in result.html or "<div>" in result.html)
        root = parse_html(result.html).root  # the loader reads past libxml2's depth limit
        assert "".join(tree_text(root).split()) == "".join(result.text.split())


# Random pages: nested blocks, inline elements, hidden parts, code.
_TEXT = st.sampled_from(["", " ", "Some words here", "more text, and commas.", "x", " spaced  out ",
                         "<&> \"quoted\"", "\xa0nbsp\xa0", "a\nnew line"])
_BLOCK = st.sampled_from("div p ul ol li table tr td th h2 blockquote pre dl dt dd figure figcaption "
                         "section".split())
_INLINE = st.sampled_from("a b em span code br img abbr".split())
_ATTRS = st.sampled_from(["", " hidden", " class='sr-only'", " href='/x'", " href='javascript:x'",
                          " src='/i.png' alt='pic'", " style='display:none'", " title='t'"])


@st.composite
def _tree(draw, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        tag = draw(st.one_of(_BLOCK, _INLINE))
        attrs = draw(_ATTRS)
        parts.append(f"<{tag}{attrs}>{draw(_TEXT)}{draw(_tree(depth + 1))}</{tag}>{draw(_TEXT)}")
    return draw(_TEXT) + "".join(parts)


@settings(derandomize=True, max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_tree())
def test_random_pages_hold_clean_texts_text_in_well_formed_html(body):
    html = f"<html><head><title>t</title></head><body>{body}<p>{'Filler words of a paragraph. ' * 8}</p></body></html>"
    result = clean_page(Page(html, "http://r.example/a/b"), None, mode="content")
    root = parse(result.html)
    assert sorted(bare(tree_text(root))) == sorted(bare(result.text))  # blocks around blocks: another order
    assert not {el.tag for el in root.iter()} - {el.tag for el in Page(html).root.iter()}


def test_escaping():
    html = ("<html><body><p>" + "Tags &lt;b&gt; and &amp;amp; stay text in this long enough paragraph. " * 3
            + "<a href='/q?a=1&amp;b=\"2\"'>a &quot;link&quot;</a></p></body></html>")
    result = clean_page(Page(html, "http://e.example/"), None, mode="content")
    root = parse(result.html)
    assert root.find(".//a").get("href") == 'http://e.example/q?a=1&b="2"'
    assert "<b>" not in html_lib.unescape(result.html.replace("&lt;b&gt;", "")) and "&lt;b&gt;" in result.html
    assert bare(tree_text(root)) == bare(result.text)
