"""page_metadata learned per site, as users get it: DEBOILER_METADATA in a
real crawl (threads and a worker process, both modes), the signature file
that keeps where the site writes its bylines, a second crawl reusing it,
and ``scrapy-deboiler clean --metadata``. The site is a blog whose article
pages each show, between the headline and their own byline, a strip of
other posts with their authors and dates (test_metadata.site_pages): the
page alone takes the strip's first byline; the site model does not."""

import json
import random

import pytest
import pytest_twisted
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_deboiler import Page, SignatureStore, clean_page, fit_and_clean
from scrapy_deboiler._cli import main
from scrapy_deboiler._meta_types import MetadataHints
from scrapy_deboiler._sitedb import HintSample
from scrapy_deboiler._store import load_site

from crawling import crawl, serve_site, stat
from sitegen import sentence
from test_cli import read, write
from test_metadata import AUTHORS, PROSE, _post_date, site_pages
from test_pipeline import check_all_items_reached_the_feed, close

N = 10


def blog() -> dict[str, str]:
    """The blog's pages by path, under /articles/ (what the test spider follows)."""
    return {f"/articles/post-{url.rsplit('/', 1)[1]}": html for url, html in site_pages(N)}


def right(meta: dict | None, i: int) -> bool:
    return bool(meta) and meta["author"] == AUTHORS[i % len(AUTHORS)] and meta["published"] == _post_date(i)


def number(url: str) -> int:
    return int(url.rsplit("-", 1)[1])


def test_the_site_model_gives_every_page_its_own_byline_where_the_page_alone_does_not():
    pages = site_pages(N)
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        assert model.metadata_hints, mode
        assert all(right(r.metadata, i) for i, r in enumerate(results)), mode
        alone = [clean_page(Page(html, url), None, mode=mode, metadata=True).metadata for url, html in pages]
        assert not any(right(m, i) for i, m in enumerate(alone)), mode
        # what the site model leaves to the page (language, the site's name its <title> ends with) is the page's
        assert all(r.metadata["language"] == "en" and r.metadata["site_name"] == "The Example Blog"
                   for r in results)


def test_a_byline_that_neighbouring_posts_share_is_still_the_page_s_author():
    # Tips 4-7 of 20 are neighbours in URL order, all by one author: their
    # byline is a subtree three neighbour pairs share, which cleaning
    # removes. The site's template is shared by most pairs (the sidebar's
    # editor is no author); their author is theirs.
    authors = ["Marta Kowalski", "Daniel Okafor", "Priya Raman", "Lena Fischer"]
    pages = []
    for i in range(20):
        author = "Sam Hughes" if 4 <= i < 8 else authors[i % 4]
        pages.append((f"https://garden.example/tips/{i:02d}.html", f"""<html lang="en"><head>
<title>Tip {i} | Garden</title></head><body><nav><a href="/">Home</a> <a href="/tips">Tips</a></nav>
<main><article><h1>Garden tip number {i}</h1><p class="byline">By {author}</p>
<p>{PROSE} Tip {i} is about the {['roses', 'beans', 'ponds', 'lawns'][i % 4]}.</p><p>{PROSE}</p></article></main>
<aside><p class="author">Edited by Site Owner</p><p>Seasonal tips every fortnight.</p></aside>
<footer><p>All rights reserved.</p></footer></body></html>"""))
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        got = [r.metadata["author"] for r in results]
        assert got == [a if not 4 <= i < 8 else "Sam Hughes" for i, a in enumerate(authors * 5)], mode


@pytest.mark.parametrize("dated", [True, False])
def test_a_one_author_blog_s_byline_is_template_and_still_the_author(dated):
    # Every post of a one-author blog has the same byline under its
    # headline: a subtree all its pages share, so template, and the author
    # was lost with it. Its sidebar's "about" box names her too, and the
    # shop's sort menu reads "By Review": neither is a byline.
    pages = []
    for i in range(12):
        when = f'<p class="date">Publié le {i + 1} mars 2025</p>' if dated else ""
        pages.append((f"https://jardin.example/blog/{i:02d}.html", f"""<html lang="fr"><head>
<title>Billet {i} | Jardin</title></head><body><nav><a href="/">Accueil</a> <a href="/blog">Blog</a>
<select><option>By Review</option><option>Par prix</option></select></nav>
<main><article><h1>Au jardin, semaine {i}</h1><p class="byline">Par Marie Dupont</p>{when}
<p>{PROSE} Semaine {i}, les {['tomates', 'courges', 'fèves', 'salades'][i % 4]}.</p><p>{PROSE}</p></article></main>
<aside><h3>À propos</h3><p class="author">Marie Dupont</p><p>Jardinière depuis vingt ans.</p></aside>
<footer><p>Tous droits réservés.</p></footer></body></html>"""))
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        assert all(r.metadata["author"] == "Marie Dupont" for r in results), mode
        days = [r.metadata["published"] for r in results]
        assert days == ([f"2025-03-{i + 1:02d}" for i in range(12)] if dated else [None] * 12), mode
    # Without the byline under the headline, the sidebar's name is no author.
    bare = [(url, html.replace('<p class="byline">Par Marie Dupont</p>', "")) for url, html in pages]
    model, results = fit_and_clean(bare, mode="content", metadata=True)
    assert all(r.metadata["author"] is None for r in results)


def test_a_product_s_reviews_do_not_date_it():
    # A shop's product pages show two dated reviews just below the name;
    # the site learns that place gives several days a page (``avoid``),
    # and no day of it is the product's, even as the date written near
    # the headline. Its blog's posts keep their own.
    pages = []
    for i in range(8):
        reviews = "".join(f'<div class="review"><p class="review-head"><span class="reviewer">{who}</span> '
                          f'<span class="review-date">{day}.0{i % 9 + 1}.2025</span></p>'
                          f"<p>{PROSE[:80 + 10 * k]} Becher {i}.</p></div>"
                          for k, (who, day) in enumerate((("Katrin M.", 12 + i), ("Jörg P.", 3 + i))))
        pages.append((f"https://keramik.example/produkt/{i}.html", f"""<html lang="de"><head>
<title>Becher {i} | Keramik</title></head><body><nav><a href="/">Start</a> <a href="/blog">Blog</a></nav>
<main><div class="product"><h1>Steingut-Becher Nummer {i}</h1><p class="price">{18 + i},90 €</p>
<p>Handgedrehter Becher {i} mit Reaktivglasur.</p><section class="reviews">{reviews}</section></div></main>
<footer><p>Keramik aus Husum</p></footer></body></html>"""))
    for i in range(4):
        pages.append((f"https://keramik.example/blog/{i}.html", f"""<html lang="de"><head>
<title>Werkstatt {i} | Keramik</title></head><body><nav><a href="/">Start</a> <a href="/blog">Blog</a></nav>
<main><article><h1>Aus der Werkstatt, Teil {i}</h1><p class="byline">Von Anna Schmidt, {i + 2}. März 2025</p>
<p>{PROSE} Teil {i}.</p></article></main><footer><p>Keramik aus Husum</p></footer></body></html>"""))
    model, results = fit_and_clean(pages, mode="content", metadata=True)
    assert any("review-date" in key for key in model.metadata_hints.avoid["published"])
    got = [r.metadata["published"] for r in results]
    assert got == [None] * 8 + [f"2025-03-{i + 2:02d}" for i in range(4)]


def test_a_forum_thread_is_not_by_the_one_poster_whose_name_reads_as_a_name():
    # Each post of a thread has the same byline place ("by <name> » date"),
    # which the site learns to avoid; the one regular whose name is
    # capitalised also gave a byline by its words ("by OldTimer"), one a
    # thread, learned as the threads' author ("OldTimer » Wed").
    users = ["mariadb_fan", "rustacean42", "kernelpanic", "lucia_dev", "quietcoder"]
    pages = []
    for t in range(8):
        posters = [users[t % 5], users[(t + 1) % 5], "OldTimer", users[(t + 2) % 5]]
        posts = "".join(f'<div class="post"><div class="postbody"><p class="author">by <strong><a href="/u/{who}">'
                        f'{who}</a></strong> &raquo; Wed Mar {k + 3:02d}, 2025 4:07 am</p>'
                        f"<div class='content'><p>{PROSE[:60 + 20 * k]} Thread {t}, post {k}.</p></div></div></div>"
                        for k, who in enumerate(posters))
        pages.append((f"https://forum.example/t/{t}.html", f"""<html lang="en"><head>
<title>Thread {t} - Homelab Forums</title></head><body><div class="headerbar"><a href="/">Homelab Forums</a></div>
<h1>Question number {t} about my server</h1>{posts}<div class="online">Who is online: 3 users</div></body></html>"""))
    model, results = fit_and_clean(pages, mode="content", metadata=True)
    assert "author" in "".join(model.metadata_hints.avoid["author"])
    for t, r in enumerate(results):
        assert r.metadata["author"] in (None, users[t % 5]), r.metadata
        assert r.metadata["published"] in (None, "2025-03-03"), r.metadata


def test_without_metadata_nothing_is_read():
    model, results = fit_and_clean(site_pages(6), mode="content")
    assert model.metadata_hints is None and all(r.metadata is None for r in results)


@pytest.mark.parametrize("mode,processes", [("content", 0), ("content", 1), ("boilerplate", 1)])
@pytest_twisted.ensureDeferred
async def test_a_crawl_learns_where_the_site_writes_its_bylines_and_a_second_crawl_reuses_it(
        tmp_path, mode, processes):
    index, port = serve_site(0, "blog", extra_pages=blog())
    try:
        # 10 pages, DEBOILER_MIN_PAGES 5: pages held for the fit, and pages cleaned as they come
        crawler, items = await crawl(tmp_path, [index], DEBOILER_METADATA=True, DEBOILER_MODE=mode,
                                     DEBOILER_PROCESSES=processes)
        saved = sorted((tmp_path / "signatures").glob("*.json"))
        again, items2 = await crawl(tmp_path / "2", [index], DEBOILER_METADATA=True, DEBOILER_MODE=mode,
                                    DEBOILER_PROCESSES=processes,
                                    DEBOILER_SIGNATURES_DIR=str(tmp_path / "signatures"))
    finally:
        close(port)
    check_all_items_reached_the_feed(crawler, items)
    assert len(items) == N and stat(crawler, "deboiler/items_cleaned") == N
    wrong = [i["url"] for i in items if not right(i["page_metadata"], number(i["url"]))]
    assert not wrong
    # the pages held for the fit are cleaned together, their languages read
    # together (LanguageBatch), as are the pages cleaned one by one after it
    assert [i["page_metadata"]["language"] for i in items] == ["en"] * N
    (path,) = saved
    doc = json.loads(path.read_text())
    assert doc["version"] == 3 and "post-meta" in doc["metadata"]["fields"]["author"][-1]
    _, model = load_site(path)
    assert model.metadata_hints is not None
    # the next crawl reads the site's model, hints and all, from the file
    check_all_items_reached_the_feed(again, items2)
    assert stat(again, "deboiler/sites_reused") == 1 and stat(again, "deboiler/sites_fitted") == 0
    assert all(right(i["page_metadata"], number(i["url"])) for i in items2)


@pytest_twisted.ensureDeferred
async def test_the_field_is_renamed_and_an_items_own_value_stays(tmp_path):
    index, port = serve_site(0, "blog", extra_pages=blog())
    try:
        crawler, items = await crawl(tmp_path, [index], DEBOILER_METADATA=True, DEBOILER_METADATA_FIELD="meta")
        # the spider's items carry "title": a field the pipeline must not write over
        own, items2 = await crawl(tmp_path / "2", [index], spider_kwargs={"read_title": True},
                                  DEBOILER_METADATA=True, DEBOILER_METADATA_FIELD="title")
        off, items3 = await crawl(tmp_path / "3", [index])
    finally:
        close(port)
    assert all(right(i["meta"], number(i["url"])) and "page_metadata" not in i for i in items)
    assert all(isinstance(i["title"], str) and i["title"].endswith("| The Example Blog") for i in items2)
    assert stat(own, "deboiler/items_metadata_kept") == N
    assert all("page_metadata" not in i for i in items3)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_command_line_learns_it_too_and_saves_it(tmp_path, jobs, capsys):
    recs = [{"url": url, "html": html} for url, html in site_pages(N)]
    recs.append({"url": "https://elsewhere.example.org/2023/07/01/one", "page_metadata": {"author": "Own"},
                 "html": "<html><body><h1>One page</h1><p>By Ann Example</p><p>" + "Text. " * 40
                         + "</p></body></html>"})
    write(tmp_path / "in.jsonl", recs)
    sigs = tmp_path / "sigs"
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), "--no-progress",
                 "--metadata", "--jobs", jobs, "--signatures", str(sigs)]) == 0
    out = read(tmp_path / "out.jsonl")
    assert len(out) == len(recs)
    assert all(right(r["page_metadata"], number(r["url"].replace("/post/", "/post-"))) for r in out[:N])
    assert out[N]["page_metadata"] == {"author": "Own"}  # the record's own stays
    assert SignatureStore(str(sigs)).load("blog.example.com").metadata_hints
    capsys.readouterr()
    assert main(["inspect", str(next(sigs.glob("blog.example.com*.json")))]) == 0
    shown = capsys.readouterr().out
    assert "format         scrapy-deboiler-signatures v3" in shown and "post-meta>span.author" in shown
    # the next run reads the model and its hints from the file
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "out2.jsonl"), "--no-progress",
                 "--metadata", "--signatures", str(sigs), "--metadata-field", "meta"]) == 0
    out2 = read(tmp_path / "out2.jsonl")
    assert all(right(r["meta"], number(r["url"].replace("/post/", "/post-"))) for r in out2[:N])
    assert all(r["deboiler"]["model"] == "file" for r in out2[:N])


def test_the_command_line_refuses_a_metadata_field_the_output_has(tmp_path, capsys):
    write(tmp_path / "in.jsonl", [{"url": "https://a.example/x", "html": "<p>x</p>"}])
    assert main(["clean", str(tmp_path / "in.jsonl"), str(tmp_path / "o.jsonl"), "--metadata",
                 "--metadata-field", "clean_text"]) == 2
    assert "--metadata-field" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.binary(min_size=1, max_size=2)), max_size=300),
       st.randoms(use_true_random=False), st.integers(1, 3))
def test_pass_one_reads_every_sites_smallest_keys_whatever_the_order_and_processes(pages, rng, processes):
    """The CLI learns a site's places from its HINT_PAGES smallest page
    keys; each process reads the summaries its own pages need, in any order."""
    rng.shuffle(pages)
    samples = [HintSample(size=5, sites=2) for _ in range(processes)]  # 2 sites kept: forgetting reads more
    read = {(site, key) for n, (site, key) in enumerate(pages) if samples[n % processes].wants(site, key)}
    for site in "abc":
        smallest = sorted({key for s, key in pages if s == site})[:5]
        assert {(site, key) for key in smallest} <= read


def board(threads: int = 8, all_replies: bool = False) -> tuple[list[tuple[str, str]], dict[str, tuple[str, str]]]:
    """A phpBB-like board: the site's name in its header's <h1>, each
    thread's topic in an <h2> and again over its first post (``all_replies``:
    "Re: " and the topic over every post), each post's "Post by NAME »
    date" line; two topic lists whose rows have such lines too. (url, html)
    of each page, and each thread's starter and day."""
    names = ["tanja.k", "SolderSam", "bitflip", "pixel_pete", "grumpy_gardener"]
    rng = random.Random("board")
    pages, starters, topics = [], {}, []
    for t in range(threads):
        topic = f"Question number {t} about the {['pump', 'valve', 'hose', 'bed'][t % 4]} in the garden"
        posts = ""
        for j in range(3):
            who, day = names[(t + 2 * j) % 5], f"2024-05-{t + 3 * j + 1:02d}"
            shown = f"Tue May {t + 3 * j + 1}, 2024 8:5{j} pm"
            posts += (f"<div class='post'><div class='postbody'><h3>{'Re: ' if j or all_replies else ''}{topic}</h3>"
                      f"<p class='author'><a href='#p{j}'>Post</a> by <strong><a class='username' href='/u/{who}'>"
                      f"{who}</a></strong> » {shown}</p><div class='content'>{sentence(rng, 40)}</div></div></div>")
            if j == 0:
                starters[f"https://board.example/viewtopic/{t}"] = (who, day)
        topics.append(topic)
        pages.append((f"https://board.example/viewtopic/{t}", _board_page(topic, f"<h2>{topic}</h2>{posts}")))
    for k in range(2):
        rows = "".join(f"<li class='row'><a class='topictitle' href='/viewtopic/{t}'>{topic}</a><p class='author'>"
                       f"by <a class='username' href='/u/{names[t % 5]}'>{names[t % 5]}</a> » Tue May {t + 1}, "
                       f"2024 9:0{t % 10} pm</p></li>" for t, topic in enumerate(topics) if t % 2 == k)
        name = ["Pumps and valves", "Beds and hoses"][k]
        pages.append((f"https://board.example/viewforum/{k}", _board_page(name, f"<h2>{name}</h2><ul>{rows}</ul>")))
    return pages, starters


def _board_page(title: str, body: str) -> str:
    return (f"<html lang='en'><head><title>{title} - Garden Board</title></head><body><div class='header'>"
            "<h1>Garden Board</h1><p>Growers helping growers</p><a href='/faq'>FAQ</a> <a href='/login'>Login</a>"
            f"</div><div class='page-body'>{body}</div><div class='footer'>Powered by board software</div>"
            "</body></html>")


@pytest.mark.parametrize("all_replies", [False, True])
def test_a_thread_s_author_and_date_are_its_first_post_s(all_replies):
    """A reader takes a thread's author and date from its first post; the
    site model learned that every post's byline holds other names, avoided
    them, and a new user's board had none. Its topic lists, whose rows have
    bylines too, have no author. A post's heading "Re: " and the topic's
    name is the thread's, not an item's of a list (a new user's board had
    lost 39 of 39 threads' author and date to it)."""
    pages, starters = board(all_replies=all_replies)
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        assert model.metadata_hints, mode
        for (url, _), result in zip(pages, results):
            meta = result.metadata
            if url in starters:
                assert (meta["author"], meta["published"]) == starters[url], (mode, url, meta)
            else:
                assert meta["author"] is None and meta["published"] is None, (mode, url, meta)


def test_a_dateline_the_site_s_pages_share_by_shape_still_dates_each_page():
    """A board writes each thread's starter and start date under its title
    in a list of links, which every thread page has: shared by its shape,
    it is template. Two posts of one day share their whole dateline too.
    The site learned that the place gives one day a page, different from
    page to page: the day there is the page's. A date the template holds
    far below the headline (a footer's "last modified") dates no page."""
    pages = []
    for t in range(6):
        day = f"2025-04-{t // 2 + 10:02d}"  # two threads a day
        posts = "".join(f'<article class="message"><p>{PROSE[:90 + 30 * k]} Thread {t}, reply {k}.</p></article>'
                        for k in range(3))
        pages.append((f"https://board.example/threads/topic-{t}.{400 + t}/", f"""<html lang="en"><head>
<title>Topic {t} about wiring | Board</title></head><body><header><a href="/">Board</a>
<a href="/forums">Forums</a> <a href="/whats-new">New posts</a></header>
<div class="p-title"><h1>Topic number {t} about wiring a shed</h1></div>
<div class="p-description"><ul class="listInline"><li><span class="u-srOnly">Thread starter</span>
<a href="/members/user{t}.{t}/" class="username">user{t}</a></li><li><span class="u-srOnly">Start date</span>
<a href="/threads/topic-{t}.{400 + t}/"><time class="u-dt" datetime="{day}T08:33:11-0400">{day}</time></a></li>
</ul></div>{posts}<footer><p>Board rules apply.</p>
<p class="updated">Rules last updated <time datetime="2025-01-0{t % 3 + 1}">Jan {t % 3 + 1}, 2025</time></p>
<p>Board software 2.3</p></footer></body></html>"""))
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        assert any("u-dt" in key for key in model.metadata_hints.fields["published"]), mode
        got = [r.metadata["published"] for r in results]
        assert got == [f"2025-04-{t // 2 + 10:02d}" for t in range(6)], mode
        assert all(r.metadata["modified"] is None for r in results), mode


def test_a_question_s_asker_in_a_box_the_site_s_posts_share_by_shape_is_its_author():
    """A Q&A site marks each post's user with microdata (``itemprop=author``)
    in a box of a profile link and a score, which every question shares by
    its shape: template. The site learned the question's box gives one name
    a page, a different one from page to page (not a one-author blog's
    byline): the name there is the page's author. A new user's questions
    had their asker page by page, and lost it to the site model (0 of 40)."""
    users = ["Aino Castellanos", "Keiko Rautio", "Siddharth Nazari", "Tove Dubois", "Ravi Mendes"]

    def box(who: str, owner: bool, score: int) -> str:
        return (f'<div class="post-signature{" owner" if owner else ""}"><div class="user-info">'
                f'<div class="user-details" itemprop="author" itemscope itemtype="http://schema.org/Person">'
                f'<a href="/users/{users.index(who)}/">{who}</a><span class="d-none" itemprop="name">{who}</span>'
                f'<div class="flair"><a href="/help/reputation">{score:,}</a></div></div></div></div>')
    pages = []
    for q in range(12):
        asker = users[q % 5]
        answers = "".join(f'<div class="answer"><p>{PROSE[:70 + 20 * a]} Answer {a} to {q}.</p>'
                          f'{box(users[(q + a + 1) % 5], False, 900 + 7 * q + a)}</div>' for a in range(2))
        pages.append((f"https://qa.example/questions/{700 + q}/topic-{q}", f"""<html lang="en"><head>
<title>How do I fix case {q}? - QA Example</title></head><body><header><a href="/">QA Example</a>
<a href="/questions">Questions</a> <a href="/tags">Tags</a></header><main>
<h1><a href="/questions/{700 + q}/topic-{q}">How do I fix case {q}?</a></h1>
<div class="question"><p>{PROSE} Case {q}.</p>{box(asker, True, 1000 + 13 * q)}</div>
<h2>2 Answers</h2>{answers}</main><footer><p>Site design by QA Example.</p></footer></body></html>"""))
    for mode in ("content", "boilerplate"):
        model, results = fit_and_clean(pages, mode=mode, metadata=True)
        assert model.metadata_hints.varied, mode
        assert [r.metadata["author"] for r in results] == [users[q % 5] for q in range(12)], mode
    # Kept in the signature file; a file written before it was learned reads as none.
    data = model.metadata_hints.to_json()
    assert MetadataHints.from_json(data).to_json() == data and data["varied"]
    assert MetadataHints.from_json({k: v for k, v in data.items() if k != "varied"}).varied == []
