"""The site spider for a crawl spread over many processes (scrapy-redis)."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor

try:
    from scrapy_redis.spiders import RedisSpider
except ModuleNotFoundError as e:  # only this spider needs scrapy-redis: the
    if e.name != "scrapy_redis":  # one-process demo runs without it
        raise
    RedisSpider = None


class _NoRedis:
    """Stands in for RedisSpider when scrapy-redis is not installed: no
    ``name``, so Scrapy's spider loader leaves it out."""


class ClusterSpider(RedisSpider or _NoRedis):
    """``scrapy crawl cluster -s SCRAPY_SETTINGS_MODULE=demo.settings_cluster``

    Run it in as many processes (and machines) as you like, then push the
    start URLs to Redis once::

        redis-cli lpush cluster:start_urls '{"url": "http://127.0.0.1:8701/"}'

    Each worker takes requests from the shared queue (scrapy-redis's
    scheduler and dupefilter), follows links that stay on the page's host
    and port, and yields one item a page. scrapy-deboiler pools the pages'
    signatures in the same Redis, so every worker cleans a site with one
    model (see README, "Scaling out").
    """

    name = "cluster"
    redis_key = "cluster:start_urls"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.links = LinkExtractor()
        # scrapy-redis counts MAX_IDLE_TIME_BEFORE_CLOSE from the class's
        # import; count it from this worker's last response instead.
        self.spider_idle_start_time = int(time.time())

    def make_request_from_data(self, data: bytes) -> scrapy.Request:
        """A start URL pushed to Redis (``{"url": ...}``, or the bare URL) as
        an ordinary request: the shared dupefilter records it, so links back
        to it are not crawled again (scrapy-redis's own start requests skip
        the dupefilter, and the start pages came out twice)."""
        text = data.decode(self.redis_encoding) if isinstance(data, bytes) else str(data)
        try:
            url = json.loads(text)["url"]
        except (ValueError, KeyError, TypeError):
            url = text.strip()
        return scrapy.Request(url)

    def parse(self, response):
        self.spider_idle_start_time = int(time.time())
        if not isinstance(response, scrapy.http.HtmlResponse):
            return
        yield {"url": response.url, "title": response.css("title::text").get("").strip()}
        netloc = urlsplit(response.url).netloc
        for link in self.links.extract_links(response):
            if urlsplit(link.url).netloc == netloc:
                yield response.follow(link)
