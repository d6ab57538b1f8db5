"""A spider middleware that gives items the page they came from."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from itemadapter import ItemAdapter, is_item
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from w3lib.encoding import http_content_type_encoding

from ._handoff import PageOrigin, handoff
from ._limits import binary_kind
from ._loading import decode_page, lossy_decoding
from ._settings import enabled, read_settings
from ._urls import site_of_url

__all__ = ["DeboilerSpiderMiddleware"]

logger = logging.getLogger(__name__)

#: Hosts remembered for logging a wrong declared encoding once each; beyond
#: them (a broad crawl) the log lines are DEBUG and the stat counts.
_MAX_FALLBACK_HOSTS = 10_000


def _forget_tree(response: Response | None) -> None:
    """Drop the parsed tree a response caches (Scrapy's TextResponse keeps it
    in ``_cached_selector`` and builds it again when asked)."""
    if isinstance(response, TextResponse):
        try:
            response._cached_selector = None
        except AttributeError:  # another Scrapy: nothing to drop
            pass


def _lacks(value: Any) -> bool:
    """An item lacks a field that is missing, None or empty: dataclass and
    attrs items declare ``url: str = ""`` as often as ``= None``."""
    return value is None or value == "" or value == b""


class DeboilerSpiderMiddleware(BaseSpiderMiddleware):
    """Adds the response's URL and HTML to items that lack them, so spiders
    need not carry HTML for the pipeline. Only HTML responses give HTML
    (JSON, XML and text bodies are not pages to clean, and would only end
    up in the exported items). The HTML is Scrapy's decoded
    ``response.text`` (no copy is kept beyond the item), unless that
    decoding lost characters or markup, or garbled UTF-8 as a one-byte
    encoding (a wrong declared encoding): then
    the page is decoded again from its bytes (``_loading.decode_page``) and
    the item's status notes say so."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        s = crawler.settings
        if not enabled(s):
            raise NotConfigured("DEBOILER_ENABLED is off")
        cfg = read_settings(s, check_paths=False)
        self.url_field = cfg.url_field
        self.html_field = cfg.html_field
        self.status_field = cfg.status_field
        self.stats = crawler.stats
        self._unwritable: set[type] = set()
        #: What it tells the crawl's pipeline (``_handoff``).
        self.handoff = handoff(crawler)
        self._decoded: tuple[Response, str, list[str]] | None = None
        #: Hosts whose wrong declared encoding has been logged at INFO.
        self._fallback_hosts: set[str] = set()

    def _html(self, response: HtmlResponse) -> tuple[str, list[str]]:
        """The response's HTML and decoding notes, worked out once for all
        the items of a response."""
        if self._decoded is not None and self._decoded[0] is response:
            # still recent while its items come
            self.handoff.remember(self._decoded[1], PageOrigin(response.url, tuple(self._decoded[2])))
            return self._decoded[1], self._decoded[2]
        text = response.text
        notes: list[str] = []
        if lossy_decoding(response.body, text, response.encoding) and binary_kind(response.body) is None:
            declared = http_content_type_encoding(
                (response.headers.get(b"Content-Type") or b"").decode("latin-1"))
            text, encoding, notes = decode_page(response.body, declared)
            self.stats.inc_value("deboiler/middleware/encoding_fallback")
            host = site_of_url(response.url)
            if host in self._fallback_hosts or len(self._fallback_hosts) >= _MAX_FALLBACK_HOSTS:
                level = logging.DEBUG  # a misconfigured server says it on every page: once is enough
            else:
                self._fallback_hosts.add(host)
                level = logging.INFO
            logger.log(level, "deboiler: %s: Scrapy's decoding (%s) lost or garbled characters; read as %s (%s)%s",
                       response.url, response.encoding, encoding, ", ".join(notes),
                       "; the host's other pages so decoded are counted in "
                       "deboiler/middleware/encoding_fallback" if level == logging.INFO else "")
        self._decoded = (response, text, notes)
        self.handoff.remember(text, PageOrigin(response.url, tuple(notes)))
        return text, notes

    # Held items keep their response alive (Scrapy's scraper slot refers to
    # it until every item of it is through the pipelines), and with it the
    # parsed tree the spider's css()/xpath() and link extractors cached: about
    # 2.3 times the page's HTML again (150 KB for a 66 KB page, 32 KB for a
    # 2 KB one). Once the callback's output is all through here nothing in
    # the spider uses it; anything later that asks parses the page again.
    def process_spider_output(self, response: Response | None, result: Iterable[Any],
                              spider: Any = None) -> Iterable[Any]:
        yield from super().process_spider_output(response, result)
        _forget_tree(response)

    async def process_spider_output_async(self, response: Response | None, result: AsyncIterator[Any],
                                          spider: Any = None) -> AsyncIterator[Any]:
        async for o in super().process_spider_output_async(response, result):
            yield o
        _forget_tree(response)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is None or not is_item(item):
            return item
        if not isinstance(response, HtmlResponse):
            self.stats.inc_value("deboiler/middleware/not_html")
            try:  # tell the pipeline why there is no HTML: nothing is misconfigured
                if ItemAdapter(item).get(self.html_field) is None:
                    ctype = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
                    self.handoff.mark_not_html(item, ctype.split(";")[0].strip() or None)
            except (KeyError, TypeError, AttributeError):
                pass
            return item
        adapter = ItemAdapter(item)
        failed: list[tuple[str, str]] = []  # (field, the setting that names it)
        error: Exception | None = None
        try:
            if _lacks(adapter.get(self.url_field)):
                adapter[self.url_field] = response.url
        except (KeyError, TypeError, AttributeError) as e:
            failed, error = [(self.url_field, "DEBOILER_URL_FIELD")], e
        try:
            held = adapter.get(self.html_field)
            if _lacks(held):
                html, _ = self._html(response)  # its notes go to the pipeline with it (``handoff``)
                adapter[self.html_field] = html
            elif (isinstance(held, str) and held is response.text  # not a decoding for bytes
                  and lossy_decoding(response.body, held, response.encoding)
                  and binary_kind(response.body) is None):
                # The spider's own ``html=response.text`` (Scrapy caches the
                # string) that lost the page's characters (a server declaring
                # the wrong charset): the bytes read again.
                adapter[self.html_field], _ = self._html(response)
        except (KeyError, TypeError, AttributeError) as e:
            failed, error = [*failed, (self.html_field, "DEBOILER_HTML_FIELD")], error or e
        if failed and type(item) not in self._unwritable:
            self._unwritable.add(type(item))
            logger.warning("deboiler: cannot add %s to %s items (%s); declare %s or set %s",
                           " and ".join(repr(f) for f, _ in failed), type(item).__name__, error,
                           "them" if len(failed) > 1 else "it", " / ".join(n for _, n in failed))
        return item
