"""What the spider middleware tells the pipeline of the same crawl, beside
the items: the response a page's HTML came from (its URL: a listing's items
carry their detail links as ``url``, and their page is still one page, placed
by where it was fetched), how it was decoded (a wrong declared encoding),
and which items came from a response that is not HTML. Kept per crawler
(``handoff``): two crawls in one process never see each other's pages, and
nothing is written into the user's fields for the pipeline to read back."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

__all__ = ["Handoff", "PageOrigin", "handoff"]


@dataclass(frozen=True)
class PageOrigin:
    """Where a page's HTML came from."""

    url: str
    #: The middleware's decoding notes (``decode-errors``, ``encoding-fallback``).
    notes: tuple[str, ...] = ()


class Handoff:
    """The pages the middleware gave items lately, and the items it saw
    come from non-HTML responses. Bounded: an item reaches the pipeline
    right after the callback yields it."""

    def __init__(self, max_pages: int = 32, max_chars: int = 8_000_000, max_items: int = 1024) -> None:
        self.max_pages = max_pages
        self.max_chars = max_chars
        self.max_items = max_items
        # Keyed by the HTML itself: its hash is computed once and kept by
        # the string; a hit must be the very object (``is``), not an equal
        # page of another response.
        self._pages: OrderedDict[str | bytes, tuple[str | bytes, PageOrigin]] = OrderedDict()
        self._chars = 0
        # Items are not all hashable or weakly referable (dicts): by identity,
        # with the item kept so that its identity is not reused meanwhile.
        self._not_html: OrderedDict[int, tuple[Any, str | None]] = OrderedDict()

    def remember(self, html: str | bytes, origin: PageOrigin) -> None:
        """The middleware gave ``html`` to items of a response (again)."""
        old = self._pages.pop(html, None)
        if old is not None:
            self._chars -= len(old[0])
        self._pages[html] = (html, origin)
        self._chars += len(html)
        while len(self._pages) > 1 and (len(self._pages) > self.max_pages or self._chars > self.max_chars):
            self._chars -= len(self._pages.popitem(last=False)[1][0])

    def origin(self, html: object) -> PageOrigin | None:
        """Where ``html`` came from, if it is the very object the middleware
        gave items lately."""
        if not isinstance(html, (str, bytes)):
            return None
        hit = self._pages.get(html)
        return hit[1] if hit is not None and hit[0] is html else None

    def mark_not_html(self, item: Any, content_type: str | None) -> None:
        """``item`` came from a response that is not HTML."""
        self._not_html[id(item)] = (item, content_type)
        while len(self._not_html) > self.max_items:
            self._not_html.popitem(last=False)

    def not_html(self, item: Any) -> tuple[bool, str | None]:
        """Whether ``item`` came from a non-HTML response, and its
        Content-Type; forgets it."""
        hit = self._not_html.get(id(item))
        if hit is None or hit[0] is not item:
            return False, None
        del self._not_html[id(item)]
        return True, hit[1]


_BY_CRAWLER: WeakKeyDictionary[Any, Handoff] = WeakKeyDictionary()


def handoff(crawler: Any) -> Handoff:
    """The crawler's ``Handoff``, shared by its middleware and pipeline,
    gone with the crawler."""
    got = _BY_CRAWLER.get(crawler)
    if got is None:
        got = _BY_CRAWLER[crawler] = Handoff()
    return got
