"""clean_title: the page's headline, in the library, the crawl and the CLI;
and DEBOILER_BODY_ONLY / --body-only reaching select_content."""

import json
import logging
import random

import pytest
import pytest_twisted
import scrapy

import scrapy_deboiler._clean as clean_module
from scrapy_deboiler import Page, clean_page, fit_and_clean
from scrapy_deboiler._cli import main
from scrapy_deboiler._executor import ProcessCleaner
from scrapy_deboiler._settings import DeboilerSettingsError, read_settings
from scrapy_deboiler._title import page_title
from scrapy_deboiler._wire import (CleanOptions, CleanTask, Cleaned, FitTask, Fitted, decode_frame, read_answer,
                                   task_frame)
from scrapy_deboiler._worker import _WorkerState

from crawling import crawl, serve_site, stat
from sitegen import sentence, site_pages
from test_cli import read, records, write
from test_pipeline_items import DeclaredItem
from test_pipeline import check_all_items_reached_the_feed, close


def page(head: str = "", body: str = "", url: str = "https://www.example-news.com/story/1") -> str:
    """A page's headline, as clean_page gives it."""
    html = f"<html><head>{head}</head><body>{body}<p>{'Words of the story. ' * 30}</p></body></html>"
    return clean_page(Page(html, url), None, mode="content").title


def headlines(html_by_path: dict[str, str]) -> dict[str, str]:
    """The <h1> of each generated page (the article's title), by path."""
    out = {}
    for path, html in html_by_path.items():
        out[path] = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    return out


# -- the rule, on pages written here ------------------------------------------

def test_the_h1_that_the_title_vouches_for_wins_over_a_logo_h1():
    head = "<title>Rivers rise in spring | Example News</title>"
    body = "<header><h1>Example News</h1></header><article><h1>Rivers rise in spring</h1></article>"
    assert page(head, body) == "Rivers rise in spring"


@pytest.mark.parametrize("title, h1, want", [
    ("Startseite | Keramikwerk Hansen", "Handgemachte Keramik von der Nordsee", "Handgemachte Keramik von der Nordsee"),
    ("Home – Keramikwerk Hansen", "Rivers, towns and the people who live there",
     "Rivers, towns and the people who live there"),
    ("Blog | Keramikwerk Hansen", "Aus der Werkstatt – Blog", "Aus der Werkstatt – Blog"),
    # The <h1>'s initials (a new user's FAQ page).
    ("FAQ | Keramikwerk Hansen", "Frequently asked questions", "Frequently asked questions"),
    ("IT | Keramikwerk Hansen", "Information technology", "IT"),
    # A title of two words or more is the page's, whatever the <h1> says.
    ("Klatch Coffee | Shopify", "Get that tech stack: Klatch Coffee", "Klatch Coffee"),
])
def test_a_title_that_names_the_home_page_or_a_section_gives_way_to_the_h1(title, h1, want):
    assert page(f"<title>{title}</title>", f"<h1>{h1}</h1>", "https://www.keramikwerk-hansen.de/") == want


def test_an_h1_mostly_of_the_titles_words_is_the_headline_as_the_reader_sees_it():
    head = "<title>Rivers rise: what the spring floods mean | Example News</title>"
    assert page(head, "<h1>What the spring floods mean for rivers</h1>") == "What the spring floods mean for rivers"


def test_an_h1_unlike_the_title_loses_to_the_title_without_the_site_name():
    head = ('<title>Rivers rise in spring - Example News</title>'
            '<meta property="og:site_name" content="Example News">')
    assert page(head, "<h1>Subscribe today</h1>") == "Rivers rise in spring"


def test_og_title_when_the_page_has_no_h1():
    head = ('<title>Example News :: Rivers rise in spring</title>'
            '<meta property="og:title" content="Rivers rise in spring">')
    assert page(head) == "Rivers rise in spring"


@pytest.mark.parametrize("title, url", [
    ("Rivers rise in spring | Example News", "https://www.example-news.com/a"),  # the host
    ("Rivers rise in spring – examplenews.com", "https://examplenews.com/a"),
    ("Rivers rise in spring [ExampleNews]", "https://examplenews.com/a"),
    ("ExampleNews · Rivers rise in spring", "https://examplenews.com/a"),
    ("Example News » Blog » Rivers rise in spring", "https://examplenews.com/a"),  # the headline last
    ("Rivers rise in spring | Floods | Example News", "https://examplenews.com/a"),  # the headline first
])
def test_the_site_name_is_cut_from_the_title(title, url):
    assert page(f"<title>{title}</title>", url=url) == "Rivers rise in spring"


def test_an_h1_copying_the_whole_title_loses_the_site_name():
    head = "<title>Rivers rise in spring | Example News</title>"
    assert page(head, "<h1>Rivers rise in spring | Example News</h1>") == "Rivers rise in spring"


def test_a_title_with_separators_of_its_own_keeps_its_hyphens():
    assert page("<title>Instant Pot - Pressure Cookers</title>") == "Instant Pot - Pressure Cookers"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/thread/101.html", "https://forum.pottingshed.example/t/101"])
def test_without_an_h1_an_h2_that_is_the_title_up_to_a_separator_is_the_headline(url):
    """A phpBB board's topic is an <h2>, and its <title> adds the board's
    name, which its host does not spell (a new user's 53 pages all kept
    " - The Potting Shed Forum"). An <h2> that is no part of the title
    is not the headline."""
    head = "<title>Advice needed: clay soil drainage (101) - The Potting Shed Forum</title>"
    body = ("<div class='headerbar'><a href='/'>The Potting Shed</a></div><h2 class='topic-title'><a href='/t/101'>"
            "Advice needed: clay soil drainage (101)</a></h2><div class='post'><h3>Re: Advice needed: clay soil "
            "drainage (101)</h3></div>")
    assert page(head, body, url=url) == "Advice needed: clay soil drainage (101)"
    assert page("<title>Board index - The Potting Shed Forum</title>", "<h2>Latest topics</h2>", url=url) \
        .startswith("Board index")
    # The site's name in an <h2>, its host its initials: no headline
    osha = "<title>Electrical - Overview | Occupational Safety and Health Administration</title>"
    assert page(osha, "<h2>Occupational Safety and Health Administration</h2>",
                url="https://www.osha.gov/electrical") == "Electrical - Overview"


def test_a_page_without_any_title_has_an_empty_one():
    assert page() == ""
    assert page("<title> </title>", "<h1> </h1>") == ""


def test_hidden_h1s_scripts_and_line_breaks():
    head = "<title>Data Analytics Agency | Example</title>"
    body = ('<h1 style="display:none">Old headline</h1>'
            '<h1>Data Analytics<br>Agency<script>var x = 1;</script><a class="anchor">¶</a></h1>')
    assert page(head, body) == "Data Analytics Agency"


def test_an_svg_title_is_not_the_pages():
    body = '<svg><title>Close icon</title></svg><h1>Rivers rise in spring</h1>'
    assert page("", body) == "Rivers rise in spring"


def book_site(n: int = 6) -> list[tuple[str, str]]:
    """A documentation site whose only <h1> is its name, in the template,
    and whose <title> repeats that name after each chapter's."""
    rng = random.Random(3)
    out = []
    for i in range(n):
        chapter = sentence(rng, 4)[:-1]
        paras = "".join(f"<p>{sentence(rng, 25)}</p>" for _ in range(4))
        out.append((f"https://docs.example.org/book/ch{i:02d}.html",
                    f"<html><head><title>{chapter} - The Guide To Rivers</title></head><body>"
                    f"<div class='menu'><h1 class='menu-title'>The Guide To Rivers</h1>"
                    f"<a href='/'>Home</a> <a href='/print'>Print</a></div>"
                    f"<main><h2>{chapter}</h2>{paras}</main></body></html>", chapter))
    return out


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
def test_a_sites_repeated_title_suffix_is_learnt_from_its_template(mode):
    site = book_site()
    # Alone, a page cannot tell the site's name from a headline ...
    assert clean_page(Page(site[0][1], site[0][0]), None, mode=mode).title == "The Guide To Rivers"
    # ... its site's model can: the <h1> every page shares is the site's name.
    model, results = fit_and_clean([(url, html) for url, html, _ in site], mode=mode)
    assert [r.title for r in results] == [chapter for _, _, chapter in site]


def test_both_modes_and_skipped_pages():
    url, html, _ = site_pages("alpha", 1)[0]
    want = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    for mode in ("content", "boilerplate"):
        assert clean_page(Page(html, url), None, mode=mode).title == want
    assert clean_page(Page(b"%PDF-1.4 binary", url), None).title == ""


def test_page_title_takes_any_lxml_tree():
    from lxml import html as lxml_html

    root = lxml_html.fromstring("<html><head><title>A | B</title></head><body><h1>A</h1></body></html>")
    assert page_title(root) == "A"


# -- settings -------------------------------------------------------------------

def test_title_and_body_only_settings_are_checked():
    from scrapy.settings import Settings

    cfg = read_settings(Settings(), check_paths=False)
    assert (cfg.title_field, cfg.body_only) == ("clean_title", False)
    cfg = read_settings(Settings({"DEBOILER_TITLE_FIELD": "headline", "DEBOILER_BODY_ONLY": "true"}),
                        check_paths=False)
    assert (cfg.title_field, cfg.body_only) == ("headline", True)
    with pytest.raises(DeboilerSettingsError, match="DEBOILER_TEXT_FIELD = 'clean_title': is also DEBOILER_TITLE"):
        read_settings(Settings({"DEBOILER_TEXT_FIELD": "clean_title"}), check_paths=False)
    with pytest.raises(DeboilerSettingsError, match="DEBOILER_TITLE_FIELD = ' x'"):
        read_settings(Settings({"DEBOILER_TITLE_FIELD": " x"}), check_paths=False)
    with pytest.raises(DeboilerSettingsError, match="DEBOILER_BODY_ONLY = 'maybe'"):
        read_settings(Settings({"DEBOILER_BODY_ONLY": "maybe"}), check_paths=False)


# -- the crawl ------------------------------------------------------------------

def served_headlines(n: int, name: str) -> dict[str, str]:
    return headlines({url.split(name, 1)[1]: html for url, html, _ in site_pages(name, n)})


def by_path(items: list[dict]) -> dict[str, dict]:
    return {"/" + i["url"].split("/", 3)[3]: i for i in items}


@pytest.mark.parametrize("processes", [0, 1])
@pytest_twisted.ensureDeferred
async def test_crawled_items_get_the_headline_from_threads_and_worker_processes(tmp_path, processes):
    # 7 pages with DEBOILER_MIN_PAGES 5: fitted pages and pages cleaned on arrival.
    a, pa = serve_site(7, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=processes)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert stat(crawler, "deboiler/items_cleaned") == 7
    want = served_headlines(7, "alpha")
    got = {path: item["clean_title"] for path, item in by_path(items).items()}
    assert got == want and all(want.values())


@pytest_twisted.ensureDeferred
async def test_a_spiders_own_title_stays_and_the_field_can_be_renamed(tmp_path):
    a, pa = serve_site(6, "alpha")
    try:
        # The spider's items carry "title" (the page's <title>, site name and all).
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"read_title": True},
                                     DEBOILER_TITLE_FIELD="title")
        kept = stat(crawler, "deboiler/items_title_kept")
        crawler2, items2 = await crawl(tmp_path / "2", [a], spider_kwargs={"read_title": True},
                                       DEBOILER_TITLE_FIELD="headline")
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    want = served_headlines(6, "alpha")
    assert kept == 6
    for path, item in by_path(items).items():
        assert item["title"] == f"{want[path]} | alpha" and "clean_title" not in item
    for path, item in by_path(items2).items():
        assert item["headline"] == want[path] and item["title"] == f"{want[path]} | alpha"
        assert "clean_title" not in item
    assert stat(crawler2, "deboiler/items_title_kept") == 0


class OldItem(DeclaredItem):
    """An item class written before clean_title (the fields the pipeline
    wrote then, and no more)."""


class TitledItem(OldItem):
    clean_title = scrapy.Field()


@pytest_twisted.ensureDeferred
async def test_item_classes_without_the_title_field_get_the_others_with_one_info_line(tmp_path, caplog):
    a, pa = serve_site(6, "alpha")
    caplog.set_level(logging.INFO)
    try:
        crawler, items = await crawl(tmp_path, [a], spider_kwargs={"item_type": OldItem})
        crawler2, items2 = await crawl(tmp_path / "2", [a], spider_kwargs={"item_type": TitledItem})
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert all(i["clean_text"] and i["deboiler"]["status"] == "cleaned" and "clean_title" not in i for i in items)
    assert stat(crawler, "deboiler/items_without_title") == 6 and stat(crawler, "deboiler/items_partly_written") == 0
    lines = [r for r in caplog.records if "cannot hold clean_title" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO and "OldItem" in lines[0].getMessage()
    assert not [r for r in caplog.records if "cannot add" in r.getMessage()]
    want = served_headlines(6, "alpha")
    assert {p: i["clean_title"] for p, i in by_path(items2).items()} == want


# -- body_only reaches select_content -------------------------------------------

@pytest.fixture
def spy(monkeypatch):
    """The body_only value of every select_content call in this process."""
    seen = []
    real = clean_module.select_content

    def select_content(*args, body_only=False, **kwargs):
        seen.append(body_only)
        return real(*args, **kwargs)

    monkeypatch.setattr(clean_module, "select_content", select_content)
    return seen


def test_clean_page_passes_body_only_on_in_content_mode_only(spy):
    url, html, _ = site_pages("alpha", 1)[0]
    clean_page(Page(html, url), None, mode="content", body_only=True)
    clean_page(Page(html, url), None, mode="content")
    assert spy == [True, False]
    clean_page(Page(html, url), None, mode="boilerplate", body_only=True)  # accepted, no effect
    assert spy == [True, False]


@pytest.mark.parametrize("body_only", [True, False])
@pytest_twisted.ensureDeferred
async def test_body_only_reaches_select_content_through_the_threads(tmp_path, spy, body_only):
    a, pa = serve_site(7, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=0, DEBOILER_BODY_ONLY=body_only)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert len(spy) == 7 and set(spy) == {body_only}


@pytest_twisted.ensureDeferred
async def test_body_only_goes_to_the_worker_processes(tmp_path, monkeypatch):
    sent = []
    real = ProcessCleaner._submit

    def submit(self, task):
        if task.kind in ("clean", "fit"):
            sent.append((task.kind, task.options.body_only))
        return real(self, task)

    monkeypatch.setattr(ProcessCleaner, "_submit", submit)
    a, pa = serve_site(7, "alpha")
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_PROCESSES=1, DEBOILER_BODY_ONLY=True)
    finally:
        close(pa)
    check_all_items_reached_the_feed(crawler, items)
    assert sent and all(body_only is True for _, body_only in sent)
    assert stat(crawler, "deboiler/items_cleaned") == 7


@pytest.mark.parametrize("kind", ["clean", "fit"])
def test_a_worker_passes_body_only_to_select_content(spy, kind):
    """The worker's side (``_worker``) of the header sent above."""
    from scrapy_deboiler._model import FitParams

    pages = [(url, html, None) for url, html, _ in site_pages("alpha", 3)]
    options = CleanOptions("content", body_only=True)
    params = FitParams().to_json()
    task = (CleanTask(1, params, options, learn=False, page=pages[0]) if kind == "clean"
            else FitTask(1, params, options, pages))
    head, blobs, _ = decode_frame(task_frame(task), 0)
    frame = _WorkerState().handle(head, blobs)
    answer = read_answer(*decode_frame(frame, 0)[:2])
    assert isinstance(answer, Cleaned if kind == "clean" else Fitted), answer
    assert spy == [True] * (1 if kind == "clean" else 3)
    result = answer.result if isinstance(answer, Cleaned) else answer.results[0]
    assert result.title == pages[0][1].split("<h1>", 1)[1].split("</h1>", 1)[0]


# -- the command line -------------------------------------------------------------

def test_cli_records_get_the_title_keep_their_own_and_rename_it(tmp_path):
    recs = records()
    recs[1]["clean_title"] = "the record's own"
    write(tmp_path / "in.jsonl", recs)
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    out = read(tmp_path / "out.jsonl")
    want = {r["id"]: r["html"].split("<h1>", 1)[1].split("</h1>", 1)[0] for r in recs}
    assert out[1]["clean_title"] == "the record's own"
    assert all(o["clean_title"] == want[o["id"]] for n, o in enumerate(out) if n != 1)
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "out2.jsonl"), "--no-progress",
                 "--title-field", "headline", "--mode", "boilerplate", "-j", "2"]) == 0
    out = read(tmp_path / "out2.jsonl")
    assert all(o["headline"] == want[o["id"]] for o in out)
    assert out[1]["clean_title"] == "the record's own"  # an input field, passed through


@pytest.mark.parametrize("args, message", [
    (["--title-field", "clean_text"], "--title-field 'clean_text' is a field the output already has"),
    (["--title-field", " t"], "--title-field ' t': expected a field name"),
    (["--comments-field", "c", "--title-field", "c"], "--comments-field 'c' is a field the output already has"),
])
def test_cli_title_field_must_not_overwrite_another(tmp_path, args, message, capsys):
    write(tmp_path / "in.jsonl", records()[:2])
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "o.jsonl"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_body_only_reaches_select_content(tmp_path, monkeypatch, jobs):
    # Worker processes (-j 2) are forked: the spy writes what it sees to a file.
    log = tmp_path / "seen.txt"
    real = clean_module.select_content

    def select_content(*args, body_only=False, **kwargs):
        with open(log, "a") as f:
            f.write(json.dumps(body_only) + "\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(clean_module, "select_content", select_content)
    write(tmp_path / "in.jsonl", records())
    argv = ["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "o.jsonl"), "--no-progress", "-j", jobs]
    assert main([*argv, "--body-only"]) == 0
    seen = [json.loads(x) for x in log.read_text().split()]
    assert len(seen) == len(records()) and set(seen) == {True}
    log.unlink()
    assert main(argv) == 0
    assert set(json.loads(x) for x in log.read_text().split()) == {False}
