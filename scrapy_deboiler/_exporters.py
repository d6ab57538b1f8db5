"""JSON and JSON Lines feed exporters for items carrying whole pages of text.

Scrapy's JSON exporters escape strings with the standard library's encoder,
about 2 ns a character on Python 3.9-3.13: an item with ``clean_html`` and
``clean_text`` of a 66 KB page (127 KB of strings) costs 0.3-0.6 ms on the
crawl's one thread, 6-9 % of a crawl of such pages (docs/pipeline.md).
orjson writes the same item in 10-20 us (the file's write aside). The
add-on makes these the ``json``, ``jsonlines``, ``jsonl`` and ``jl``
exporters unless the project names its own for a format.

The output holds the same JSON values as Scrapy's exporters write (what
Scrapy's ``ScrapyJSONEncoder`` turns dates, decimals, sets and items into
is asked of it, as Scrapy does); only the spacing differs (``{"a":1}``
rather than ``{"a": 1}``). An item orjson would write otherwise than
Scrapy's encoder, or write where Scrapy refuses (integers over 64 bits,
NaN and Infinity anywhere, dict keys other than strings, enums, UUIDs,
subclasses of the plain types), is left to Scrapy's encoder, as are whole
feeds that Scrapy indents, writes in an encoding other than UTF-8 (or in
ASCII escapes, its default when ``FEED_EXPORT_ENCODING`` is not set) or
with encoder options from ``item_export_kwargs``: those are byte-identical
to Scrapy's.
"""

from __future__ import annotations

import enum
import math
import uuid
from typing import Any

import orjson
from scrapy.exporters import JsonItemExporter, JsonLinesItemExporter
from scrapy.utils.python import to_bytes

__all__ = ["FastJsonItemExporter", "FastJsonLinesItemExporter"]

#: Dates, dataclasses and subclasses of str, int, dict and list go to
#: Scrapy's ``default`` (what Scrapy writes for them is asked of it there).
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS

#: What orjson writes itself but Scrapy's encoder refuses (or writes
#: otherwise): such an item is Scrapy's to write, or to refuse.
_NATIVE_ONLY: tuple[type, ...] = (enum.Enum, uuid.UUID, str, int, float, dict, list, tuple) + (
    (orjson.Fragment,) if hasattr(orjson, "Fragment") else ())

#: The encoder options Scrapy's exporters set themselves; any other (from
#: ``item_export_kwargs``: ``sort_keys``, ``separators``, ``allow_nan`` ...)
#: makes the feed Scrapy's.
_SCRAPYS_OWN = {"ensure_ascii": False, "indent": None}


class _Unwritable(TypeError):
    """What Scrapy's ``default`` gave holds a value orjson would write
    otherwise than Scrapy's encoder."""


def _utf8(encoding: str | None) -> bool:
    return (encoding or "").replace("_", "-").lower() in ("utf-8", "utf8")


def _writable(value: Any) -> bool:
    """Whether orjson writes ``value`` as Scrapy's encoder would, as far as
    its plain part goes: exact str, int, bool, None, finite floats, and
    dicts (str keys), lists and tuples of them. Other objects go to
    ``default``, whose result is checked again; but those orjson writes
    itself (enums, UUIDs, subclasses of the plain types) are not. Float
    keys and non-finite floats anywhere are Scrapy's (orjson writes them
    otherwise). Iterative: items nest as deep as their spiders make them."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            continue
        if t is float:
            if not math.isfinite(v):
                return False
        elif t is dict:
            for k in v:
                if type(k) is not str:
                    return False
            stack.extend(v.values())
        elif t is list or t is tuple:
            stack.extend(v)
        elif isinstance(v, _NATIVE_ONLY):
            return False
    return True


class _OrjsonEncoding:
    """What both exporters share: the item's JSON through orjson, or None
    where Scrapy's encoder must write it (byte for byte as without us)."""

    encoder: Any
    encoding: str | None
    indent: int | None
    _kwargs: dict[str, Any]
    #: Whether orjson writes this feed (each exporter's __init__ sets it).
    _fast: bool

    def _fast_feed(self) -> bool:
        """orjson writes UTF-8, without indentation or other encoder options."""
        return _utf8(self.encoding) and not self.indent and all(
            k in _SCRAPYS_OWN and v == _SCRAPYS_OWN[k] for k, v in self._kwargs.items())

    def _default(self, o: Any) -> Any:
        value = self.encoder.default(o)
        if not _writable(value):
            raise _Unwritable(type(o).__name__)
        return value

    def _orjson(self, itemdict: dict[str, Any], options: int = _OPTIONS) -> bytes | None:
        if not self._fast or not _writable(itemdict):
            return None
        try:
            return orjson.dumps(itemdict, default=self._default, option=options)
        except TypeError:  # JSONEncodeError: integers over 64 bits, lone surrogates, _Unwritable ...
            return None


class FastJsonLinesItemExporter(_OrjsonEncoding, JsonLinesItemExporter):
    """``JsonLinesItemExporter`` through orjson. The add-on sets it; without
    the add-on, per format::

        FEED_EXPORTERS = {"jsonlines": "scrapy_deboiler.FastJsonLinesItemExporter",
                          "jl": "scrapy_deboiler.FastJsonLinesItemExporter"}
    """

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._fast = self._fast_feed()

    def export_item(self, item: Any) -> None:
        itemdict = dict(self.get_serialized_fields(item))
        data = self._orjson(itemdict, _OPTIONS | orjson.OPT_APPEND_NEWLINE)  # no copy to add it
        if data is None:
            data = to_bytes(self.encoder.encode(itemdict) + "\n", self.encoding)
        self.file.write(data)


class FastJsonItemExporter(_OrjsonEncoding, JsonItemExporter):
    """``JsonItemExporter`` (``-O items.json``) through orjson, for feeds
    Scrapy writes an item a line (``FEED_EXPORT_INDENT`` 0 or None, the
    default); indented ones are Scrapy's."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._fast = self._fast_feed()

    def export_item(self, item: Any) -> None:
        itemdict = dict(self.get_serialized_fields(item))
        data = self._orjson(itemdict)
        if data is None:
            data = to_bytes(self.encoder.encode(itemdict), self.encoding)
        self._add_comma_after_first()
        self.file.write(data)
