"""Crawl throughput on full-size pages, the pipeline off and on, in one run.

    python benchmarks/bench_fullsize.py [--sites 20] [--pages 60] [--paragraphs 400]
        [--concurrency 32] [--rounds 2] [--mode content] [--spider site|index-only]
        [--set DEBOILER_THREADS=1 ...] [--scrapy-set CONCURRENT_ITEMS=8 ...]
        [--server nginx|python] [--latency 0.25] [--no-demo] [--stand-in] [--scrapy-export] [--reuse]
        [--json out.json]

Serves ``--sites`` generated sites (tests/sitegen.py pages, 400 paragraphs:
about 66 KB each; every link resolves) on 127.0.0.1, one port each, and
crawls all of them with the example project's spider (as bench_crawl.py
does; ``--spider index-only`` follows the indexes' links only, the least
work Scrapy can do a page) at ``CONCURRENT_REQUESTS`` (and per domain,
since all ports are one host to Scrapy) ``--concurrency``, each crawl in a fresh
process: without scrapy-deboiler, then with its add-on. Rounds alternate
off/on so a busy moment on the machine hurts both alike. ``--set`` gives
the crawls with the pipeline a setting, ``--scrapy-set`` gives it to every
crawl (a Scrapy setting compared at equal terms). Reports pages/s
(each round, the range and the best), the ratio on/off of the best rounds and
of the medians, and each crawl's peak RSS. ``--stand-in`` adds a third crawl
each round: a pipeline that cleans nothing and writes fields of content
mode's sizes (with scrapy-deboiler's middleware and the JSON Lines exporter
its add-on sets), the ceiling for any pipeline with this output on this
machine. ``--scrapy-export`` adds another: the pipeline on with Scrapy's own
``JsonLinesItemExporter`` for the feed instead of the add-on's (Scrapy's
escapes the fields' text at about 2 ns a character). ``--reuse`` adds a crawl
with the pipeline and the signature files the round's ``on`` crawl saved, as a
later crawl of the same sites runs: no site is fitted, no item held. Every
other crawl starts with an empty signatures folder. Then, unless ``--no-demo``, runs
benchmarks/bench_crawl.py (the demo website, small pages) for the ratio
beside it.

The sites are served by nginx (Debian's ``nginx-light``: ``apt-get install
nginx-light``) from static files when it is installed, else (or with
``--server python``) by Python threads in this process. A real crawl's
servers are other machines: on this project's 2-core machine Python's
servers took a core's share from the crawl (about 0.5 ms of CPU a 66 KB
page), nginx about a tenth of that.

Served from 127.0.0.1, pages come back at once and the crawl's CPU is the
limit. ``--latency`` makes the (Python) servers wait that many seconds
before each answer, as servers across a network do: the crawl is then
bound by ``CONCURRENT_REQUESTS`` over the latency, as real crawls mostly are.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
PROJECT = os.path.join(ROOT, "example_project")

CHILD = r"""
import json, resource, sys, time
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.project import get_project_settings

state, urls, out, sigdir, conc, mode, spider = sys.argv[1:8]
on = state in ("on", "scrapyexp", "reuse")
extra = json.loads(sys.argv[8])
common = json.loads(sys.argv[9])


class IndexSpider(scrapy.Spider):
    # Extracts links from the index pages only: Scrapy's own work per
    # article page is as small as it gets.
    name = "index-only"
    links = LinkExtractor(allow=r"/articles/")

    def parse(self, response):
        if response.url.endswith("/"):
            yield from response.follow_all(self.links.extract_links(response))
            return
        yield {"url": response.url, "title": response.css("title::text").get("")}


class FieldsOnly:
    # The stand-in: what any pipeline that writes these fields costs. No
    # cleaning: one reactor turn's wait (as an item waits for its result),
    # then the page's HTML (66 KB) as clean_html and most of it (63 KB) as
    # clean_text, about the sizes content mode writes here.

    async def process_item(self, item, spider=None):
        from twisted.internet import reactor
        from twisted.internet.defer import Deferred
        from scrapy.utils.defer import maybe_deferred_to_future

        d = Deferred()
        reactor.callLater(0, d.callback, None)
        await maybe_deferred_to_future(d)
        html = item.pop("html", "") or ""
        item["clean_text"] = html[:len(html) * 63 // 67]
        item["clean_html"] = html
        item["deboiler"] = {"status": "cleaned", "site": "stand-in", "html_chars": len(html),
                            "clean_html_chars": len(html)}
        return item


settings = get_project_settings()  # the example project's (cwd)
settings.setdict({
    "ADDONS": {"scrapy_deboiler.Addon": 100} if on else {},
    "DEBOILER_FAST_EXPORTERS": True,  # the orjson feed exporters, as measured before they became opt-in
    "DEBOILER_SIGNATURES_DIR": sigdir,
    "DEBOILER_MODE": mode,
    "FEEDS": {out: {"format": "jsonlines"}},
    "LOG_LEVEL": "WARNING",
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "CONCURRENT_REQUESTS": int(conc),
    "CONCURRENT_REQUESTS_PER_DOMAIN": int(conc),
    "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
}, priority="cmdline")
settings.setdict(common, priority="cmdline")
settings.setdict(extra if on else {}, priority="cmdline")
if state == "scrapyexp":
    settings.set("FEED_EXPORTERS", {"jsonlines": "scrapy.exporters.JsonLinesItemExporter"}, priority="cmdline")
if state == "fields":  # the middleware gives items their HTML, the stand-in the fields
    settings.set("SPIDER_MIDDLEWARES", {"scrapy_deboiler.DeboilerSpiderMiddleware": 950}, priority="cmdline")
    settings.set("FEED_EXPORTERS", {"jsonlines": "scrapy_deboiler.FastJsonLinesItemExporter"}, priority="cmdline")
    settings.set("ITEM_PIPELINES", {FieldsOnly: 300}, priority="cmdline")
process = CrawlerProcess(settings)
crawler = process.create_crawler(IndexSpider if spider == "index-only" else "site")
times = {}
def opened(**kw): times.setdefault("start", time.perf_counter())
def closed(**kw): times.setdefault("end", time.perf_counter())
crawler.signals.connect(opened, signals.spider_opened)  # signals hold handlers weakly
crawler.signals.connect(closed, signals.spider_closed)
cpu0 = time.process_time()
kwargs = {"start_urls": urls.split(",")} if spider == "index-only" else {"start_urls": urls, "max_pages": "1000000"}
process.crawl(crawler, **kwargs)
process.start()
print(json.dumps({
    "pages": crawler.stats.get_value("response_received_count", 0),
    "items": crawler.stats.get_value("item_scraped_count", 0),
    "seconds": times["end"] - times["start"],
    "cpu_seconds": time.process_time() - cpu0,
    "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "cleaned": crawler.stats.get_value("deboiler/items_cleaned", 0),
}))
"""


def site_files(n_sites: int, n_pages: int, paragraphs: int) -> list[dict[str, bytes]]:
    """Each site's pages by path: an index linking to ``n_pages - 1``
    article pages; every link resolves (related stories point at the site's
    own articles, menu and footer links at the index)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from sitegen import site_pages

    sites = []
    n = n_pages - 1
    related = re.compile(r'href="/articles/(\d+)\.html"')
    menu = re.compile(r'href="/(?:news|sport|culture|about|privacy|terms|contact)"')
    for s in range(n_sites):
        name = f"site{s:02d}"
        pages: dict[str, bytes] = {}
        links = []
        for url, html, _ in site_pages(name, n, paragraphs=paragraphs):
            path = url.split(name, 1)[1]
            html = related.sub(lambda m: f'href="/articles/{int(m.group(1)) % n:04d}.html"', html)
            pages[path] = menu.sub('href="/"', html).encode("utf-8")
            links.append(f'<li><a href="{path}">{path}</a></li>')
        pages["/"] = f"<html><body><h1>{name}</h1><ul>{''.join(links)}</ul></body></html>".encode()
        sites.append(pages)
    return sites


def serve_python(sites: list[dict[str, bytes]], latency: float = 0.0,
                 ) -> tuple[list[str], list[ThreadingHTTPServer]]:
    """One threaded server per site on free 127.0.0.1 ports, in this process."""
    urls, servers = [], []
    for pages in sites:

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Scrapy's client uses
            site = pages

            def do_GET(self) -> None:  # noqa: N802
                if latency:
                    time.sleep(latency)  # a thread a request: the others go on
                body = self.site.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls.append(f"http://127.0.0.1:{server.server_address[1]}/")
    return urls, servers


def free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in socks]
    for sock in socks:
        sock.close()
    return ports


def serve_nginx(sites: list[dict[str, bytes]], folder: str) -> tuple[list[str], subprocess.Popen]:
    """The sites as static files under ``folder``, served by one nginx
    worker on free 127.0.0.1 ports."""
    ports = free_ports(len(sites))
    servers = []
    for s, (pages, port) in enumerate(zip(sites, ports)):
        root = os.path.join(folder, f"site{s:02d}")
        for path, body in pages.items():
            file = os.path.join(root, path.lstrip("/") or "index.html")
            os.makedirs(os.path.dirname(file), exist_ok=True)
            with open(file, "wb") as f:
                f.write(body)
        servers.append(f"server {{ listen 127.0.0.1:{port}; root {root}; index index.html; }}")
    conf = os.path.join(folder, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 1; pid {folder}/nginx.pid; error_log {folder}/error.log;
{"user root;" if os.geteuid() == 0 else ""}
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; keepalive_requests 100000; default_type text/html; charset utf-8;
types {{ text/html html; }}
client_body_temp_path {folder}/tmp; proxy_temp_path {folder}/tmp; fastcgi_temp_path {folder}/tmp;
uwsgi_temp_path {folder}/tmp; scgi_temp_path {folder}/tmp;
{chr(10).join(servers)} }}
""")
    proc = subprocess.Popen([nginx_path(), "-c", conf, "-p", folder], stderr=subprocess.PIPE)
    import time
    import urllib.request

    urls = [f"http://127.0.0.1:{port}/" for port in ports]
    for _ in range(100):
        try:
            urllib.request.urlopen(urls[-1], timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"nginx failed: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
    return urls, proc


def nginx_path() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", type=int, default=20)
    ap.add_argument("--pages", type=int, default=60, help="pages a site, its index included")
    ap.add_argument("--paragraphs", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mode", default="content", choices=["content", "boilerplate"])
    ap.add_argument("--spider", default="site", choices=["site", "index-only"],
                    help="site: the example project's spider (links from every page, as "
                         "bench_crawl.py); index-only: links from the indexes only")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for the crawls with the pipeline on (repeatable)")
    ap.add_argument("--scrapy-set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for every crawl, off, on and stand-in (repeatable)")
    ap.add_argument("--server", choices=["nginx", "python"],
                    help="what serves the sites (default: nginx when installed)")
    ap.add_argument("--latency", type=float, default=0.0,
                    help="seconds the servers wait before each answer (implies --server python)")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo-site crawl")
    ap.add_argument("--stand-in", action="store_true",
                    help="also crawl with a pipeline that only writes fields of the same sizes")
    ap.add_argument("--scrapy-export", action="store_true",
                    help="also crawl with the pipeline and Scrapy's JSON Lines exporter")
    ap.add_argument("--reuse", action="store_true",
                    help="also crawl with the pipeline and the signature files of the round's on crawl")
    ap.add_argument("--json")
    args = ap.parse_args()

    extra = dict(kv.split("=", 1) for kv in args.set)
    common = dict(kv.split("=", 1) for kv in args.scrapy_set)
    sites = site_files(args.sites, args.pages, args.paragraphs)
    articles = [body for pages in sites for path, body in pages.items() if path != "/"]
    size = sum(map(len, articles)) // max(1, len(articles))
    if args.latency and args.server == "nginx":
        ap.error("--latency needs --server python (nginx answers at once)")
    server_kind = "python" if args.latency else args.server or ("nginx" if nginx_path() else "python")
    states = (("off", "on") + (("fields",) if args.stand_in else ()) + (("scrapyexp",) if args.scrapy_export else ())
              + (("reuse",) if args.reuse else ()))
    results: dict[str, list[dict]] = {m: [] for m in states}
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # nginx's worker may run as another user
        if server_kind == "nginx":
            urls, nginx = serve_nginx(sites, os.path.join(tmp, "www"))
        else:
            urls, servers = serve_python(sites, args.latency)
        try:
            for r in range(args.rounds):
                for state in states:
                    out = os.path.join(tmp, f"{state}{r}.jsonl")
                    # A fresh store for each crawl (every site is fitted, its items held
                    # until then), but --reuse's: the round's "on" crawl's signature files.
                    sigdir = os.path.join(tmp, f"sigs{r}{'on' if state == 'reuse' else state}")
                    proc = subprocess.run(
                        [sys.executable, "-c", CHILD, state, ",".join(urls), out, sigdir,
                         str(args.concurrency), args.mode, args.spider, json.dumps(extra),
                         json.dumps(common)],
                        cwd=PROJECT, capture_output=True, text=True, timeout=900)
                    if proc.returncode:
                        sys.exit(proc.stderr[-3000:])
                    res = json.loads(proc.stdout.strip().splitlines()[-1])
                    res["pages_per_s"] = res["pages"] / res["seconds"]
                    results[state].append(res)
                    print(f"round {r + 1} {state:<6}: {res['pages_per_s']:6.1f} pages/s, "
                          f"{res['seconds']:5.1f} s, CPU {res['cpu_seconds']:5.1f} s, "
                          f"peak RSS {res['max_rss_mib']:4.0f} MiB, {res['cleaned']} cleaned",
                          flush=True)
        finally:
            if server_kind == "nginx":
                nginx.terminate()
                nginx.wait()
            else:
                for server in servers:
                    server.shutdown()
    rates = {m: [x["pages_per_s"] for x in rs] for m, rs in results.items()}
    best = {m: max(v) for m, v in rates.items()}
    median = {m: statistics.median(v) for m, v in rates.items()}
    rss = {m: max(x["max_rss_mib"] for x in rs) for m, rs in results.items()}
    print(f"\n{args.sites} sites x {args.pages} pages of {size / 1000:.0f} KB, "
          f"CONCURRENT_REQUESTS={args.concurrency}, {args.mode} mode, {args.spider} spider, "
          f"{args.rounds} rounds, served by {server_kind}"
          + (f" answering after {args.latency:g} s" if args.latency else "")
          + f", on: {extra or 'defaults'}"
          + (f", every crawl: {common}" if common else ""))
    print(f"{'pipeline':<10} {'pages/s range':>16} {'best':>7} {'peak RSS MiB':>13}")
    for m in states:
        print(f"{m:<10} {min(rates[m]):>7.1f}-{max(rates[m]):<8.1f} {best[m]:>7.1f} {rss[m]:>13.0f}")
    for m in states[1:]:
        pairs = [x / off for x, off in zip(rates[m], rates["off"])]
        name = {"on": "on/off", "fields": "stand-in/off", "scrapyexp": "on, Scrapy's exporter/off",
                "reuse": "on, reusing signature files/off"}[m]
        print(f"throughput ratio {name}: best {best[m] / best['off']:.2f}, "
              f"median {median[m] / median['off']:.2f}, per round {min(pairs):.2f}-{max(pairs):.2f}")
    if args.stand_in:  # the pipeline's own share: against a crawl writing the same fields
        pairs = [x / y for x, y in zip(rates["on"], rates["fields"])]
        print(f"throughput ratio on/stand-in: median {median['on'] / median['fields']:.2f}, "
              f"per round {min(pairs):.2f}-{max(pairs):.2f}")
    demo = None
    if not args.no_demo:
        print("\ndemo website (benchmarks/bench_crawl.py):", flush=True)
        demo_json = os.path.join(tempfile.gettempdir(), f"bench_demo_{os.getpid()}.json")
        subprocess.run([sys.executable, os.path.join(HERE, "bench_crawl.py"), "--json", demo_json,
                        "--rounds", str(args.rounds)], check=True)
        with open(demo_json) as f:
            demo = json.load(f)
        os.unlink(demo_json)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "ratio_best": best["on"] / best["off"],
                       "ratio_median": median["on"] / median["off"], "page_bytes": size,
                       "stand_in_ratio_median": median["fields"] / median["off"] if args.stand_in else None,
                       "scrapy_export_ratio_median": (median["scrapyexp"] / median["off"]
                                                      if args.scrapy_export else None),
                       "reuse_ratio_median": median["reuse"] / median["off"] if args.reuse else None,
                       "server": server_kind, "latency": args.latency, "settings": extra, "every_crawl": common,
                       "demo": demo}, f, indent=2)


if __name__ == "__main__":
    main()
