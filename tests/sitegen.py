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
<ul><li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use</a></li><li><a href="/contact">Contact</a></li></ul></footer>
</body></html>"""
    return url, html, "\n".join([title, "By Staff Writer", *paras])


def site_pages(site: str, n: int, seed: int = 0, paragraphs: int = 5) -> list[tuple[str, str, str]]:
    return [article_page(site, i, seed=seed, paragraphs=paragraphs) for i in range(n)]


def with_session_line(html: str, sid: str) -> str:
    """``html`` with a visible per-request line at the top of its main
    column, as sites that print a session id do."""
    return html.replace('<div class="main">', f'<div class="main"><p class="session">Session ID: {sid}</p>', 1)


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
