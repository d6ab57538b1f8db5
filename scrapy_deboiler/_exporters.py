"""JSON and JSON Lines feed exporters for items carrying whole pages of text.

Scrapy's JSON exporters escape strings with the standard library's encoder,
about 2 ns a character on Python 3.9-3.13: an item with ``clean_html`` and
``clean_text`` of a 66 KB page (127 KB of strings) costs 0.3-0.6 ms on the
crawl's one thread, 6-9 % of a crawl of such pages (docs/pipeline.md).
orjson writes the same item in about 5 us. The add-on makes these the
``json``, ``jsonlines``, ``jsonl`` and ``jl`` exporters unless the project
names its own for a format.

The output holds the same JSON values as Scrapy's exporters write (what
Scrapy's ``ScrapyJSONEncoder`` turns dates, decimals, sets and items into
is asked of it, as Scrapy does); only the spacing differs (``{"a":1}``
rather than ``{"a": 1}``). An item orjson cannot write as Scrapy would
(integers over 64 bits, NaN, lone surrogates, subclasses of str and int)
is written by Scrapy's encoder, as are whole feeds that Scrapy indents or
writes in an encoding other than UTF-8 (or in ASCII escapes, Scrapy's
default when ``FEED_EXPORT_ENCODING`` is not set): those are byte-identical
to Scrapy's.
"""

from __future__ import annotations

import math
from typing import Any

import orjson
from scrapy.exporters import JsonItemExporter, JsonLinesItemExporter
from scrapy.utils.python import to_bytes

__all__ = ["FastJsonItemExporter", "FastJsonLinesItemExporter"]

#: orjson writes these as Scrapy's encoder would (dates and the rest go to
#: Scrapy's ``default``; subclasses of str, int and dict too).
_OPTIONS = (orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_NON_STR_KEYS)


def _utf8(encoding: str | None) -> bool:
    return (encoding or "").replace("_", "-").lower() in ("utf-8", "utf8")


class _OrjsonEncoding:
    """What both exporters share: the item's JSON through orjson, or None
    where Scrapy's encoder must write it."""

    encoder: Any
    _fast: bool

    def _orjson(self, itemdict: dict[str, Any]) -> bytes | None:
        if not self._fast:
            return None
        try:
            data = orjson.dumps(itemdict, default=self.encoder.default, option=_OPTIONS)
        except (TypeError, orjson.JSONEncodeError):  # big integers, lone surrogates ...
            return None
        return None if _has_non_finite(itemdict) else data


class FastJsonLinesItemExporter(_OrjsonEncoding, JsonLinesItemExporter):
    """``JsonLinesItemExporter`` through orjson. The add-on sets it; without
    the add-on, per format::

        FEED_EXPORTERS = {"jsonlines": "scrapy_deboiler.FastJsonLinesItemExporter",
                          "jl": "scrapy_deboiler.FastJsonLinesItemExporter"}
    """

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        # orjson writes UTF-8 and no indentation: anything else is Scrapy's.
        self._fast = _utf8(self.encoding) and not self.indent

    def export_item(self, item: Any) -> None:
        itemdict = dict(self.get_serialized_fields(item))
        data = self._orjson(itemdict)
        if data is None:
            data = to_bytes(self.encoder.encode(itemdict) + "\n", self.encoding)
        else:
            data += b"\n"
        self.file.write(data)


class FastJsonItemExporter(_OrjsonEncoding, JsonItemExporter):
    """``JsonItemExporter`` (``-O items.json``) through orjson, for feeds
    Scrapy writes an item a line (``FEED_EXPORT_INDENT`` 0 or None, the
    default); indented ones are Scrapy's."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._fast = _utf8(self.encoding) and not self.indent

    def export_item(self, item: Any) -> None:
        itemdict = dict(self.get_serialized_fields(item))
        data = self._orjson(itemdict)
        if data is None:
            data = to_bytes(self.encoder.encode(itemdict), self.encoding)
        self._add_comma_after_first()
        self.file.write(data)


def _has_non_finite(value: Any) -> bool:
    """Whether ``value`` holds a float that is not finite: orjson writes
    null for it, Scrapy's encoder ``NaN`` or ``Infinity`` (the item is then
    written by Scrapy's encoder, as it would be without this exporter).
    Iterative: items nest as deep as their spiders make them."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is float:
            if not math.isfinite(v):
                return True
        elif t is dict:
            stack.extend(v.values())
        elif t is list or t is tuple:
            stack.extend(v)
    return False
