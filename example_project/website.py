"""The demo website: three made-up sites with realistic templates, written
for this project, generated deterministically and served on 127.0.0.1.

    python website.py [--port 8701]   # serve until Ctrl-C
"""

from __future__ import annotations

import argparse
import html
import random
import re
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = (
    "harbour lantern meadow copper violet orbit quiet signal garden forest engine canvas "
    "marble winter summer bridge pocket ladder mirror thunder velvet basket candle window "
    "rocket planet saddle tunnel valley anchor beacon cobalt desert ember falcon glacier "
    "hollow island jasmine council budget railway school market festival museum ferry "
    "library river storm farmer bakery tide mayor station season pepper onion garlic butter "
    "flour lemon thyme roast simmer whisk bake crisp tender golden module parser config "
    "server client request cache token schema index query stream buffer thread"
).split()
NAMES = "Ada Bram Cleo Dev Esme Finn Gus Hana Ivo Juno Kit Lena Milo Nia Otto Pia Rex Sol Tess Uma".split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def sentence(rng: random.Random, lo: int = 10, hi: int = 24) -> str:
    return words(rng, rng.randint(lo, hi)).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))


def title(rng: random.Random) -> str:
    return words(rng, rng.randint(4, 8)).title()


COOKIE = ('<div class="cookie-consent" role="dialog"><p>We use cookies to remember your '
          'preferences and to measure traffic. <a href="/privacy">Learn more</a></p>'
          '<button>Accept all</button> <button>Only necessary</button></div>')


def comments(rng: random.Random, n: int) -> str:
    items = "".join(
        f'<li class="comment"><div class="meta"><b>{rng.choice(NAMES)}</b> '
        f'<time>{rng.randint(1, 28)} March 2026</time></div><p>{sentence(rng)}</p>'
        f'<a class="reply" href="#reply">Reply</a></li>' for _ in range(n))
    return (f'<section class="comments"><h2>{n} comments</h2><ol>{items}</ol>'
            '<form class="comment-form"><label>Your comment</label><textarea></textarea>'
            '<button>Post comment</button></form></section>')


class DemoSite:
    """One site: pages by path, each linking to others."""

    def __init__(self, key: str, n_articles: int = 36) -> None:
        self.key = key
        self.n = n_articles
        self.pages: dict[str, str] = {}
        getattr(self, f"_build_{key}")()

    # -- The Harbour Gazette: a news site ------------------------------------

    def _build_news(self) -> None:
        sections = ["city", "politics", "culture", "sport"]
        arts = []
        for i in range(self.n):
            rng = random.Random(f"news/{i}")
            arts.append((f"/{sections[i % 4]}/{2026}-{i:03d}-{rng.choice(WORDS)}.html", title(rng), sections[i % 4]))

        def page(body: str, head_title: str, section: str = "") -> str:
            nav = "".join(f'<li class="{"active" if s == section else ""}"><a href="/{s}/">{s.title()}</a></li>'
                          for s in sections)
            trending = "".join(f'<li><a href="{u}">{html.escape(t)}</a></li>' for u, t, _ in arts[:5])
            return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{html.escape(head_title)} - The Harbour Gazette</title>
<link rel="stylesheet" href="/static/gazette.css"><script>window.dataLayer=[];</script></head>
<body>{COOKIE}
<header class="masthead"><div class="top-bar">\
<span>Saturday edition</span> <a href="/subscribe">Subscribe</a> <a href="/login">Sign in</a></div>
<a class="logo" href="/">The Harbour Gazette</a><p class="tagline">News from the bay since 1887</p>
<nav class="sections"><ul><li><a href="/">Home</a></li>{nav}</ul></nav></header>
<div class="layout"><main>{body}</main>
<aside class="rail"><div class="widget"><h3>Trending now</h3><ol>{trending}</ol></div>
<div class="widget newsletter"><h3>The Morning Tide</h3>\
<p>Our newsletter, every weekday at seven.</p><input type="email"> <button>Sign up</button></div>
<div class="ad">Advertisement</div></aside></div>
<footer><div class="cols"><ul><li><a href="/about">About us</a></li>\
<li><a href="/contact">Contact</a></li><li><a href="/jobs">Jobs</a></li></ul>
<ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li>\
<li><a href="/corrections">Corrections</a></li></ul></div>
<p class="copyright">&copy; 2026 The Harbour Gazette. All rights reserved.</p></footer></body></html>"""

        for i, (url, t, sec) in enumerate(arts):
            rng = random.Random(f"news/body/{i}")
            related = "".join(f'<li><a href="{u}">{html.escape(rt)}</a></li>' for u, rt, _ in rng.sample(arts, 4))
            body = f"""<article><p class="kicker">{sec.title()}</p><h1>{html.escape(t)}</h1>
<p class="byline">\
By {rng.choice(NAMES)} {rng.choice(NAMES)}son &middot; <time>{rng.randint(1, 28)} March 2026</time></p>
<div class="share"><a href="#">Share</a> <a href="#">Tweet</a> <a href="#">Email</a></div>
<figure><img src="/img/{i}.png" alt=""><figcaption>{sentence(rng, 6, 12)}</figcaption></figure>
{"".join(f"<p>{paragraph(rng)}</p>" for _ in range(rng.randint(4, 8)))}
</article><section class="related"><h2>Read more</h2><ul>{related}</ul></section>{comments(rng, rng.randint(1, 4))}"""
            self.pages[url] = page(body, t, sec)
        for sec in sections:
            items = "".join(f'<li><a href="{u}">{html.escape(t)}</a></li>' for u, t, s in arts if s == sec)
            self.pages[f"/{sec}/"] = page(f"<h1>{sec.title()}</h1><ul class='list'>{items}</ul>", sec.title(), sec)
        items = "".join(f'<li><a href="{u}">{html.escape(t)}</a></li>' for u, t, _ in arts)
        self.pages["/"] = page(f"<h1>Latest news</h1><ul class='list'>{items}</ul>", "Home")
        self._about_pages(page, "about contact jobs privacy terms corrections subscribe login")

    # -- Copper Pot: a recipe blog -------------------------------------------

    def _build_recipes(self) -> None:
        recipes = []
        for i in range(self.n):
            rng = random.Random(f"recipes/{i}")
            recipes.append((f"/recipes/{i}/{rng.choice(WORDS)}-{rng.choice(WORDS)}", title(rng)))

        def page(body: str, head_title: str) -> str:
            popular = "".join(f'<li><a href="{u}">{html.escape(t)}</a></li>' for u, t in recipes[3:9])
            return f"""<!DOCTYPE html><html><head><meta charset="utf-8">\
<title>{html.escape(head_title)} | Copper Pot</title>
<style>.card{{border:1px solid #ccc}}</style></head><body>
<div id="wrapper">{COOKIE}\
<div id="header"><div class="brand"><a href="/">Copper Pot</a><span>Slow cooking for busy people</span></div>
<div id="menu"><a href="/">Recipes</a> | <a href="/about">About Marta</a> | <a href="/shop">\
Shop</a> | <a href="/contact">Contact</a></div>
<form class="search" action="/search"><input name="q" placeholder="Search recipes"><button>Go</button></form></div>
<div id="content"><div id="main">{body}</div>
<div id="sidebar"><div class="about-me"><h4>Hi, I am Marta</h4><p>I cook, I write, I wash far too many pots.</p></div>
<div class="popular"><h4>Popular this week</h4><ul>{popular}</ul></div>
<div class="follow"><h4>Follow along</h4>\
<a href="#">Instagram</a> <a href="#">Pinterest</a> <a href="#">RSS</a></div></div></div>
<div id="footer">Copper Pot &copy; 2026 &middot; <a href="/privacy">Privacy</a> &middot; <a href="/disclosure">\
Affiliate disclosure</a><br>
Made with butter and patience.</div></div></body></html>"""

        for i, (url, t) in enumerate(recipes):
            rng = random.Random(f"recipes/body/{i}")
            ingredients = "".join(f"<li>{rng.randint(1, 500)} g {rng.choice(WORDS)}</li>"
                                  for _ in range(rng.randint(5, 10)))
            steps = "".join(f"<li>{sentence(rng)}</li>" for _ in range(rng.randint(4, 8)))
            prev_next = (f'<div class="pager"><a href="{recipes[i - 1][0]}">&laquo; Previous recipe</a> '
                         f'<a href="{recipes[(i + 1) % self.n][0]}">Next recipe &raquo;</a></div>')
            body = f"""<div class="post"><h1 class="post-title">{html.escape(t)}</h1>
<div class="post-meta">Posted in <a href="/">Dinner</a> &middot; {rng.randint(2, 40)} comments</div>
<div class="post-body"><p>{paragraph(rng)}</p><p>{paragraph(rng)}</p>
<div class="card"><h3>Ingredients</h3><ul>{ingredients}</ul><h3>Method</h3><ol>{steps}</ol>
<p class="notes"><b>Notes:</b> {sentence(rng)}</p></div></div>
<div class="jump"><a href="#top">Jump to top</a> <a href="#" onclick="print()">Print recipe</a></div>
{prev_next}</div>{comments(rng, rng.randint(0, 5))}"""
            self.pages[url] = page(body, t)
        cards = "".join(f'<div class="teaser"><a href="{u}">{html.escape(t)}</a></div>' for u, t in recipes)
        self.pages["/"] = page(f"<h1>All recipes</h1>{cards}", "Recipes")
        self._about_pages(page, "about shop contact privacy disclosure")

    # -- Lantern Docs: software documentation -------------------------------

    def _build_docs(self) -> None:
        chapters = ["guide", "reference", "howto"]
        docs = []
        for i in range(self.n):
            rng = random.Random(f"docs/{i}")
            docs.append((f"/docs/{chapters[i % 3]}/{rng.choice(WORDS)}-{i}.html", title(rng), chapters[i % 3]))

        def page(body: str, head_title: str, current: str = "") -> str:
            tree = "".join(
                f'<li><span class="chapter">{c.title()}</span><ul>'
                + "".join(f'<li class="{"current" if u == current else ""}"><a href="{u}">{html.escape(t)}</a></li>'
                          for u, t, ch in docs if ch == c)
                + "</ul></li>" for c in chapters)
            return f"""<!DOCTYPE html><html><head><meta charset="utf-8">\
<title>{html.escape(head_title)} &mdash; Lantern 4.2 documentation</title></head>
<body><div class="announcement">Lantern 4.2 is out! <a href="/docs/guide/">Read what is new</a>.</div>
<div class="topnav">\
<a href="/">Lantern</a> <a href="/docs/guide/">Docs</a> <a href="/blog">Blog</a> <a href="/community">Community</a>
<select><option>v4.2</option><option>v4.1</option><option>v3.9</option></select></div>
<div class="document"><div class="sphinxsidebar"><h3>Table of contents</h3><ul class="toc">{tree}</ul>
<div class="searchbox"><input type="text"><button>Search</button></div></div>
<div class="body" role="main">{body}</div></div>
<div class="footer">\
&copy; Copyright 2026, the Lantern developers. Built with a documentation tool. <a href="/docs/license.html">\
License</a></div></body></html>"""

        for i, (url, t, ch) in enumerate(docs):
            rng = random.Random(f"docs/body/{i}")
            sections = "".join(
                f"<h2>{title(rng)}</h2><p>{paragraph(rng)}</p>"
                f"<pre><code>lantern {rng.choice(WORDS)} --{rng.choice(WORDS)}={rng.randint(1, 99)}\n"
                f"lantern {rng.choice(WORDS)}</code></pre>" for _ in range(rng.randint(2, 4)))
            nav = (f'<div class="related-pages"><a href="{docs[i - 1][0]}">Previous: {html.escape(docs[i - 1][1])}</a> '
                   f'<a href="{docs[(i + 1) % self.n][0]}">Next: {html.escape(docs[(i + 1) % self.n][1])}</a></div>')
            body = (f'<div class="breadcrumbs"><a href="/">Docs</a> &raquo; {ch.title()}</div><h1>{html.escape(t)}</h1>'
                    f"<p>{paragraph(rng)}</p>{sections}{nav}"
                    '<div class="feedback">Was this page helpful? <button>Yes</button> <button>No</button></div>')
            self.pages[url] = page(body, t, url)
        self.pages["/"] = page("<h1>Lantern documentation</h1><p>Start with the guide.</p>", "Home")
        self.pages["/docs/guide/"] = self.pages["/"]
        self._about_pages(page, "blog community docs/license.html")

    def _about_pages(self, page, paths: str) -> None:
        """The pages the template links to (about, privacy, ...), so that a
        crawl meets no broken links."""
        for path in paths.split():
            rng = random.Random(f"{self.key}/{path}")
            name = path.split("/")[-1].split(".")[0].title()
            self.pages[f"/{path}"] = page(f"<h1>{name}</h1><p>{paragraph(rng)}</p><p>{paragraph(rng)}</p>", name)


SITES = ("news", "recipes", "docs")
STYLE = "body { font-family: Georgia, serif; max-width: 60em; margin: auto }\n"


def png(seed: int) -> bytes:
    """A small PNG picture (8 x 8, one colour), for the pages' images."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rgb = bytes(((seed * 67) % 256, (seed * 131) % 256, (seed * 29) % 256))
    raw = b"".join(b"\0" + rgb * 8 for _ in range(8))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class _Handler(BaseHTTPRequestHandler):
    site: DemoSite

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?")[0].split("#")[0]
        body = self.site.pages.get(path)
        kind = "text/html; charset=utf-8"
        data = body.encode("utf-8") if body is not None else None
        if path == "/robots.txt":
            data, kind = b"User-agent: *\nAllow: /\n", "text/plain; charset=utf-8"
        elif path.startswith("/static/") and path.endswith(".css"):
            data, kind = STYLE.encode(), "text/css; charset=utf-8"
        elif (m := re.fullmatch(r"/img/(\d+)\.png", path)) is not None:
            data, kind = png(int(m.group(1))), "image/png"
        if data is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def serve(first_port: int, n_articles: int = 36) -> list[tuple[str, ThreadingHTTPServer]]:
    """Start one server per site on 127.0.0.1 from ``first_port`` on (0: any
    free ports), in daemon threads; returns (start URL, server) pairs."""
    out = []
    for k, key in enumerate(SITES):
        handler = type(f"{key}Handler", (_Handler,), {"site": DemoSite(key, n_articles)})
        server = ThreadingHTTPServer(("127.0.0.1", first_port + k if first_port else 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out.append((f"http://127.0.0.1:{server.server_address[1]}/", server))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Serve the demo website.")
    ap.add_argument("--port", type=int, default=8701)
    args = ap.parse_args()
    servers = serve(args.port)
    print("serving", " ".join(u for u, _ in servers), "- Ctrl-C to stop")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
