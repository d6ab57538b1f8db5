"""clean_markdown: CommonMark that a real Markdown parser (markdown-it-py,
with GitHub's tables and strikethrough) reads back to the page's structure."""

from __future__ import annotations

import json
import re

from lxml import html as lxml_html
from markdown_it import MarkdownIt

from scrapy_deboiler import Page, SiteModel, clean_page
from scrapy_deboiler._markdown import tree_markdown
from scrapy_deboiler._text import tree_text
from sitegen import site_pages
from test_cli import cli, read, write

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
WORD = re.compile(r"\w+")

PAGE = """<html><head><title>t</title><script>var x = "*not* text";</script></head><body>
<h1>Release notes: *stars*, _under_ & [brackets]</h1>
<p>Plain text with <a href="https://example.com/a b(c)">a link <em>with emphasis</em></a>,
<strong> padded bold </strong>, <code>x = `y` * 2</code>, snake_case_name, 5 * 3 &lt;tag&gt;
&amp;amp; a backslash \\ and 1+1. <img src="/i.png" alt="a [picture]"> <del>gone</del>
<a href="javascript:void(0)">no target</a></p>
<p>1. not a list</p><p>2) nor this</p><p>2.3.2 (2023-05-24) is a version</p>
<p># not a heading</p><p>- not an item</p><p>+ neither</p><p>&gt; not a quote</p>
<p>line one<br>line two<br></p>
<ul><li>first</li><li>second<ol start="7"><li>seventh</li><li>eighth</li></ol></li><li>third</li></ul>
<ol><li><p>para one</p><p>para two</p></li><li>next</li></ol>
<pre class="language-python">def f():
    return "```"  # backticks inside
</pre>
<table><tr><th>Name</th><th>Value | unit</th></tr><tr><td>width</td><td>3 <b>m</b></td></tr>
<tr><td>height</td><td>4 m</td></tr></table>
<blockquote><p>quoted one</p><p>quoted two</p><blockquote><p>deeper</p></blockquote></blockquote>
<hr><h2>After the break</h2><h6>Small</h6>
</body></html>"""


def back(md: str):
    """The HTML a CommonMark parser makes of ``md``, as a tree."""
    return lxml_html.fromstring(f"<html><body>{PARSER.render(md)}</body></html>")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def texts(root, path: str) -> list[str]:
    return [" ".join(tree_text(el).split()) for el in root.xpath(path)]


def test_a_parser_reads_back_the_structure_of_the_page():
    src = lxml_html.fromstring(PAGE)
    md = tree_markdown(lxml_html.fromstring(PAGE))
    got = back(md)
    assert words(tree_text(got)) == words(tree_text(src))
    for path in ("//h1", "//h2", "//h6", "//li", "//th", "//td", "//blockquote/p", "//em"):
        assert texts(got, path) == texts(src, path), path
    assert texts(got, "//p/code") == texts(src, "//code")
    assert texts(got, "//strong") == texts(src, "//strong|//b")
    assert texts(got, "//s") == texts(src, "//del")  # GitHub's strikethrough
    assert got.xpath("//ol/@start") == ["7"]
    assert [(a.get("href"), a.text_content()) for a in got.iter("a")] == [
        ("https://example.com/a%20b(c)", "a link with emphasis")]
    assert [(i.get("src"), i.get("alt")) for i in got.iter("img")] == [("/i.png", "a [picture]")]
    (pre,) = got.xpath("//pre/code")
    assert pre.get("class") == "language-python" and pre.text == src.xpath("//pre")[0].text.strip("\n") + "\n"
    assert len(got.xpath("//blockquote/blockquote")) == 1 and len(got.xpath("//hr")) == 1
    assert len(got.xpath("//p[br]")) == 1  # the hard line break, once
    # Nothing in the text became markup by accident.
    assert not got.xpath("//h3|//h4|//h5") and len(got.xpath("//ul|//ol")) == 3
    assert "javascript" not in md and "no target" in md
    # A number is escaped only where it would start a list: a version stays
    # as written, so that a search of the Markdown finds it (trial 29).
    assert "\n2.3.2 (2023-05-24) is a version" in md and "1\\. not a list" in md


def test_deep_nesting_and_layout_tables_read_back_whole():
    deep = "<ul><li>level" + "<ul><li>level".join("" for _ in range(40)) + "</li></ul>" * 40
    quotes = "<blockquote><p>q</p>" * 30 + "</blockquote>" * 30
    layout = ("<table><tr><td><h2>Headline</h2><p>First paragraph.</p></td>"
              "<td><ul><li>side</li></ul></td></tr></table>")
    page = f"<html><body>{deep}{quotes}{layout}</body></html>"
    got = back(tree_markdown(lxml_html.fromstring(page)))
    assert words(tree_text(got)) == words(tree_text(lxml_html.fromstring(page)))
    assert not got.xpath("//table") and texts(got, "//h2") == ["Headline"]


def test_content_mode_markdown_holds_the_kept_text_with_its_structure():
    pages = site_pages("md.example", 6)
    model = SiteModel.fit(Page(h, u) for u, h, _ in pages)
    url, html, article = pages[2]
    html = html.replace("</article>", '<ul class="points"><li>Point one is a long sentence about '
                        'the harbor and the meadow.</li><li>Point two is a long sentence about the <a href="/x">'
                        'lantern</a> by the river and the quiet marble bridge.</li></ul></article>')
    result = clean_page(Page(html, url), model, mode="content", markdown=True)
    got = back(result.markdown)
    assert words(tree_text(got)) == words(result.text)
    assert texts(got, "//h1") == [article.splitlines()[0]]
    assert texts(got, "//li") == ["Point one is a long sentence about the harbor and the meadow.",
                                  "Point two is a long sentence about the lantern by the river and the quiet "
                                  "marble bridge."]
    # Links absolute, as in clean_html.
    assert [a.get("href") for a in got.iter("a")] == ["http://md.example/x"]
    assert 'href="http://md.example/x"' in result.html
    for template in ("cookies", "Privacy policy", "Sign up"):
        assert template not in result.markdown


def test_markdown_links_and_images_are_absolute_against_the_page_and_its_base():
    page = ('<html><head><base href="/docs/v2/"></head><body><p>Read <a href="intro.html">the intro</a>, '
            '<a href="#faq">the FAQ</a> and <a href="javascript:go()">this</a>, as <img src="../img/a.png" '
            'alt="A diagram"> shows.</p></body></html>')
    for mode in ("boilerplate", "content"):
        md = clean_page(Page(page, "https://example.com/start?x=1"), SiteModel(), mode=mode, markdown=True).markdown
        assert "[the intro](https://example.com/docs/v2/intro.html)" in md, mode
        assert "[the FAQ](https://example.com/docs/v2/#faq)" in md, mode
        assert "javascript" not in md and "this" in md, mode
        assert "![A diagram](https://example.com/docs/img/a.png)" in md, mode
    # Without a URL they stay as the page wrote them.
    assert "[the intro](intro.html)" in clean_page(Page(page), SiteModel(), mode="boilerplate", markdown=True).markdown


def test_the_cli_writes_clean_markdown_in_both_modes(tmp_path):
    recs = [{"id": f"{i}", "url": u, "html": h} for i, (u, h, _) in enumerate(site_pages("cli.example", 6))]
    write(tmp_path / "in.jsonl", recs)
    for mode in ("content", "boilerplate"):
        cli("clean", tmp_path / "in.jsonl", tmp_path / f"{mode}.jsonl", "--mode", mode, "--markdown")
        for o in read(tmp_path / f"{mode}.jsonl"):
            assert words(tree_text(back(o["clean_markdown"]))) == words(o["clean_text"])
    cli("clean", tmp_path / "in.jsonl", tmp_path / "plain.jsonl")
    assert all("clean_markdown" not in o for o in read(tmp_path / "plain.jsonl"))
    assert json.loads((tmp_path / "content.jsonl").read_text().splitlines()[0])["clean_markdown"].startswith("# ")


def test_emphasis_inside_the_same_emphasis_adds_no_marks():
    # Thousands of nested <b> (a broken page's unclosed tags) were thousands
    # of asterisks; <b> in <strong> was "****", which parsers read as text.
    deep = "<b>" * 5000 + "deep" + "</b>" * 5000
    page = (f"<html><body><p>{deep} text</p><p>a <b>x <strong>y</strong> z</b> "
            "<i>q <b>w <em>e</em></b></i> <del>d <s>s</s></del></p></body></html>")
    result = clean_page(Page(page, "https://example.com/deep"), SiteModel(), mode="boilerplate", markdown=True)
    first, second = result.markdown.strip().split("\n\n")
    assert first == "**deep** text"
    assert second == "a **x y z** *q **w e*** ~~d s~~"
    got = back(result.markdown)
    assert texts(got, "//strong") == ["deep", "x y z", "w e"] and texts(got, "//em") == ["q w e"]


def test_a_signature_and_a_price_in_spans_read_as_written():
    """An API page writes a signature in spans, a shop a price: the text
    and the Markdown write them as the page shows them ("pkg.mod.run(source,
    strict)", "£30,000"), not "pkg.mod. run ( source, strict )"; two
    fields side by side still part ("Jorge Ruiz 2024-03-22")."""
    page = ("<html><body><dl><dt><span>pkg.mod.</span><span>run</span><span>(</span><em>source</em>, "
            "<em>strict</em><span>)</span></dt><dd>Runs it.</dd></dl><p>From <span>£</span><span>30,000</span> "
            "a year.</p><p><span>Jorge Ruiz</span><time>2024-03-22</time></p></body></html>")
    for mode in ("boilerplate", "content"):
        result = clean_page(Page(page, "https://example.com/api"), None, mode=mode, markdown=True)
        assert "**pkg.mod.run(*source*, *strict*)**" in result.markdown, (mode, result.markdown)
        assert "From £30,000 a year." in result.markdown
        if mode == "boilerplate":  # (content mode's block model drops the short line alone)
            assert "Jorge Ruiz 2024-03-22" in result.markdown
        else:
            assert "pkg.mod.run(source, strict)" in result.text.splitlines()
            assert "From £30,000 a year." in result.text


def test_a_table_s_caption_stands_over_it():
    """A table's ``<caption>`` is its title: the text and the HTML kept it,
    the Markdown dropped it ("Historical population", a shop's "Size
    guide")."""
    page = ("<html><body><p>How the town grew, decade by decade, since the railway came.</p><table>"
            "<caption>Historical population</caption><tr><th>Year</th><th>Pop.</th></tr>"
            "<tr><td>1900</td><td>1,200</td></tr><tr><td>1950</td><td>2,400</td></tr></table></body></html>")
    for mode in ("boilerplate", "content"):
        md = clean_page(Page(page, "https://example.com/town"), None, mode=mode, markdown=True).markdown
        assert "Historical population\n\n| Year | Pop. |\n|---|---|\n| 1900 | 1,200 |" in md, (mode, md)


def test_content_mode_markdown_keeps_the_line_breaks_of_kept_blocks():
    """A <br> in a kept block is its line break, and a space in a table's
    cell: content mode's Markdown dropped them (a forum index read
    "...200GB table](...)by [mariadb_fan]", an address ran its lines together)."""
    html = ("<html><body><main><h1>Threads of the forum</h1><p>Keramikwerk Hansen<br>Hafenstrasse 3<br>25813 "
            "Husum, where the forum's members meet once a year to talk about their servers.</p>"
            "<table><tr><th>Topic</th><th>Replies</th></tr>"
            + "".join(f"<tr><td>Thread number {i} about backups<br>by member{i}</td><td>{i + 2} replies, the "
                      f"last on March {i + 3}</td></tr>" for i in range(4))
            + "</table></main></body></html>")
    md = clean_page(Page(html, "https://forum.example/"), None, mode="content", markdown=True).markdown
    assert "Keramikwerk Hansen\\\nHafenstrasse 3\\\n25813 Husum, where" in md
    assert "| Thread number 1 about backups by member1 | 3 replies, the last on March 4 |" in md



def test_lists_one_after_another_stay_apart_and_terms_stand_out():
    """Two lists in a row ("What you bring", "What we offer" whose headings
    the site shares) were written "- a\\n\\n- c", which CommonMark reads as
    one list; the second now takes the other marker. A definition list's
    terms and a disclosure's question are bold, set apart from their
    values and answers, which a parser read as paragraphs alike."""
    page = ("<div><ul><li>Python</li><li>SQL</li></ul><ul><li>Pension</li></ul><ul><li>Bike</li></ul>"
            "<ol><li>Apply</li></ol><ol start='2'><li>Talk</li></ol>"
            "<ul><li>Outer<ul><li>n1</li></ul><ul><li>n2</li></ul></li></ul>"
            "<dl><dt>Start <b>date</b></dt><dd>1 May</dd></dl>"
            "<details><summary>Is it remote?</summary><p>Three days a week.</p></details></div>")
    md = tree_markdown(lxml_html.fromstring(page))
    root = back(md)
    top = root.xpath("/html/body/*")
    assert [e.tag for e in top] == ["ul", "ul", "ul", "ol", "ol", "ul", "p", "p", "p", "p"], md
    assert [texts(e, ".//li") for e in top[:3]] == [["Python", "SQL"], ["Pension"], ["Bike"]]
    assert top[4].get("start") == "2" and texts(top[4], "li") == ["Talk"]
    assert [texts(u, "li") for u in top[5].xpath("li/ul")] == [["n1"], ["n2"]]
    assert texts(root, "//p/strong") == ["Start date", "Is it remote?"]


def test_an_empty_cell_keeps_the_columns_after_it_in_place():
    """A row's empty cell stays a cell in content mode's Markdown: the
    price stays under "Price", not under "Note" (a new user's cart page)."""
    rows = "".join(f"<tr><td>Item {i}</td><td></td><td>€{i}9.99</td></tr>" for i in range(1, 4))
    html = ("<html><head><title>Order</title></head><body><main><h1>Your order summary</h1>"
            "<p>Please review the items in your order before paying, then press continue.</p>"
            "<table><thead><tr><th>Product</th><th>Note</th><th>Price</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></main></body></html>")
    for mode in ("content", "boilerplate"):
        result = clean_page(Page(html, "http://shop.example/order"), None, mode=mode, markdown=True)
        got = back(result.markdown)
        header = texts(got, "//th")
        assert header == ["Product", "Note", "Price"], (mode, result.markdown)
        for i, tr in enumerate(got.xpath("//tbody/tr"), 1):
            cells = ["".join(td.itertext()).strip() for td in tr.iter("td")]
            assert cells == [f"Item {i}", "", f"€{i}9.99"], (mode, result.markdown)


def test_cells_spanning_rows_and_columns_keep_every_value_in_its_column():
    """A schedule's day spans two rows and a note two columns: the Markdown
    table writes the day again in the second row and an empty cell after
    the note, as pandas reads such tables (a new user's course page had its
    times under "Day"); a cell spanning more columns than the table has
    fills the row."""
    html = ("<html><body><main><h1>Course</h1><p>What the course covers, week by week, for its students.</p>"
            "<h2>Schedule</h2><table><thead><tr><th>Day</th><th>Time</th><th>Type</th><th>Room</th></tr></thead>"
            "<tbody><tr><td rowspan='2'>Monday</td><td>09:00</td><td>Lecture</td><td>A-101</td></tr>"
            "<tr><td>10:45</td><td>Seminar</td><td></td></tr><tr><td>Friday</td><td colspan='2'>By appointment"
            "</td><td>B-2</td></tr><tr><td colspan='1000000'>Holidays</td></tr></tbody></table></main></body></html>")
    for mode in ("content", "boilerplate"):
        got = back(clean_page(Page(html, "http://uni.example/c"), None, mode=mode, markdown=True).markdown)
        rows = [["".join(td.itertext()).strip() for td in tr.iter("td")] for tr in got.xpath("//tbody/tr")]
        assert rows[:3] == [["Monday", "09:00", "Lecture", "A-101"], ["Monday", "10:45", "Seminar", ""],
                            ["Friday", "By appointment", "", "B-2"]], (mode, rows)
        assert rows[3][0] == "Holidays" and texts(got, "//th")[:4] == ["Day", "Time", "Type", "Room"], mode
        assert len(texts(got, "//th")) == 4 and rows[3] == ["Holidays", "", "", ""], mode


def test_fields_side_by_side_are_two_words_and_a_word_s_markup_is_not():
    """"<span>Jorge Ruiz</span><time>2024-03-22</time>": two fields, two
    words in the Markdown as in content mode's text (a new user's reviews
    read "Jorge Ruiz2024-03-22"); "<b>H</b>ello" stays one word."""
    html = ("<html><body><main><h1>Hose review</h1><p>What the hose does in the garden, every day, for us "
            "and for the neighbours too.</p><div class='review'><div class='head'><span>Jorge Ruiz</span>"
            "<time datetime='2024-03-22'>2024-03-22</time><span>★★★★☆</span></div><p>Bought a second one as a "
            "gift for my sister; it works as described and folds small.</p></div><p>We <b>H</b>ello and "
            "<i>in</i>side words.</p></main></body></html>")
    for mode in ("content", "boilerplate"):
        md = clean_page(Page(html, "http://shop.example/r"), None, mode=mode, markdown=True).markdown
        assert "Jorge Ruiz 2024-03-22 ★★★★☆" in md and "We **H**ello and *in*side words." in md, (mode, md)


def test_a_link_around_a_card_s_blocks_goes_on_its_heading_or_first_text():
    """<a href><img><h3>Name</h3><p>...</p></a>: Markdown's link text holds
    no block, so the card's link goes on its heading (a new user's 30
    integration cards had lost every destination), or on the first text of
    a card without one; text before the card is not made part of it."""
    cards = "".join(f"<li><a href='/apps/{n.lower()}'><img src='/l/{n}.svg' alt='{n} logo'><h3>{n}</h3>"
                    f"<p>Syncs {n} ledgers every hour.</p></a></li>" for n in ("NetSuite", "Xero", "Sage"))
    html = (f"<html><body><main><h1>Integrations</h1><ul>{cards}</ul><p>See <a href='/all'><div>every app"
            f"</div><div>and more</div></a> here, and <a href='/x'>an <b>inline</b> one</a>.</p></main></body></html>")
    md = tree_markdown(lxml_html.fromstring(html), lambda href: "https://ex.example" + href)
    root = back(md)
    links = {" ".join(tree_text(a).split()): a.get("href") for a in root.iter("a")}
    for n in ("NetSuite", "Xero", "Sage"):
        assert links[n] == f"https://ex.example/apps/{n.lower()}", md
        assert root.xpath(f"//h3/a[text()='{n}']"), md
        assert f"Syncs {n} ledgers every hour." in texts(root, "//li/p"), md
    assert links["every app"] == "https://ex.example/all" and links["an inline one"] == "https://ex.example/x", md
    assert "See" not in links and "and more" not in links, md
