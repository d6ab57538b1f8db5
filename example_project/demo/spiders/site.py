"""Crawl whole websites by following their links."""

from __future__ import annotations

from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor


class SiteSpider(scrapy.Spider):
    """``scrapy crawl site -a start_urls=URL[,URL...] [-a max_pages=N]``

    Follows every link that stays on a start URL's host and port, one item
    per HTML page: its URL and title. The scrapy-deboiler spider middleware
    adds the page's HTML, and the pipeline adds ``clean_text`` and
    ``clean_html``.
    """

    name = "site"

    def __init__(self, start_urls: str = "", max_pages: str = "500", **kwargs) -> None:
        super().__init__(**kwargs)
        self.start_urls = [u.strip() for u in start_urls.split(",") if u.strip()]
        if not self.start_urls:
            raise ValueError("give the start URLs: -a start_urls=https://example.com/")
        self.netlocs = {urlsplit(u).netloc for u in self.start_urls}
        self.links = LinkExtractor()
        self.max_pages = int(max_pages)
        self.pages = 0

    async def start(self):
        # Through the dupefilter, unlike Scrapy's own start requests: a link
        # back to a start page (a logo's) does not crawl it again, and a
        # crawl resumed from its JOBDIR does not fetch the start pages anew.
        for url in self.start_urls:
            yield scrapy.Request(url)

    def parse(self, response):
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        self.pages += 1
        yield {"url": response.url, "title": response.css("title::text").get("").strip()}
        if self.pages >= self.max_pages:
            return  # enough: follow no more links
        for link in self.links.extract_links(response):
            if urlsplit(link.url).netloc in self.netlocs:
                yield response.follow(link)
