"""A spider middleware that gives items the page they came from."""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import ItemAdapter, is_item
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

__all__ = ["DeboilerSpiderMiddleware"]

logger = logging.getLogger(__name__)


class DeboilerSpiderMiddleware(BaseSpiderMiddleware):
    """Adds the response's URL and HTML to items that lack them, so spiders
    need not carry HTML for the pipeline. The HTML is Scrapy's decoded
    ``response.text`` (no copy is kept beyond the item)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        s = crawler.settings
        if not s.getbool("DEBOILER_ENABLED", True):
            raise NotConfigured("DEBOILER_ENABLED is off")
        self.url_field = s.get("DEBOILER_URL_FIELD", "url")
        self.html_field = s.get("DEBOILER_HTML_FIELD", "html")
        self._unwritable: set[type] = set()

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if not isinstance(response, TextResponse) or not is_item(item):
            return item
        adapter = ItemAdapter(item)
        try:
            if adapter.get(self.url_field) is None:
                adapter[self.url_field] = response.url
            if adapter.get(self.html_field) is None:
                adapter[self.html_field] = response.text
        except (KeyError, TypeError, AttributeError) as e:
            if type(item) not in self._unwritable:
                self._unwritable.add(type(item))
                logger.warning("deboiler: cannot add %r and %r to %s items (%s); declare them "
                               "or set DEBOILER_URL_FIELD / DEBOILER_HTML_FIELD",
                               self.url_field, self.html_field, type(item).__name__, e)
        return item
