"""Pages of made-up websites with realistic templates, written for the tests."""

from __future__ import annotations

import random

WORDS = (
    "river stone lantern harbor meadow copper violet orbit quiet signal garden "
    "forest engine canvas marble winter summer bridge pocket ladder mirror "
    "thunder velvet basket candle window rocket planet saddle tunnel valley "
    "anchor beacon cobalt desert ember falcon glacier hollow island jasmine"
).split()


def sentence(rng: random.Random, n: int = 12) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def article_page(site: str, i: int, *, seed: int = 0, paragraphs: int = 5) -> tuple[str, str, str]:
    """(url, html, article text) of page ``i`` of ``site``: nav, header,
    cookie banner, sidebar of rotating links, article, share bar, footer."""
    rng = random.Random(f"{site}/{i}/{seed}")
    title = sentence(rng, 6)[:-1]
    paras = [sentence(rng, rng.randint(15, 30)) for _ in range(paragraphs)]
    related = [sentence(rng, 5)[:-1] for _ in range(5)]
    url = f"http://{site}/articles/{i:04d}.html"
    html = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title} | {site}</title>
<style>body {{ font-family: serif }}</style><script>var page = {i};</script></head>
<body class="page-{i}">
<div id="cookie-banner">We use cookies to improve your experience. <button>Accept</button></div>
<header><div class="logo"><a href="/">{site} Daily</a></div>
<nav><ul><li><a href="/news">News</a></li><li class="{'active' if i % 2 else ''}"><a href="/sport">Sport</a></li>
<li><a href="/culture">Culture</a></li><li><a href="/about">About us</a></li></ul></nav></header>
<div class="main">
<article><h1>{title}</h1>
<p class="byline">By Staff Writer</p>
{''.join(f'<p>{p}</p>' for p in paras)}
<div class="share"><span>Share this:</span> <a href="#">Facebook</a> <a href="#">Twitter</a> <a href="#">Email</a></div>
</article>
<aside class="sidebar"><h3>Related stories</h3><ul>
{''.join(f'<li><a href="/articles/{rng.randint(0, 999):04d}.html">{r}</a></li>' for r in related)}
</ul><div class="newsletter">Sign up for our newsletter and never miss a story.</div></aside>
</div>
<footer><p>Copyright 2026 {site}. All rights reserved.</p>
<ul><li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use</a></li>\
<li><a href="/contact">Contact</a></li></ul></footer>
</body></html>"""
    return url, html, "\n".join([title, "By Staff Writer", *paras])


def site_pages(site: str, n: int, seed: int = 0, paragraphs: int = 5) -> list[tuple[str, str, str]]:
    return [article_page(site, i, seed=seed, paragraphs=paragraphs) for i in range(n)]


#: Kinds of page ``typed_page`` writes.
KINDS = ("article", "listing", "product", "forum", "docs", "service")


def _template(site: str, title: str, main: str, rng: random.Random) -> str:
    """A page of ``site``: the same header, menu, sidebar and footer around ``main``."""
    related = "".join(f'<li><a href="/more/{rng.randint(0, 999)}">{sentence(rng, 4)[:-1]}</a></li>'
                      for _ in range(4))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} | {site}</title>
<script>var tracking = 1;</script></head>
<body class="site">
<header><a class="logo" href="/">{site}</a><nav><ul><li><a href="/news">News</a></li>
<li><a href="/shop">Shop</a></li><li><a href="/help">Help</a></li>\
<li><a href="/about">About us</a></li></ul></nav></header>
<div class="wrap"><main id="content">{main}</main>
<aside class="sidebar"><h3>Elsewhere on {site}</h3><ul>{related}</ul></aside></div>
<footer><p>Copyright 2026 {site}. All rights reserved.</p><ul><li><a href="/privacy">Privacy policy</a></li>
<li><a href="/terms">Terms of use</a></li></ul></footer>
</body></html>"""


def typed_page(kind: str, site: str, i: int) -> tuple[str, str]:
    """(url, html) of page ``i`` of a ``kind`` site (``KINDS``): an article
    with a quote, a figure and emphasis; a listing of entries with links;
    a product with a specifications table; a forum thread of posts; a
    documentation page with code and a table; a service page of sections
    with lists."""
    rng = random.Random(f"{kind}/{site}/{i}")
    title = sentence(rng, 5)[:-1]
    say = lambda n=18: sentence(rng, n)  # noqa: E731
    if kind == "article":
        main = (f"<article><h1>{title}</h1><p class='byline'>By <span class='author'>Ann Lee</span>, "
                f"<time datetime='2026-05-{i % 28 + 1:02d}'>May {i % 28 + 1}</time></p>"
                f"<p>{say()} <em>{say(4)}</em> {say()} <a href='/story/{i}/context'>{say(3)}</a></p>"
                f"<figure><img src='/img/{i}.jpg' alt='{say(3)}'><figcaption>{say(9)}</figcaption></figure>"
                f"<p>{say(25)} <strong>{say(3)}</strong> {say()}</p>"
                f"<blockquote><p>{say(20)}</p><p>{say(14)}</p></blockquote>"
                f"<p>{say(22)}<br>{say(12)}</p><h2>{say(4)}</h2><p>{say(30)}</p>"
                f"<div class='share'>Share: <a href='#' onclick='share()'>Facebook</a></div></article>")
    elif kind == "listing":
        entries = "".join(
            f"<li class='entry'><h2><a href='/posts/{i}-{k}'>{say(6)}</a></h2>"
            f"<p>{say(24)} <a href='/posts/{i}-{k}#more' title='Read on'>Read more</a></p></li>"
            for k in range(6))
        main = f"<h1>{title}</h1><p>{say(20)}</p><ul class='entries'>{entries}</ul>"
    elif kind == "product":
        rows = "".join(f"<tr><th scope='row'>{say(2)[:-1]}</th><td>{rng.randint(1, 900)} {say(1)[:-1]}</td></tr>"
                       for _ in range(6))
        main = (f"<div class='product'><h1>{title}</h1><p class='price'>Price: <b>{rng.randint(5, 99)}.99 EUR</b></p>"
                f"<div class='description'><p>{say(30)}</p><p>{say(25)}</p>"
                f"<ul><li>{say(8)}</li><li>{say(9)}</li><li>{say(7)}</li></ul></div>"
                f"<h2>Specifications of the {say(2)[:-1]}</h2>"
                f"<table class='specs'><thead><tr><th>{say(1)[:-1]} feature</th><th>Value {i}</th></tr></thead>"
                f"<tbody>{rows}</tbody></table><p>{say(24)}</p></div>")
    elif kind == "forum":
        posts = "".join(
            f"<div class='post' id='p{k}'><div class='author'>{say(2)[:-1]}</div>"
            f"<div class='body'>{f'<blockquote><p>{say(10)}</p></blockquote>' if k % 2 else ''}"
            f"<p>{say(28)}</p><p>{say(16)} <a href='/thread/{i}?page=2'>{say(3)}</a></p></div></div>"
            for k in range(5))
        main = f"<h1>{title}</h1><div class='thread'>{posts}</div>"
    elif kind == "docs":
        code = (f"def handler_{i}(request):\n    total = {i}\n    for item in request.items:\n"
                f"        total += item * {i}  # &lt;scaled&gt;\n    return total")
        main = (f"<h1>{title}</h1><p>{say(24)} Call <code>handler_{i}()</code> with a request.</p>"
                f"<pre><code class='language-python'>{code}</code></pre>"
                f"<h2>Parameters</h2><table><tr><th>Name {i}</th><th>{say(1)[:-1]} type</th><th>Default</th></tr>"
                + "".join(f"<tr><td><code>p{k}_{i}</code></td><td>{say(1)[:-1]}</td><td>{k * i}</td></tr>"
                          for k in range(4))
                + f"</table><p>{say(22)}</p><dl><dt>{say(2)[:-1]}</dt><dd>{say(14)}</dd><dt>{say(2)[:-1]}</dt>"
                  f"<dd>{say(12)}</dd></dl><p>{say(20)} <kbd>Ctrl</kbd>+<kbd>C</kbd> {say(6)}</p>")
    elif kind == "service":
        sections = "".join(
            f"<section><h2>{say(3)[:-1]}</h2><p>{say(26)}</p>"
            f"<ol><li>{say(8)}</li><li>{say(9)}</li><li>{say(10)}</li></ol></section>"
            for _ in range(3))
        main = f"<h1>{title}</h1><p>{say(22)}</p>{sections}<p>{say(18)} <a href='/contact'>{say(2)}</a></p>"
    else:
        raise ValueError(kind)
    return f"http://{site}/{kind}/{i}.html", _template(site, title, main, rng)


def with_session_line(html: str, sid: str) -> str:
    """``html`` with a visible per-request line at the top of its main
    column, as sites that print a session id do."""
    return html.replace('<div class="main">', f'<div class="main"><p class="session">Session ID: {sid}</p>', 1)


def syndicated_page(site: str, k: int) -> tuple[str, str, str]:
    """(url, html, article text) of copy ``k`` of one article run on many
    pages of a site, each copy with its own list of 25 tags: too different
    for a near copy (a tenth of the signatures differ), while nearly all
    their text is shared."""
    url, html, text = article_page(site, 3)
    rng = random.Random(f"{site}/tags/{k}")
    tags = "".join(f"<li><a href='/tag/{k}-{i}'>{rng.choice(WORDS)[:3]}</a></li>" for i in range(25))
    html = html.replace('<div class="main">', f'<div class="main"><ul class="tags">{tags}</ul>', 1)
    return f"http://{site}/articles/wire-{k:04d}.html", html, text


def calendar_page(site: str, day: int, footer_links: int = 1) -> tuple[str, str, str]:
    """(url, html, heading) of a calendar page: a nav, a heading with the
    date, one sentence, two links, a footer; the pages differ in the date
    only, and are mostly links (their whole ``<html>`` is link-dense)."""
    date = f"2026-03-{day:02d}"
    links = '<a href="/privacy">Privacy</a>' + (' <a href="/terms">Terms</a>' if footer_links > 1 else "")
    html = f"""<html><head><title>Calendar {date}</title></head><body>
<nav><a href="/">Home</a> <a href="/calendar">Calendar</a> <a href="/about">About</a></nav>
<h1>Events on {date}</h1>
<p>No events.</p>
<p><a href="/calendar/prev">Previous day</a> <a href="/calendar/next">Next day</a></p>
<footer>{links}</footer>
</body></html>"""
    return f"http://{site}/calendar/{date}.html", html, f"Events on {date}"


def teaser_article_page(site: str, *, seed: int = 7, teasers: int = 30,
                        excerpt_words: int = 26) -> tuple[str, str, list[str], list[str]]:
    """(url, html, paragraphs, teaser lines) of a news page alone: an
    article of eight paragraphs of 30-40 words, then a long "More news"
    column of teasers (a title, an excerpt of ``excerpt_words`` words, an
    age) that holds most of the page's words, as a news site's article page
    often is."""
    rng = random.Random(seed)
    paras = [" ".join(sentence(rng, rng.randint(10, 14)) for _ in range(3)) for _ in range(8)]
    cards = [(sentence(rng, 9)[:-1], sentence(rng, excerpt_words)) for _ in range(teasers)]
    more = "".join(f"<div class='card'><h4><a href='/t{i}'>{title}</a></h4><p>{excerpt}</p>"
                   f"<div class='when'>{i + 1}H ago</div></div>" for i, (title, excerpt) in enumerate(cards))
    html = ("<html><head><title>Harbour lantern report | Daily</title></head><body>"
            "<nav class='menu'><a href='/'>Home</a> <a href='/a'>About</a> <a href='/c'>Contact</a></nav>"
            "<div class='wrap'><article class='story'><h1>Harbour lantern report</h1>"
            + "".join(f"<p>{p}</p>" for p in paras) + "</article></div>"
            f"<section class='more'><h3>More news</h3>{more}</section>"
            "<footer>Daily, 1 Main Street. All rights reserved.</footer></body></html>")
    return f"http://{site}/news/harbour.html", html, paras, [line for card in cards for line in card]
