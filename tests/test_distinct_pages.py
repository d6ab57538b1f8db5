"""The site model never eats a page's own content (issue 30): copies of a
page count once when fitting, a structure-only match never takes a whole
page, and a page the model would empty keeps its text."""

import gzip
import json
import logging
import random
import sys
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.web.server import Site

from crawling import Pages, crawl, stat
from sitegen import WORDS, article_page, calendar_page, sentence, site_pages, syndicated_page, with_session_line
from scrapy_deboiler import Page, SiteModel, clean_page, fit_and_clean
from scrapy_deboiler._cli import main as cli_main
from test_pipeline import close

MODES = ("boilerplate", "content")


def session_site(copies: int = 5, others: int = 15) -> list[tuple[str, str, str]]:
    """One article under ``copies`` session-id URLs (its id printed on the
    page), and ``others`` articles with a session line of their own."""
    url, html, text = article_page("sid.example", 7)
    pages = [(f"{url}?sid={k:06d}", with_session_line(html, f"{k:06d}"), text) for k in range(copies)]
    for i, (u, h, t) in enumerate(site_pages("sid.example", others + 8)[8:]):
        pages.append((u, with_session_line(h, f"{900 + i:06d}"), t))
    return pages


def body_kept(text: str, body: str) -> bool:
    return all(line in text for line in body.splitlines()[2:])  # the paragraphs


@pytest.mark.parametrize("mode", MODES)
def test_one_article_under_five_session_urls_keeps_its_body_in_every_copy(mode):
    pages = session_site()
    model, results = fit_and_clean([(u, h) for u, h, _ in pages], mode=mode)
    for (url, _, body), r in zip(pages, results):
        assert body_kept(r.text, body), (url, r.text[:200])
    assert model.copies == 4 and model.pages == 20
    if mode == "boilerplate":
        assert all("Privacy policy" not in r.text for r in results)


@pytest.mark.parametrize("mode", MODES)
def test_articles_also_under_a_second_url_keep_every_body(mode):
    pages = [(u, with_session_line(h, "000001"), t) for u, h, t in site_pages("dup.example", 20)]
    for u, h, t in pages[3:19:4]:  # four of them again, printed for another request
        pages.append((u.replace("/articles/", "/print/articles/"), h.replace("000001", "777777"), t))
    model, results = fit_and_clean([(u, h) for u, h, _ in pages], mode=mode)
    for (url, _, body), r in zip(pages, results):
        assert body_kept(r.text, body), (url, r.text[:200])
    # The copies gave no evidence: 20 different pages, 19 pairs, and no
    # paragraph of a copied article counted as shared.
    assert model.pairs == 19
    page = Page(pages[3][1], pages[3][0])
    own = {s for i, s in enumerate(page.signed.signatures) if page.signed.element(i).tag == "p"}
    assert not own & model.support.keys() - {s for p in (Page(pages[4][1]),) for s in p.signatures}
    assert model.copies == 4


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("footer_links", [1, 2])
def test_calendar_pages_of_one_layout_keep_their_heading(mode, footer_links):
    pages = [calendar_page("cal.example", d, footer_links) for d in range(1, 21)]
    model, results = fit_and_clean([(u, h) for u, h, _ in pages], mode=mode)
    for (_, _, heading), r in zip(pages, results):
        assert heading in r.text
        assert "Calendar" not in r.text and "Privacy" not in r.text, r.text
        assert r.fallback == "shared_parts" and r.removed > 0
    assert model.copies == 0  # one layout, different pages


def test_a_whole_page_matched_on_structure_alone_falls_back_to_no_model():
    pages = [calendar_page("cal.example", d) for d in range(1, 21)]
    parsed = [Page(h, u) for u, h, _ in pages]
    model = SiteModel.fit(parsed)
    # Only the page's shape is known as shared: nothing else to remove.
    signed = parsed[0].signed
    whole = {signed.signatures[i] for i in signed.shapes if signed.element(i).tag in ("html", "body")}
    assert whole and whole <= model.boilerplate
    only_shape = model.with_params()
    only_shape.support = {s: n for s, n in model.support.items() if s in whole}
    r = clean_page(Page(pages[0][1], pages[0][0]), only_shape, mode="boilerplate")
    assert r.fallback == "no_model" and r.removed == 0 and "Events on 2026-03-01" in r.text


def write_jsonl(path, records):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


@pytest.mark.parametrize("mode", MODES)
def test_the_cli_keeps_the_text_of_pages_the_model_would_empty(tmp_path, mode):
    """A site that is five copies of one article: nothing tells the article
    from a template, so the model would remove all but the session line;
    the pages say ``emptied`` and keep their text."""
    pages = session_site(5, 0)
    write_jsonl(tmp_path / "in.jsonl.gz", [{"url": u, "html": h} for u, h, _ in pages])
    assert cli_main(["clean", str(tmp_path / "in.jsonl.gz"), str(tmp_path / "out.jsonl"), "--mode", mode,
                     "--no-progress"]) == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(out) == 5
    for rec, (_, _, body) in zip(out, pages):
        assert rec["deboiler"]["status"] == "emptied", rec["deboiler"]
        assert "would remove" in rec["deboiler"]["reason"]
        assert body_kept(rec["clean_text"], body)


class SessionPages(Pages):
    """Serves each page with a per-request session line: the sid of the
    URL's query."""

    def render_GET(self, request):
        html = self.pages.get(request.path.decode())
        if html is not None and b"sid" in request.args:
            sid = request.args[b"sid"][0].decode()
            self.pages, saved = dict(self.pages), self.pages
            self.pages[request.path.decode()] = html.replace("Session ID: 000000", f"Session ID: {sid}")
            try:
                return super().render_GET(request)
            finally:
                self.pages = saved
        return super().render_GET(request)


@pytest.mark.parametrize("mode", MODES)
@pytest_twisted.ensureDeferred
async def test_a_crawl_of_session_id_copies_keeps_every_body(tmp_path, mode):
    pages = {}
    links = []
    bodies = {}
    for u, h, t in site_pages("sidcrawl", 16):
        path = u.split("sidcrawl", 1)[1]
        pages[path] = with_session_line(h, "000000")
        bodies[path] = t
        links.append(path)
    copy = links[7]
    links += [f"{copy}?sid={k:06d}" for k in range(1, 6)]
    pages["/"] = "<html><body><ul>" + "".join(f'<li><a href="{p}">x</a></li>' for p in links) + "</ul></body></html>"
    port = reactor.listenTCP(0, Site(SessionPages(pages)), interface="127.0.0.1")
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"],
                                     DEBOILER_MIN_PAGES=21, DEBOILER_MODE=mode)
    finally:
        close(port)
    assert len(items) == 21
    for item in items:
        path = "/" + item["url"].split("/", 3)[3].split("?")[0]
        assert item["deboiler"]["status"] == "cleaned", item["deboiler"]
        assert body_kept(item["clean_text"], bodies[path]), (item["url"], item["clean_text"][:200])
    copies = [i for i in items if "sid=" in i["url"]]
    assert len(copies) == 5 and all(i["deboiler"]["fit_pages"] == 21 for i in items)
    assert stat(crawler, "deboiler/items_cleaned") == 21


def layouts_site(n: int = 16) -> tuple[dict[str, str], dict[str, str]]:
    """Articles each also under an AMP and a print URL, neighbours in URL
    order ("0007.amp.html", "0007.html", "0007.print.html"), each layout
    with its own header and footer; paths to pages and to article texts."""
    pages, bodies = {}, {}
    for url, html, text in site_pages("layouts", n):
        path = url.split("layouts", 1)[1]
        title, _, *paras = text.splitlines()
        own = "".join(f"<p>{p}</p>" for p in paras)
        pages[path] = html
        pages[path.replace(".html", ".amp.html")] = (
            f"<html amp><head><title>{title}</title></head><body><header class='amp-header'><a href='/'>Layouts"
            f" Daily</a> <button>Menu</button></header><article class='amp-article'><h1>{title}</h1>{own}</article>"
            "<footer class='amp-footer'><p>Registered in England No. 04815162.</p><a href='/'>View the full site"
            "</a></footer></body></html>")
        pages[path.replace(".html", ".print.html")] = (
            f"<html><head><title>{title}</title></head><body><div class='print-head'>Printed from Layouts Daily"
            f"</div><h1>{title}</h1>{own}<p class='print-foot'>Article address: {url}</p></body></html>")
        for variant in ("", ".amp", ".print"):
            bodies[path.replace(".html", variant + ".html")] = text
    pages["/"] = "<html><body><ul>" + "".join(f'<li><a href="{p}">x</a></li>' for p in pages) + "</ul></body></html>"
    return pages, bodies


@pytest.mark.parametrize("mode", MODES)
@pytest_twisted.ensureDeferred
async def test_articles_under_amp_and_print_urls_keep_every_body(tmp_path, mode):
    """An article's AMP and print copies sit beside it in URL order under
    other layouts: each pair of them shares the article, and counted as
    evidence every paragraph was template (a new user's 50 articles kept
    0 of 383 phrases, in both modes). The copies are one document; each
    page is compared with the next page of another document, and a page
    that shares nothing with its neighbour (a print page beside the next
    article's AMP page) with its layout's page a little further."""
    pages, bodies = layouts_site()
    port = reactor.listenTCP(0, Site(Pages(pages)), interface="127.0.0.1")
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"],
                                     DEBOILER_MIN_PAGES=len(bodies), DEBOILER_MODE=mode)
    finally:
        close(port)
    assert len(items) == len(bodies) == 48
    for item in items:
        path = "/" + item["url"].split("/", 3)[3]
        assert item["deboiler"]["status"] == "cleaned" and item["deboiler"]["fit_pages"] == 48, item["deboiler"]
        assert body_kept(item["clean_text"], bodies[path]), (item["url"], item["clean_text"][:300])
        if path.endswith(".amp.html"):
            assert "View the full site" not in item["clean_text"], item["clean_text"]
        elif path.endswith(".print.html"):  # its neighbours are the next article's pages
            assert "Printed from Layouts Daily" not in item["clean_text"], item["clean_text"]
        elif mode == "boilerplate":
            assert "Privacy policy" not in item["clean_text"], item["clean_text"]
    assert stat(crawler, "deboiler/items_cleaned") == 48


def syndicated_site(n: int = 6) -> dict[str, str]:
    """Paths to pages: one article on ``n`` pages, each with its own tags
    (``sitegen.syndicated_page``), and an index linking them."""
    pages = {}
    for k in range(n):
        url, html, _ = syndicated_page("wire", k)
        pages["/" + url.split("/", 3)[3]] = html
    pages["/"] = "<html><body><ul>" + "".join(f'<li><a href="{p}">x</a></li>' for p in pages) + "</ul></body></html>"
    return pages


def test_a_model_that_empties_its_fit_pages_empties_them_all():
    """The premise of the tests below: without the copy test catching it,
    the fit takes the shared article for template."""
    pages = [syndicated_page("wire", k)[:2] for k in range(6)]
    for mode in MODES:
        model, results = fit_and_clean(pages, mode=mode)
        assert model.boilerplate and [r.fallback for r in results] == ["emptied"] * 6


@pytest.mark.parametrize("processes", (0, 1))
@pytest.mark.parametrize("mode", MODES)
@pytest_twisted.ensureDeferred
async def test_a_model_that_empties_its_fit_pages_is_not_saved(tmp_path, mode, processes, caplog):
    """Its pages keep their text (``emptied``), and no file hands the model
    to the next crawl; the warning and the closing summary say so. With a
    worker process the pages are signed there and cleaned after the fit."""
    port = reactor.listenTCP(0, Site(Pages(syndicated_site())), interface="127.0.0.1")
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_deboiler"):
            crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"],
                                         DEBOILER_MIN_PAGES=6, DEBOILER_MODE=mode, DEBOILER_PROCESSES=processes,
                                         DEBOILER_INLINE_MAX_BYTES=0 if processes else 10**6)
    finally:
        close(port)
    _, _, body = syndicated_page("wire", 0)
    assert len(items) == 6
    for item in items:
        assert item["deboiler"]["status"] == "emptied", item["deboiler"]
        assert body_kept(item["clean_text"], body)
    assert stat(crawler, "deboiler/saves_refused_emptied") == 1
    assert stat(crawler, "deboiler/items_emptied") == 6
    assert not list((tmp_path / "signatures").glob("*.json*"))
    assert "is not saved: it emptied 6 of its 6 fit pages" in caplog.text
    assert "6 emptied" in caplog.text and "1 models not saved" in caplog.text


@pytest.mark.parametrize("jobs", ("1", "2"))
def test_the_cli_does_not_save_a_model_that_empties_its_pages(tmp_path, jobs):
    """``clean --signatures``: the syndicated site's model is not saved, an
    ordinary site's beside it is."""
    pages = [syndicated_page("wire.example", k)[:2] for k in range(6)]
    pages += [(u, h) for u, h, _ in site_pages("plain.example", 6)]
    write_jsonl(tmp_path / "in.jsonl.gz", [{"url": u, "html": h} for u, h in pages])
    folder = tmp_path / "sigs"
    assert cli_main(["clean", str(tmp_path / "in.jsonl.gz"), str(tmp_path / "out.jsonl"), "--signatures",
                     str(folder), "--jobs", jobs, "--no-progress"]) == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["deboiler"]["status"] for r in out] == ["emptied"] * 6 + ["cleaned"] * 6
    assert [p.name.split("--")[0] for p in folder.iterdir()] == ["plain.example"]


def docs_site() -> list[tuple[str, str]]:
    """The demo's documentation site: a top bar, a long table of contents
    and a footer on every page, a chapter each; its start page, last here,
    is the template and one line."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "example_project"))
    from website import DemoSite

    site = DemoSite("docs", n_articles=20)
    paths = sorted(p for p in site.pages if p != "/" and not p.endswith(".png"))
    start = site.pages["/"].replace("<h1>Lantern documentation</h1><p>Start with the guide.</p>", "<p>Start here.</p>")
    assert start != site.pages["/"]
    return [(f"http://docs.example{p}", site.pages[p]) for p in paths] + [("http://docs.example/", start)]


def test_a_page_of_template_and_one_line_is_cleaned_in_content_mode():
    """The model takes nearly all the start page's text, rightly: extracted
    alone, the page gives the same line, so content mode says ``cleaned``;
    boilerplate mode, which has no such extraction, keeps its text."""
    for mode, status in (("content", ""), ("boilerplate", "emptied")):
        model, results = fit_and_clean(docs_site(), mode=mode)
        start = results[-1]
        assert start.fallback == status and start.model_share > 0.95
        assert "Start here." in start.text
        assert ("Table of contents" not in start.text) == (mode == "content")


def shop_page(k: int) -> tuple[str, str, str]:
    """(url, html, description) of product ``k`` of a shop whose every page
    carries its refund and privacy policies (some 1,800 words, in dialogs)
    beside a product of about 40: the policies are the site's template,
    and nearly all of every page's text."""
    rng = random.Random("shop.example/policies")
    policies = "".join(f"<div class='dialog' id='policy-{i}'><h2>Policy {i}</h2>"
                       + "".join(f"<p>{sentence(rng, 20)}</p>" for _ in range(15)) + "</div>" for i in range(6))
    own = random.Random(f"shop.example/{k}")
    description = f"{sentence(own, 14)} {sentence(own, 14)} {sentence(own, 10)}"
    html = f"""<html><head><title>Product {k} | Shop</title></head><body>
<header><a href="/">Shop</a> <a href="/cart">Cart</a></header>
<main><h1>Wool runner number {k} {own.choice(WORDS)}</h1><p class="price">${100 + k}</p>
<p>{description}</p></main>{policies}
<footer><a href="/privacy">Privacy</a></footer></body></html>"""
    return f"http://shop.example/products/{k}", html, description


def test_a_page_that_keeps_its_own_headline_is_not_taken_for_emptied():
    """Every page of a shop carries its long policies: the model rightly
    takes them, some 98 % of each page's text. The page was taken for one
    the model had eaten and cleaned as without a model: the policies came
    back as the product's text. The product's own ``<h1>`` is outside the
    template, so the model did not take the page: its clean text is the
    product, the policies stay out."""
    pages = [shop_page(k) for k in range(4)]
    model, results = fit_and_clean([(u, h) for u, h, _ in pages], mode="content")
    for (url, _, description), r in zip(pages, results):
        assert r.model_share > 0.95 and r.fallback == ""
        assert description in r.text and "Policy 3" not in r.text, (url, r.text[:300])


def reference_distinct_pages(seq):
    """``distinct_pages`` as first written (a Counter update a pair of
    pages a rare signature): the definition its faster form must match."""
    from collections import Counter

    from scrapy_deboiler._model import _MAX_COPY_GROUP, NEAR_COPY_DIFFER, NEAR_COPY_RARE

    n = len(seq)
    if n < 2:
        return seq, 0
    first, parent = {}, list(range(n))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, fs in enumerate(seq):
        j = first.setdefault(fs, i)
        if j != i:
            parent[i] = j
    if n >= 3:
        df = Counter(s for fs in first for s in fs)
        limit = min(len(first) // 2, _MAX_COPY_GROUP)
        rare_pages = {}
        for i, fs in enumerate(seq):
            if parent[i] == i:
                for s in fs:
                    if 2 <= df[s] <= limit:
                        rare_pages.setdefault(s, []).append(i)
        shared = Counter()
        for holders in rare_pages.values():
            for a in range(len(holders)):
                for b in holders[a + 1:]:
                    shared[holders[a], b] += 1
        if shared:
            rare = [sum(1 for s in fs if df[s] <= limit) if parent[i] == i else 0 for i, fs in enumerate(seq)]
            for (a, b), k in sorted(shared.items()):
                small = min(len(seq[a]), len(seq[b]))
                if k < NEAR_COPY_RARE * min(rare[a], rare[b]):
                    continue
                x, y = seq[a], seq[b]
                if max(len(x - y), len(y - x)) > NEAR_COPY_DIFFER * small:
                    continue
                ra, rb = root(a), root(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    kept = [fs for i, fs in enumerate(seq) if root(i) == i]
    return kept, n - len(kept)


@pytest.mark.parametrize("pairwise", [0, 64], ids=["indexed", "pairwise"])
def test_distinct_pages_leaves_out_what_its_definition_leaves_out(monkeypatch, pairwise):
    """Random sites of near copies, exact copies and pages sharing some
    rare parts, through both ways of finding the pairs."""
    import random

    from scrapy_deboiler import _model

    monkeypatch.setattr(_model, "_PAIRWISE", pairwise)
    rng = random.Random(30)
    for _ in range(3000):
        pool = [f"{rng.randrange(60):016x}" for _ in range(rng.randint(1, 50))]
        bases = [frozenset(rng.sample(pool, rng.randint(0, len(pool)))) for _ in range(rng.randint(1, 8))]
        seq = [rng.choice(bases) if rng.random() < 0.4
               else frozenset(s for s in rng.choice(bases) if rng.random() < 0.93) for _ in range(rng.randint(0, 16))]
        assert _model.distinct_pages(seq) == reference_distinct_pages(seq)
    pages = [Page(h, u) for u, h, _ in session_site()]
    seq = [p.signatures for p in pages]
    assert _model.distinct_pages(seq) == reference_distinct_pages(seq)
    assert _model.distinct_pages(seq)[1] >= 4  # the session copies
