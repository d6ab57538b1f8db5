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
from sitegen import KINDS, _template, sentence, typed_page
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


@pytest_twisted.ensureDeferred
async def test_a_short_list_of_products_shaped_like_the_footer_s_list_stays(tmp_path):
    """A shop's index lists two products as ``<ul><li><a>``, the shape of the
    footer's list of two links on every page. Matched by shape alone, the
    shop's list was template on every page it was on (a new user's garden
    shop lost its products); matched by shape where it stands, it stays."""
    import random

    pages = {}
    for kind in KINDS:
        for i in range(PAGES_A_KIND):
            url, html = typed_page(kind, "shop.test", i)
            pages[url.split("shop.test", 1)[1]] = html
    products = ["Drip Irrigation Kit 500", "Irrigation Controller IC-4"]
    main = ("<h1>Shop</h1><p>Tools and kits we use in our own trial gardens.</p><ul>"
            + "".join(f'<li><a href="/product/{k}.html">{name}</a></li>' for k, name in enumerate(products))
            + "</ul>")
    pages["/listing/shop.html"] = _template("shop.test", "Shop", main, random.Random(1))
    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in sorted(pages))
    pages["/"] = f"<html><body><ul>{links}</ul></body></html>"
    port = reactor.listenTCP(0, Site(Pages(pages)), interface="127.0.0.1")
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"], DEBOILER_MIN_PAGES=5,
                                     DEBOILER_MODE="boilerplate",
                                     spider_kwargs={"follow": "/(" + "|".join(KINDS) + ")/"})
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == len(KINDS) * PAGES_A_KIND + 1
    (shop,) = [i for i in items if i["url"].endswith("/listing/shop.html")]
    assert shop["deboiler"]["status"] == "cleaned" and shop["deboiler"]["model"] == "fitted"
    assert all(name in shop["clean_text"] for name in products), shop["clean_text"]
    for item in items:
        assert "Terms of use" not in item["clean_text"] and "Privacy policy" not in item["clean_text"]


async def crawl_site(tmp_path, pages: dict[str, str], mode: str, follow: str) -> list[dict]:
    """Serve ``pages`` with an index of them at "/", crawl them in ``mode``
    with every page in the fit (the paths matching ``follow``), and return
    the items, all of which reached the feed."""
    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in sorted(pages))
    pages = {**pages, "/": f"<html><body><ul>{links}</ul></body></html>"}
    port = reactor.listenTCP(0, Site(Pages(pages)), interface="127.0.0.1")
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"],
                                     DEBOILER_MIN_PAGES=len(pages) - 1, DEBOILER_MODE=mode,
                                     spider_kwargs={"follow": follow})
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    return items


def forum_site(table: bool = False) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A phpBB-like board: three topic lists, neighbours in URL order, whose
    rows share one shape (a title link, "by user » date", replies, views),
    and threads whose "Similar topics" box links other topics by title.
    With ``table`` the lists are tables of rows, mostly links, under the
    board's name alone (no data table: title and "by user" linked, "N
    replies", the last post's day)."""
    import random

    rng = random.Random("board")
    boards = {"electronics": "Electronics and soldering", "gardening": "Gardening", "offtopic": "Off-topic"}
    users = ["tanja.k", "SolderSam", "bitflip", "pixel_pete", "grumpy_gardener"]
    pages, lists, titles = {}, {}, {}
    n = 0
    for board in boards:
        lists[board] = []
        for _ in range(6):
            n += 1
            titles[n] = f"{sentence(rng, 5).rstrip('.')} ({board} {n})"
            lists[board].append(titles[n])
    for board, name in boards.items():
        rows = "".join(
            f'<li class="row"><dl class="row-item"><dt><div class="list-inner"><a class="topictitle" '
            f'href="/viewtopic/{k}">{titles[k]}</a><div class="responsive-hide">by <a class="username" '
            f'href="/member/{users[k % 5]}/">{users[k % 5]}</a> » Tue May {k}, 2024 10:{k:02d} pm</div></div></dt>'
            f'<dd class="posts">{k % 7 + 1} <dfn>Replies</dfn></dd><dd class="views">{100 + 37 * k} <dfn>Views</dfn>'
            f'</dd></dl></li>' for k in titles if titles[k] in lists[board])
        main = (f'<h1>{name}</h1><p>{sentence(rng, 9)}</p><ul class="topiclist"><li class="header"><dl><dt>Topics'
                f'</dt><dd>Replies</dd><dd>Views</dd></dl></li></ul><ul class="topiclist topics">{rows}</ul>')
        if table:
            rows = "".join(
                f'<tr><td class="topic"><a href="/viewtopic/{k}">{titles[k]}</a><div class="by">by <a '
                f'href="/member/{users[k % 5]}/">{users[k % 5]}</a></div></td><td class="replies">{k % 7 + 1} replies'
                f'</td><td class="last">{k} May 2024</td></tr>' for k in titles if titles[k] in lists[board])
            main = (f'<h1>{name}</h1><a class="btn" href="/new">New topic</a><table class="topic-list"><thead><tr>'
                    f'<th>Topic</th><th>Replies</th><th>Last post</th></tr></thead><tbody>{rows}</tbody></table>')
        pages[f"/viewforum/{board}"] = _template("board.test", name, main, rng)
    for k, title in titles.items():
        posts = "".join(f'<div class="post"><p class="author">by {users[(k + j) % 5]}</p>'
                        f'<div class="content"><p>{sentence(rng, 30)}</p></div></div>' for j in range(3))
        similar = "".join(f'<li><a class="topictitle" href="/viewtopic/{j}">{titles[j]}</a> by '
                          f'<a class="username" href="/member/{users[j % 5]}/">{users[j % 5]}</a></li>'
                          for j in (k % 18 + 1, (k + 1) % 18 + 1, (k + 2) % 18 + 1))
        main = (f'<h1>{title}</h1>{posts}<div class="similar"><h3>Similar topics</h3><ul class="topiclist">'
                f'{similar}</ul></div>')
        pages[f"/viewtopic/{k}"] = _template("board.test", title, main, rng)
    return pages, lists


@pytest.mark.parametrize("table", [False, True], ids=["list", "table"])
@pytest.mark.parametrize("mode", ["content", "boilerplate"])
@pytest_twisted.ensureDeferred
async def test_a_forum_s_topic_lists_keep_every_topic(tmp_path, mode, table):
    """A forum's three topic lists, neighbours in URL order, share the shape
    of their rows: matched by shape, every topic's title was template (a new
    user's board lost them all in both modes), and the titles the threads'
    "Similar topics" boxes repeat were template by their text. Rows of one
    shape holding most of a page's text are its own; a row is kept whole.
    A table's rows too (a second user's board kept its name alone: its
    table of links was no data table, and content mode, left with the
    table's short rows, kept none of them)."""
    pages, lists = forum_site(table)
    items = await crawl_site(tmp_path, pages, mode, "/view(forum|topic)/")
    assert len(items) == len(pages)
    by_path = {"/" + i["url"].split("/", 3)[3]: i for i in items}
    for board, titles in lists.items():
        item = by_path[f"/viewforum/{board}"]
        assert item["deboiler"]["model"] == "fitted", item["deboiler"]
        for title in titles:
            assert title in item["clean_text"], (mode, board, title, item["clean_text"])
        if table:  # each row's counts, day and author (a link to a member each board's rows share)
            k = int(re.search(r"\d+(?=\)$)", titles[0]).group())
            assert f"{k % 7 + 1} replies" in item["clean_text"] and f"{k} May 2024" in item["clean_text"], (
                mode, board, item["clean_text"])
            authors = [line for line in item["clean_text"].splitlines() if re.fullmatch(r"by [\w.]+", line)]
            assert len(authors) == len(titles), (mode, board, item["clean_text"])
        for template in TEMPLATE:
            assert template not in item["clean_text"], (mode, board, template)


def job_board() -> tuple[dict[str, str], dict[str, list[tuple[str, str, str]]]]:
    """Five result pages of ten job cards each (title, company, location,
    salary) beside a filter sidebar of the same places, and a page a job.
    Each company and place is on several result pages, so each matched as
    template; the sidebar's places are the site's template."""
    import random

    rng = random.Random("jobs")
    companies = ["Kestrel Games", "Pinecone Health", "Northwind Logistics", "Carrot & Stick Ltd"]
    places = ["Berlin", "Dublin", "Lisbon", "Warsaw", "Remote (EU)"]
    pages, cards = {}, {}
    filters = "".join(f"<label><input type='checkbox'> {p}</label>" for p in places)
    sidebar = f"<aside class='filters'><h3>Refine your search</h3><fieldset>{filters}</fieldset></aside>"
    for n in range(1, 6):
        cards[f"/jobs/search-{n}"] = rows = []
        for k in range(10):
            job = 10 * n + k
            title = f"{rng.choice(['Senior', 'Junior', 'Lead'])} {sentence(rng, 2)[:-1]} engineer {job}"
            rows.append((title, rng.choice(companies), rng.choice(places)))
            pages[f"/jobs/{job}"] = _template("jobs.test", title, f"<h1>{title}</h1><p>{sentence(rng, 40)}</p>"
                                              f"<p>{sentence(rng, 30)}</p>", rng)
        items = "".join(f"<li class='job-card'><h2 class='job-title'><a href='/jobs/{10 * n + k}'>{t}</a></h2>"
                        f"<div class='company'>{c.replace('&', '&amp;')}</div><div class='location'>{p}</div>"
                        f"<div class='salary'>€{40 + 3 * n + k},000 a year</div></li>"
                        for k, (t, c, p) in enumerate(rows))
        main = (f"<h1>Software jobs: page {n} of 5</h1>{sidebar}<ul class='results'>{items}</ul>")
        pages[f"/jobs/search-{n}"] = _template("jobs.test", f"Jobs page {n}", main, rng)
    return pages, cards


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
@pytest_twisted.ensureDeferred
async def test_every_job_card_keeps_its_company_and_place(tmp_path, mode):
    """A company or a place is on several result pages of a job board, so
    it matched as template, and every card of a new user's board lost its
    company and location in both modes. A place of the cards' rows holding
    different values from row to row is the page's own; the sidebar's
    list of the same places is template."""
    pages, cards = job_board()
    items = await crawl_site(tmp_path, pages, mode, "/jobs/")
    by_path = {"/" + i["url"].split("/", 3)[3]: i for i in items}
    for path, rows in cards.items():
        item = by_path[path]
        assert item["deboiler"]["model"] == "fitted", item["deboiler"]
        lines = item["clean_text"].splitlines()
        for title, company, place in rows:
            at = lines.index(title)
            assert lines[at + 1:at + 3] == [company, place], (mode, path, lines[at:at + 4])
        assert "Refine your search" not in item["clean_text"], (mode, path)
        assert sum(line in [p for _, _, p in rows] for line in lines) == len(rows), (mode, path, lines)
        for template in TEMPLATE:
            assert template not in item["clean_text"], (mode, path, template)


def qa_site() -> tuple[dict[str, str], dict[str, str]]:
    """Question pages whose headline links to the question, as the
    "Related" boxes of the questions beside it link it: the same ``<a>``."""
    import random

    rng = random.Random("qa")
    titles = {k: f"How do I {sentence(rng, 4).rstrip('.').lower()} ({k})?" for k in range(1, 11)}
    pages = {}
    for k, title in titles.items():
        link = lambda j: f'<a class="question-hyperlink" href="/questions/{j}">{titles[j]}</a>'  # noqa: E731
        related = "".join(f'<div class="spacer">{link(j)}</div>' for j in (k % 10 + 1, (k + 1) % 10 + 1))
        main = (f'<div id="question-header"><h1>{link(k)}</h1></div><div class="post">'
                f'<p>{sentence(rng, 40)}</p></div><div class="answer"><p>{sentence(rng, 30)}</p></div>'
                f'<div class="sidebar-related"><h4>Related</h4>{related}</div>')
        pages[f"/questions/{k}"] = _template("qa.test", title, main, rng)
    return pages, {f"/questions/{k}": t for k, t in titles.items()}


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
@pytest_twisted.ensureDeferred
async def test_a_question_keeps_its_headline_that_its_neighbours_link(tmp_path, mode):
    """A question's headline is a link to itself, and the "Related" boxes
    of the questions beside it link it with the same words: boilerplate
    mode took a new user's headlines for template. An ``<h1>`` the site
    does not share is the page's own, all the text in it too."""
    pages, titles = qa_site()
    items = await crawl_site(tmp_path, pages, mode, "/questions/")
    by_path = {"/" + i["url"].split("/", 3)[3]: i for i in items}
    for path, title in titles.items():
        item = by_path[path]
        assert item["deboiler"]["model"] == "fitted", item["deboiler"]
        assert item["clean_text"].splitlines()[0] == title, (mode, path, item["clean_text"][:200])
        for template in TEMPLATE:
            assert template not in item["clean_text"], (mode, path, template)


def recipe_blog() -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    """Recipe pages whose "You may also like" box shows the next three
    recipes' cards, in the very markup of the category pages' cards; a
    category's page stands beside its first recipes in URL order."""
    import random

    rng = random.Random("recipes")
    recipes = [(f"{sentence(rng, 3)[:-1]} {k}", sentence(rng, 12)) for k in range(24)]

    def card(k: int) -> str:
        title, teaser = recipes[k]
        return (f"<article class='recipe-card'><a href='/recipes/{k:02d}'><h3>{title}</h3></a>"
                f"<p class='teaser'>{teaser}</p></article>")

    pages, categories = {}, {}
    for k, (title, _) in enumerate(recipes):
        also = "".join(card((k + j) % 24) for j in (1, 2, 3))
        main = (f"<article><h1>{title}</h1><p>{sentence(rng, 60)}</p><h2>Ingredients</h2><ul>"
                + "".join(f"<li>{sentence(rng, 4)}</li>" for _ in range(5))
                + f"</ul></article><section class='also'><h2>You may also like</h2>{also}</section>")
        pages[f"/recipes/{k:02d}"] = _template("food.test", title, main, rng)
    for c in range(3):
        members = list(range(c * 8, c * 8 + 8))
        main = (f"<h1>Category {c}</h1><p>{sentence(rng, 20)}</p>"
                f"<div class='grid'>{''.join(card(k) for k in members)}</div>")
        path = f"/recipes/{c * 8:02d}-all"
        pages[path] = _template("food.test", f"Category {c}", main, rng)
        categories[path] = [recipes[k] for k in members]
    return pages, categories


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
@pytest_twisted.ensureDeferred
async def test_a_category_keeps_the_cards_its_recipes_boxes_repeat(tmp_path, mode):
    """A recipe's card on a category page is also in the "You may also
    like" boxes of the recipes beside it in URL order, so its title and
    teaser matched, and a new user's category pages lost most of their
    cards in both modes. What few of the site's pages share, in the rows of
    the page's own list, is the page's own."""
    pages, categories = recipe_blog()
    items = await crawl_site(tmp_path, pages, mode, "/recipes/")
    by_path = {"/" + i["url"].split("/", 3)[3]: i for i in items}
    for path, cards in categories.items():
        item = by_path[path]
        assert item["deboiler"]["model"] == "fitted", item["deboiler"]
        lines = item["clean_text"].splitlines()
        for title, teaser in cards:
            assert title in lines and teaser in lines, (mode, path, title, lines)
        for template in TEMPLATE:
            assert template not in item["clean_text"], (mode, path, template)


def podcast_site() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Episode pages whose "More episodes" box links the four latest by
    title, and an archive whose rows are a title link and the date after it."""
    import random

    rng = random.Random("podcast")
    episodes = [(f"Episode {k}: {sentence(rng, 4)[:-1]}", f"November {k + 1}, 2024") for k in range(16)]
    pages = {}
    for k, (title, day) in enumerate(episodes):
        more = "".join(f"<li><a href='/episodes/{j:02d}'>{episodes[j][0]}</a></li>" for j in range(12, 16))
        main = (f"<article><h1>{title}</h1><p>{day}</p><p>{sentence(rng, 50)}</p></article>"
                f"<aside class='more'><h2>More episodes</h2><ul>{more}</ul></aside>")
        pages[f"/episodes/{k:02d}"] = _template("pod.test", title, main, rng)
    rows = "".join(f"<li><a href='/episodes/{k:02d}'>{t}</a> · {d}</li>" for k, (t, d) in enumerate(episodes))
    pages["/episodes/07-all"] = _template("pod.test", "All episodes", f"<h1>All episodes</h1><ul>{rows}</ul>", rng)
    return pages, episodes


@pytest_twisted.ensureDeferred
async def test_an_archive_s_rows_keep_the_titles_other_pages_boxes_link(tmp_path):
    """An archive's row is an episode's title link and its date; the
    "More episodes" box of every episode links the latest by the same words,
    so their links matched, and a new user's
    archive kept "· November 19, 2024" (boilerplate mode). A link that
    opens a row of a list, with the page's own words after it, is the
    row's title."""
    pages, episodes = podcast_site()
    items = await crawl_site(tmp_path, pages, "boilerplate", "/episodes/")
    (archive,) = [i for i in items if i["url"].endswith("/episodes/07-all")]
    assert archive["deboiler"]["model"] == "fitted", archive["deboiler"]
    lines = archive["clean_text"].splitlines()
    for title, day in episodes:
        assert f"{title} · {day}" in lines, (title, lines)
    for template in TEMPLATE:
        assert template not in archive["clean_text"], template


def posts_with_a_button_header() -> tuple[dict[str, str], dict[str, tuple[str, str, str]]]:
    """Posts whose header holds the headline, a byline, "Jump to recipe" and
    "Print" buttons and a share bar: mostly links, the same tags on every
    post, so a structure-only match of the site's template."""
    import random

    rng = random.Random("header")
    authors = ["Teodor Ilic", "Marit Olsen", "Grace Obi"]
    pages, truth = {}, {}
    for k in range(12):
        title, author, day = f"{sentence(rng, 4)[:-1]} number {k}", authors[k % 3], f"2024-03-{k + 1:02d}"
        main = (f"<article class='post'><header class='entry-header'><h1 class='entry-title'>{title}</h1>"
                f"<div class='entry-meta'><span class='byline'>By <a rel='author' href='/author/{k % 3}/'>"
                f"{author}</a></span> &middot; Published <time class='published' datetime='{day}'>{day}</time>"
                "</div><div class='buttons'><a href='#recipe' class='btn'>Jump to Recipe</a> "
                "<a href='#print' class='btn'>Print Recipe</a></div><div class='share'><a href='#'>Pin it</a> "
                "<a href='#'>Share on Facebook</a> <a href='#'>Email this recipe</a></div></header>"
                f"<div class='entry-content'><p>{sentence(rng, 40)}</p><p>{sentence(rng, 30)}</p></div></article>")
        pages[f"/posts/{k:02d}"] = _template("crumb.test", title, main, rng)
        truth[f"/posts/{k:02d}"] = (title, author, day)
    return pages, truth


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
@pytest_twisted.ensureDeferred
async def test_a_post_header_of_buttons_keeps_its_headline_byline_and_date(tmp_path, mode):
    """The header matched on its tags alone, and a new user's recipe blog
    lost every post's headline (``clean_title`` was the site's name), author
    and date in both modes. A structure-only match holding an ``<h1>`` of
    the page's own words is not removed whole: its buttons and share bar
    go, the headline and byline stay."""
    pages, truth = posts_with_a_button_header()
    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in sorted(pages))
    served = {**pages, "/": f"<html><body><ul>{links}</ul></body></html>"}
    port = reactor.listenTCP(0, Site(Pages(served)), interface="127.0.0.1")
    try:
        crawler, items = await crawl(tmp_path, [f"http://127.0.0.1:{port.getHost().port}/"],
                                     DEBOILER_MIN_PAGES=len(pages), DEBOILER_MODE=mode, DEBOILER_METADATA=True,
                                     spider_kwargs={"follow": "/posts/"})
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    for item in items:
        title, author, day = truth["/" + item["url"].split("/", 3)[3]]
        assert item["deboiler"]["model"] == "fitted", item["deboiler"]
        assert item["clean_title"] == title, (mode, item["clean_title"])
        assert title in item["clean_text"] and "Share on Facebook" not in item["clean_text"], (mode, item["clean_text"])
        assert (item["page_metadata"]["author"], item["page_metadata"]["published"]) == (author, day), mode
