"""Real crawls for the tests: local HTTP servers and a link-following spider."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import ProcessProtocol
from twisted.web.resource import Resource
from twisted.web.server import Site

from sitegen import site_pages

REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


class Pages(Resource):
    isLeaf = True

    def __init__(self, pages: dict[str, str | bytes], types: dict[str, str] | None = None,
                 on_request=None) -> None:
        super().__init__()
        self.pages = pages
        self.types = types or {}
        self.on_request = on_request
        self.served = 0

    def render_GET(self, request):
        self.served += 1
        if self.on_request is not None:
            self.on_request(self)
        path = request.path.decode()
        html = self.pages.get(path)
        if html is None:
            request.setResponseCode(404)
            return b"not found"
        if path in self.types:
            request.setHeader(b"content-type", self.types[path].encode())
            return html if isinstance(html, bytes) else html.encode("utf-8")
        if isinstance(html, bytes):  # served as they are, declared HTML
            request.setHeader(b"content-type", b"text/html")
            return html
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        return html.encode("utf-8")


def serve_site(n_pages: int, name: str = "site", paragraphs: int = 5,
               also_link: list[str] = (), extra_pages: dict[str, bytes] | None = None,
               types: dict[str, str] | None = None, transform=None, on_request=None,
               ) -> tuple[str, object]:
    """Serve ``n_pages`` generated pages and an index linking to them (and,
    interleaved, to ``also_link``; then to ``extra_pages``, path -> body) on
    127.0.0.1; returns the index URL and the listening port. ``types``:
    Content-Type headers by path; ``transform(html) -> str | bytes``
    rewrites each generated page; ``on_request(resource)`` is called for
    every request (``resource.served`` counts them)."""
    pages: dict[str, str | bytes] = dict(extra_pages or {})
    links = []
    for i, (url, html, _) in enumerate(site_pages(name, n_pages, paragraphs=paragraphs)):
        path = url.split(name, 1)[1]
        pages[path] = transform(html) if transform is not None else html
        links.append(f'<li><a href="{path}">page {i}</a></li>')
        if i < len(also_link):
            links.append(f'<li><a href="{also_link[i]}">elsewhere {i}</a></li>')
    links += [f'<li><a href="{path}">extra</a></li>' for path in extra_pages or ()]
    pages["/"] = f"<html><body><h1>{name}</h1><ul>{''.join(links)}</ul></body></html>"
    port = reactor.listenTCP(0, Site(Pages(pages, types, on_request)), interface="127.0.0.1")
    return f"http://127.0.0.1:{port.getHost().port}/", port


class SiteSpider(scrapy.Spider):
    """Follows the index's links; one item per article page."""

    name = "site"
    custom_settings = {"DEPTH_LIMIT": 1}

    def __init__(self, *args, close_after: int | None = None, items_per_page: int = 1,
                 item_type=dict, html_chars: int | None = None, same_url: bool = False,
                 detail_urls: bool = False, relative_urls: bool = False,
                 body: str | None = None, then: list[str] = (), read_title: bool = False,
                 follow: str = r"/articles/", lang_sites: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.lang_sites = lang_sites  # items name their site: host and <html lang> ("site")
        self.follow = follow  # which of the index's links to follow (a regex)
        self.read_title = read_title  # items carry the page's <title>, read with css()
        self.then = list(then)  # URLs requested once the start URLs are parsed
        self.html_chars = html_chars  # items carry only this much of the page
        self.item_type = item_type
        self.close_after = close_after
        self.items_per_page = items_per_page
        self.same_url = same_url  # all items of a page carry its URL (listings)
        self.detail_urls = detail_urls  # each item carries a URL of its own (a catalogue's detail links)
        self.relative_urls = relative_urls  # items carry the page's path only
        # "text": items carry response.text ("text+": a copy of it);
        # "bytes:ENC": the body as bytes with ENC as its declared encoding.
        self.body = body
        self.yielded = 0

    def parse(self, response):
        if response.url.endswith("/"):
            yield from response.follow_all(LinkExtractor(allow=self.follow, deny_extensions=[])
                                           .extract_links(response))
            return
        if self.then and response.url in self.start_urls and response.url == self.start_urls[-1]:
            yield from (scrapy.Request(u, priority=-1) for u in self.then)
        if self.close_after is not None and self.yielded >= self.close_after:
            raise scrapy.exceptions.CloseSpider("enough")
        for k in range(self.items_per_page):
            self.yielded += 1
            url = response.url if k == 0 or self.same_url else f"{response.url}#{k}"
            if self.detail_urls:
                url = f"{response.url.rsplit('/', 1)[0]}/products/{self.yielded}.html"
            if self.relative_urls:
                url = "/" + url.split("/", 3)[3]
            item = self.item_type(url=url, n=self.yielded)
            if self.lang_sites:
                item["site"] = f"{urlsplit(response.url).netloc}/{response.xpath('/html/@lang').get('')}"
            if self.read_title:
                item["title"] = response.css("title::text").get()
            if self.html_chars is not None:
                item["html"] = response.text[:self.html_chars]
            if self.body == "text":
                item["html"] = response.text
            elif self.body == "text+":  # a spider that edits it: another string
                item["html"] = response.text + "\n"
            elif self.body is not None and self.body.startswith("bytes:"):
                item["html"] = response.body
                item["encoding"] = self.body[len("bytes:"):]
            yield item


def settings(tmp_path: Path, **extra) -> dict:
    s = {
        "TWISTED_REACTOR": REACTOR,
        "ITEM_PIPELINES": {"scrapy_deboiler.DeboilerPipeline": 800},
        "SPIDER_MIDDLEWARES": {"scrapy_deboiler.DeboilerSpiderMiddleware": 800},
        "DEBOILER_SIGNATURES_DIR": str(tmp_path / "signatures"),
        "DEBOILER_MIN_PAGES": 5,
        "DEBOILER_WATCHDOG_INTERVAL": 0.1,
        "FEEDS": {str(tmp_path / "items.jsonl"): {"format": "jsonlines"}},
        "LOG_LEVEL": "INFO",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 8,
    }
    # Crawls run as users run them: DEBOILER_PROCESSES's default (a worker
    # process on 2+ cores). Tests whose injected faults must reach the
    # cleaning set 0 (the threads); DEBOILER_TEST_PROCESSES runs them all so.
    if "DEBOILER_TEST_PROCESSES" in os.environ:
        s["DEBOILER_PROCESSES"] = int(os.environ["DEBOILER_TEST_PROCESSES"])
    s.update(extra)
    return s


class Hung(AssertionError):
    pass


async def crawl(tmp_path: Path, start_urls: list[str], guard: float = 60, spider_kwargs=None,
                on_signal=None, **extra):
    """Run one crawl to its end; returns (crawler, items in the feed).

    A crawl still running after ``guard`` seconds is forced to stop (held
    items released by the pipeline's close path) and the test fails.
    """
    runner = CrawlerRunner(settings(tmp_path, **extra))
    crawler = runner.create_crawler(SiteSpider)
    if on_signal is not None:
        crawler.signals.connect(on_signal[0], signal=on_signal[1])
    hung = []

    def force_stop():
        hung.append(True)
        for mw in crawler.engine.scraper.itemproc.middlewares:
            if hasattr(mw, "_spider_closed"):
                deferred_from_coro(mw._spider_closed(crawler.spider))
        deferred_from_coro(crawler.stop_async())

    timer = reactor.callLater(guard, force_stop)
    try:
        await runner.crawl(crawler, start_urls=start_urls, **(spider_kwargs or {}))
    finally:
        if timer.active():
            timer.cancel()
    if hung:
        raise Hung(f"crawl did not end within {guard}s")
    feed = tmp_path / "items.jsonl"
    items = [json.loads(line) for line in feed.read_text().splitlines()] if feed.exists() else []
    return crawler, items


def stat(crawler, key: str, default=0):
    return crawler.stats.get_value(key, default)


PROJECT_SPIDER = '''
import os
import scrapy
from scrapy.linkextractors import LinkExtractor


class SiteSpider(scrapy.Spider):
    """Follows the index's links; one item per article page, each also
    written to ``yielded`` (one URL a line, flushed) as it is yielded."""

    name = "site"

    def __init__(self, start="", yielded="", pidfile="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.yielded = open(yielded, "a", buffering=1, encoding="utf-8")
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))

    def parse(self, response):
        if response.url.endswith("/"):
            yield from response.follow_all(LinkExtractor(allow=r"/articles/").extract_links(response))
            return
        self.yielded.write(response.url + "\\n")
        yield {"url": response.url}
'''


def write_project(root: Path) -> Path:
    """A Scrapy project as users have one: scrapy.cfg, settings with the
    add-on, a spider. Returns its folder (run ``scrapy crawl`` there)."""
    project = root / "project"
    (project / "demo" / "spiders").mkdir(parents=True)
    (project / "scrapy.cfg").write_text("[settings]\ndefault = demo.settings\n")
    (project / "demo" / "__init__.py").write_text("")
    (project / "demo" / "spiders" / "__init__.py").write_text("")
    (project / "demo" / "spiders" / "site.py").write_text(PROJECT_SPIDER)
    (project / "demo" / "settings.py").write_text(
        'BOT_NAME = "demo"\nSPIDER_MODULES = ["demo.spiders"]\n'
        'ADDONS = {"scrapy_deboiler.Addon": 100}\n'
        f'TWISTED_REACTOR = "{REACTOR}"\nROBOTSTXT_OBEY = False\nTELNETCONSOLE_ENABLED = False\n')
    return project


class _Collect(ProcessProtocol):
    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.ended: Deferred = Deferred()

    def outReceived(self, data: bytes) -> None:  # noqa: N802
        self.out.append(data)

    errReceived = outReceived

    def processEnded(self, reason) -> None:  # noqa: N802
        self.ended.callback(reason.value.exitCode)


def run_scrapy(project: Path, args: list[str], kill_after: int = 60) -> tuple[object, _Collect]:
    """Start ``scrapy crawl ARGS`` of ``project`` under ``timeout -s KILL``,
    without blocking the reactor (the test's servers keep serving).
    Returns the process transport and its protocol (``.ended`` fires with
    the exit code, ``.out`` holds stdout and stderr)."""
    proto = _Collect()
    # The settings module named, not found from the working folder: spawning
    # without a folder change lets Twisted use posix_spawnp, not fork() in
    # this multi-threaded process.
    env = {**os.environ, "PYTHONPATH": str(project), "SCRAPY_SETTINGS_MODULE": "demo.settings"}
    transport = reactor.spawnProcess(
        proto, "timeout", ["timeout", "-s", "KILL", str(kill_after), sys.executable, "-m", "scrapy",
                           "crawl", *args], env=env)
    return transport, proto
