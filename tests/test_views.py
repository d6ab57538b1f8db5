"""The HTML the project writes for people (``show`` views, the crawl
report), opened in headless Chromium and checked from the rendered DOM.
Screenshots go to ``artifacts/`` (or $DEBOILER_ARTIFACTS)."""

import os
import shutil
from pathlib import Path

import pytest
import pytest_twisted
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from crawling import crawl, serve_site, stat
from scrapy_deboiler import Page, SignatureStore, SiteModel
from scrapy_deboiler._cli import main
from sitegen import site_pages
from test_pipeline import check_all_items_reached_the_feed, close

ARTIFACTS = Path(os.environ.get("DEBOILER_ARTIFACTS", Path(__file__).parent.parent / "artifacts"))
RED, GREEN, BLUE = "rgb(208, 2, 27)", "rgb(46, 157, 58)", "rgb(31, 95, 209)"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium look for downloads
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1280,1600", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=options)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def marks(browser):
    """Every marked element of the rendered page: kind, outline colour, title, text."""
    return browser.execute_script("""
        return Array.from(document.querySelectorAll('[data-deboiler]')).map(e => ({
            kind: e.dataset.deboiler, colour: getComputedStyle(e).outlineColor,
            width: getComputedStyle(e).outlineWidth, title: e.title, text: e.innerText,
            tag: e.tagName.toLowerCase(), visible: e.getBoundingClientRect().height > 0}));""")


def legend_count(browser, kind):
    return int(browser.execute_script(
        f"return document.querySelector('#deboiler-legend .n-{kind}').textContent"))


def test_show_marks_the_page_in_a_browser(tmp_path, browser):
    pages = site_pages("shop.example", 8)
    store = SignatureStore(tmp_path / "sigs")
    store.save("shop.example", SiteModel.fit([Page(h, u) for u, h, _ in pages]))
    url, html, article = pages[3]
    # The page's own style must survive; its script and handler must not run.
    html = html.replace("</head>", "<style>h1 { color: rgb(0, 128, 0) }</style></head>").replace(
        "<body ", "<body onload=\"document.title='HACKED'\" ").replace(
        "</body>", "<script>document.body.innerHTML = 'HACKED';</script></body>").replace(
        "</article>", '</article><div class="comments"><h3>2 comments</h3><p class="comment">Great '
        "article, thanks for writing it up so clearly.</p><p class='comment'>I disagree with the "
        "second paragraph entirely.</p></div>")
    src = tmp_path / "page.html"
    src.write_text(html)
    out = tmp_path / "view.html"
    assert main(["show", str(src), "--url", url, "--signatures", str(tmp_path / "sigs"), "-o", str(out)]) == 0
    browser.get(out.as_uri())
    browser.save_screenshot(str(ARTIFACTS / "show.png"))
    found = marks(browser)
    by_kind = {k: [m for m in found if m["kind"] == k] for k in ("boilerplate", "kept", "main")}
    assert "HACKED" not in browser.page_source and browser.title != "HACKED"
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return getComputedStyle(document.querySelector('h1')).color") == "rgb(0, 128, 0)"
    # Boilerplate: the template's parts, outlined red, with their evidence on hover.
    assert all(m["colour"] == RED and m["width"] == "3px" for m in by_kind["boilerplate"])
    removed = " ".join(m["text"] for m in by_kind["boilerplate"])
    for template_text in ("We use cookies", "Privacy policy", "Sign up for our newsletter", "About us"):
        assert template_text in removed
    assert all("shared by" in m["title"] and "neighbour pairs" in m["title"] for m in by_kind["boilerplate"])
    # Main content: the article, outlined blue, none of it marked as boilerplate.
    assert all(m["colour"] == BLUE for m in by_kind["main"])
    main_text = " ".join(m["text"] for m in by_kind["main"])
    for paragraph in article.split("\n")[2:]:
        assert paragraph in main_text and paragraph not in removed
    assert all("content score" in m["title"] for m in by_kind["main"] + by_kind["kept"])
    # Kept by boilerplate removal (this page's own), left out of main content: the comments.
    assert all(m["colour"] == GREEN for m in by_kind["kept"])
    assert "Great article" in " ".join(m["text"] for m in by_kind["kept"])
    # The legend is visible and its counts are the marks on the page.
    assert browser.execute_script(
        "const r = document.getElementById('deboiler-legend').getBoundingClientRect(); return r.width > 100")
    for kind, ms in by_kind.items():
        assert legend_count(browser, kind) == len(ms)
    assert len(by_kind["boilerplate"]) >= 4 and len(by_kind["main"]) >= 5


@pytest.mark.parametrize("declared", ['<meta charset="iso-8859-1">',
                                      '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'])
def test_show_of_a_latin1_page_reads_as_the_page_does(tmp_path, browser, declared):
    # The view is written as UTF-8: the page's own charset must not survive.
    pages = site_pages("kiosk.example", 6)
    store = SignatureStore(tmp_path / "sigs")
    store.save("kiosk.example", SiteModel.fit([Page(h, u) for u, h, _ in pages]))
    url, html, _ = pages[2]
    said = "Crème brûlée à la carte costs £4.50 at the café near the Zürich fjord, señor."
    html = html.replace('<meta charset="utf-8">', declared).replace("</h1>", f"</h1><p>{said}</p>")
    src = tmp_path / "page.html"
    src.write_bytes(html.encode("iso-8859-1"))
    out = tmp_path / "view.html"
    assert main(["show", str(src), "--url", url, "--signatures", str(tmp_path / "sigs"), "-o", str(out)]) == 0
    browser.get(out.as_uri())
    browser.save_screenshot(str(ARTIFACTS / "show-latin1.png"))
    assert browser.execute_script("return document.characterSet") == "UTF-8"
    body = browser.find_element("tag name", "body").text
    assert said in body and "Ã" not in body and "Â" not in body
    legend = browser.execute_script("return document.getElementById('deboiler-legend').innerText")
    assert legend.startswith("scrapy-deboiler · kiosk.example · content mode")
    assert any(said in m["text"] for m in marks(browser) if m["kind"] == "main")


def test_show_reads_the_first_record_of_json_lines(tmp_path):
    import json

    pages = site_pages("shop.example", 5)
    SignatureStore(tmp_path / "sigs").save("shop.example", SiteModel.fit([Page(h, u) for u, h, _ in pages]))
    src = tmp_path / "pages.jsonl"
    src.write_text("".join(json.dumps({"url": u, "html": h}) + "\n" for u, h, _ in pages))
    out = tmp_path / "view.html"
    assert main(["show", str(src), "--signatures", str(tmp_path / "sigs"), "-o", str(out),
                 "--mode", "boilerplate"]) == 0
    text = out.read_text()
    assert 'data-deboiler="boilerplate"' in text and 'data-deboiler="main"' not in text
    assert "Content-Security-Policy" in text and "<script" not in text


def test_show_and_inspect_name_what_is_missing_or_wrong(tmp_path, capsys):
    import gzip

    pages = site_pages("shop.example", 5)
    store = SignatureStore(tmp_path / "sigs")
    store.save("shop.example", SiteModel.fit([Page(h, u) for u, h, _ in pages]))
    src = tmp_path / "page.html"
    src.write_text(pages[0][1])
    # An HTML file says nothing of its site: without --url or --domain no
    # signature file applies (this used to mark nothing, exit 0).
    assert main(["show", str(src), "--signatures", str(tmp_path / "sigs"), "-o", str(tmp_path / "v.html")]) == 2
    assert "give the page's --url (or --domain)" in capsys.readouterr().err
    assert not (tmp_path / "v.html").exists()
    # An archive is no page: said so, not "binary: gzip content".
    archive = tmp_path / "crawl.warc.gz"
    archive.write_bytes(gzip.compress(b"WARC/1.0\r\n"))
    assert main(["show", str(archive), "--url", "http://shop.example/", "--signatures", str(tmp_path / "sigs"),
                 "-o", str(tmp_path / "v.html")]) == 2
    assert "not a crawl archive" in capsys.readouterr().err
    packed = tmp_path / "sig.json.gz"
    packed.write_bytes(gzip.compress(store.path("shop.example").read_bytes()))
    assert main(["inspect", str(packed)]) == 2
    assert "gzip-compressed: signature files are plain JSON" in capsys.readouterr().err
    # Its reader gone (``inspect ... | head``): no "error: [Errno 32] Broken pipe".
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run([sys.executable, "-m", "scrapy_deboiler", "inspect", str(store.path("shop.example"))],
                          stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    os.close(write_end)
    assert proc.returncode == 1 and proc.stderr == ""


@pytest_twisted.ensureDeferred
async def test_crawl_report_in_a_browser(tmp_path, browser):
    a, pa = serve_site(9, "alpha")
    b, pb = serve_site(6, "beta")
    report, report2 = tmp_path / "report.html", tmp_path / "report2.html"
    try:
        crawler, items = await crawl(tmp_path, [a, b], DEBOILER_REPORT=str(report))
        check_all_items_reached_the_feed(crawler, items)
        (tmp_path / "items.jsonl").unlink()
        # The next crawl cleans every page with the saved models on arrival
        # (none is held): its report must have the same views (checked below).
        crawler2, items2 = await crawl(tmp_path, [a, b], DEBOILER_REPORT=str(report2))
    finally:
        close(pa)
        close(pb)
    browser.get(report.as_uri())
    browser.save_screenshot(str(ARTIFACTS / "report.png"))
    rows = browser.execute_script("""
        return Array.from(document.querySelectorAll('#sites tr.site-row')).map(r => ({
            site: r.cells[0].innerText, pages: +r.cells[1].innerText, share: r.cells[4].innerText,
            bar: +r.querySelector('svg.bar rect:nth-child(2)').getAttribute('width'),
            hist: r.querySelectorAll('svg.histogram rect.hbar').length}));""")
    sites = {r["site"]: r for r in rows}
    ports = {a.split(":")[2].strip("/"): 9, b.split(":")[2].strip("/"): 6}
    assert {s.split(":")[1]: r["pages"] for s, r in sites.items()} == ports
    for r in rows:
        share = int(r["share"].rstrip("%"))
        assert 30 <= share <= 95 and r["bar"] == pytest.approx(160 * share / 100, abs=1.6) and r["hist"] == 10
    body = browser.find_element("tag name", "body").text
    assert "2 sites, 15 pages" in body
    # The blocks removed most often: the template's, on every page of a site,
    # and no block from more pages than the site has.
    assert "Privacy policy" in body and "9 pages" in body
    counts = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.blocks td.num')).map(td => parseInt(td.innerText))")
    assert counts and max(counts) == 9
    assert str(stat(crawler, "deboiler/items_cleaned")) in body
    views = browser.execute_script("return Array.from(document.querySelectorAll('a.view')).map(a => a.href)")
    assert len(views) == 6  # three pages per site
    browser.get(views[0])
    browser.save_screenshot(str(ARTIFACTS / "report-view.png"))
    found = marks(browser)
    assert any(m["kind"] == "boilerplate" and m["colour"] == RED for m in found)
    assert any(m["kind"] == "main" and m["colour"] == BLUE for m in found)

    check_all_items_reached_the_feed(crawler2, items2)
    assert stat(crawler2, "deboiler/sites_reused") == 2 and stat(crawler2, "deboiler/items_held") == 0
    browser.get(report2.as_uri())
    views = browser.execute_script("return Array.from(document.querySelectorAll('a.view')).map(a => a.href)")
    assert len(views) == 6
    browser.get(views[0])
    assert any(m["kind"] == "boilerplate" and m["colour"] == RED for m in marks(browser))


def test_a_block_repeated_on_a_page_counts_once_for_it():
    from scrapy_deboiler._report import SiteReport, render_report

    rep = SiteReport("x.example")
    for _ in range(3):  # three pages, each with three "Reply" buttons and one nav
        rep.add_page("cleaned", 1000, 400, [("a" * 16, "Reply")] * 3 + [("b" * 16, "Home News")])
    assert rep.blocks == {"a" * 16: 3, "b" * 16: 3} and rep.pages == 3
    assert "3 pages" in render_report([rep]) and "9 pages" not in render_report([rep])


def test_the_report_says_which_models_are_provisional():
    from scrapy_deboiler._report import SiteReport, render_report

    done, young = SiteReport("a.example"), SiteReport("b.example")
    for rep, pages, provisional in ((done, 20, False), (young, 2, True)):
        rep.add_page("cleaned", 1000, 400, [])
        rep.model_source, rep.model_pages, rep.model_provisional = "fitted", pages, provisional
    html = render_report([done, young])
    assert "fitted, 20 pages<" in html and "fitted, 2 pages, provisional<" in html


def test_a_broad_crawls_report_stays_small(monkeypatch):
    """Thousands of sites: forgotten sites keep only the blocks the report
    lists, and only the largest sites are drawn and described in full."""
    from scrapy_deboiler import _report
    from scrapy_deboiler._report import SiteReport, render_report

    monkeypatch.setattr(_report, "DETAILED_SITES", 3)
    reps = []
    for k in range(10):
        rep = SiteReport(f"s{k}.example")
        for p in range(k + 1):  # site k has k + 1 pages, each with 30 distinct removed blocks
            rep.add_page("cleaned", 1000, 100 * (p % 10), [(f"{p:02d}{j:014d}", f"block {p}.{j}") for j in range(30)])
        rep.compact()
        assert len(rep.blocks) == min(10, 30 * (k + 1)) and set(rep.snippets) == set(rep.blocks)
        assert sum(rep.histogram) == k + 1
        reps.append(rep)
    html = render_report(reps)
    assert html.count("class='site-row'") == 10 and html.count("<div class='site'") == 3
    assert html.count("svg class=\"histogram\"") == 3 and "the other 7 have a row each" in html
    assert all(f"s{k}.example</h2>" in html for k in (9, 8, 7)) and "s6.example</h2>" not in html
