"""The orjson JSON and JSON Lines exporters: the same JSON values as
Scrapy's, in unit tests against Scrapy's own exporters and in real crawls'
feeds, where the add-on sets them unless the project names its own."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import io
import json
import math
import uuid
from decimal import Decimal

import pytest
import pytest_twisted
import scrapy
from scrapy.exporters import JsonItemExporter, JsonLinesItemExporter

from crawling import crawl, serve_site
from scrapy_deboiler import FastJsonItemExporter, FastJsonLinesItemExporter
from test_pipeline import close


class Product(scrapy.Item):
    name = scrapy.Field()
    price = scrapy.Field()


@dataclasses.dataclass
class Point:
    x: int
    y: float


class Tag(str):
    pass


@dataclasses.dataclass
class Money:
    amount: float


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


ITEMS = [
    {"url": "http://a.example/", "clean_text": "Grüße \"quoted\" back\\slash\ttab\nline \u2028 \x01 \U0001f600 " * 50},
    {"nested": {"list": [1, 2.5, None, True, {"deep": ["x"]}], "empty": {}}, "tuple": (1, 2)},
    {"when": datetime.datetime(2026, 11, 25, 3, 4, 5), "day": datetime.date(2026, 11, 25),
     "time": datetime.time(3, 4, 5), "price": Decimal("19.90"), "tags": {"b"}},
    {"product": Product(name="lamp", price=Decimal("3.5")), "point": Point(1, 2.0), "tag": Tag("t")},
    {"keys": {1: "int", 2.5: "float", None: "none"}, "bools": {True: "yes", False: "no"}},
    {"big": 2 ** 70, "small": -(2 ** 63)},  # over 64 bits: Scrapy's encoder writes it
    {"nan": float("nan"), "inf": [float("-inf")]},  # NaN, Infinity: as Scrapy writes them
    {"floats": [0.1, 1e16, 1.5e-7, -0.0, 123456789.123]},
    # Non-finite floats below what Scrapy's default turns into JSON (found by a user trial).
    {"money": Money(float("nan")), "set": {float("inf")}, "ordered": collections.OrderedDict(a=float("nan")),
     "item": Product(name="x", price=float("-inf"))},
    {"keys": {float("nan"): 1, float("inf"): 2, 2.5e-05: 3, 1e-07: 4, 1e16: 5}},  # float keys: Scrapy's repr
    {"level": Level.HIGH, "counter": collections.Counter("aab")},
]
#: Items Scrapy's encoder refuses (orjson would write them).
REFUSED = [{"id": uuid.UUID(int=5)}, {"colour": Colour.RED}, {"by_day": {datetime.date(2026, 1, 1): 3.5}},
           {"bytes": b"\xff"}, {"text": "lone \ud800 surrogate"}]


def export(cls, items, **kwargs) -> bytes:
    f = io.BytesIO()
    exporter = cls(f, **kwargs)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return f.getvalue()


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("kwargs", [{"encoding": "utf-8"}, {"encoding": "UTF_8"}, {},
                                    {"encoding": "latin-1"}, {"encoding": "utf-8", "indent": 2}])
def test_the_lines_hold_what_scrapys_exporter_writes(kwargs):
    items = ITEMS
    if kwargs.get("encoding") == "latin-1":  # text latin-1 can hold
        items = [dict(i, clean_text="Grüße") if "clean_text" in i else i for i in ITEMS]
    ours = export(FastJsonLinesItemExporter, items, **kwargs).splitlines()
    theirs = export(JsonLinesItemExporter, items, **kwargs).splitlines()
    assert len(ours) == len(theirs) == len(items)
    encoding = kwargs.get("encoding") or "ascii"
    for a, b in zip(ours, theirs):
        assert same(json.loads(a.decode(encoding)), json.loads(b.decode(encoding))), (a[:200], b[:200])
    if kwargs in ({"encoding": "utf-8"}, {"encoding": "UTF_8"}):
        assert ours[0] != theirs[0]  # written by orjson (spacing), not handed to Scrapy's encoder
    else:
        assert ours == theirs  # ASCII escapes, another encoding or indentation: Scrapy's own


@pytest.mark.parametrize("kwargs", [{"encoding": "utf-8"}, {"encoding": "utf-8", "indent": 0}, {},
                                    {"encoding": "latin-1"}, {"encoding": "utf-8", "indent": 2}])
def test_the_json_array_holds_what_scrapys_exporter_writes(kwargs):
    items = ITEMS
    if kwargs.get("encoding") == "latin-1":
        items = [dict(i, clean_text="Grüße") if "clean_text" in i else i for i in ITEMS]
    ours = export(FastJsonItemExporter, items, **kwargs)
    theirs = export(JsonItemExporter, items, **kwargs)
    encoding = kwargs.get("encoding") or "ascii"
    assert same(json.loads(ours.decode(encoding)), json.loads(theirs.decode(encoding)))
    assert len(json.loads(ours.decode(encoding))) == len(items)
    if kwargs.get("encoding") == "utf-8" and not kwargs.get("indent"):
        assert ours != theirs and ours.count(b"\n") == theirs.count(b"\n")  # orjson's spacing, Scrapy's lines
    else:
        assert ours == theirs


@pytest.mark.parametrize("item", REFUSED, ids=lambda i: next(iter(i)))
def test_what_scrapy_cannot_write_fails_as_it_does(item):
    errors = []
    for cls in (FastJsonLinesItemExporter, JsonLinesItemExporter, FastJsonItemExporter, JsonItemExporter):
        with pytest.raises(Exception) as raised:
            export(cls, [item], encoding="utf-8")
        errors.append(raised.type)
    assert len(set(errors)) == 1


@pytest.mark.parametrize("options", [{"sort_keys": True}, {"ensure_ascii": True}, {"allow_nan": False},
                                     {"separators": (",", ":")}], ids=lambda o: next(iter(o)))
def test_encoder_options_from_item_export_kwargs_are_scrapys(options):
    """``item_export_kwargs`` reach Scrapy's encoder: such feeds are written
    by it, byte for byte."""
    items = [{"b": 1, "a": "café 咖啡"}, *ITEMS[:3]]
    for fast, scrapys in ((FastJsonLinesItemExporter, JsonLinesItemExporter),
                          (FastJsonItemExporter, JsonItemExporter)):
        assert export(fast, items, encoding="utf-8", **options) == export(scrapys, items, encoding="utf-8", **options)


ADDON = {"ITEM_PIPELINES": {}, "SPIDER_MIDDLEWARES": {}, "ADDONS": {"scrapy_deboiler.Addon": 100},
         "FEED_EXPORT_ENCODING": "utf-8"}


@pytest.mark.parametrize("fast, own_jsonlines", [(True, False), (True, True), (False, False)])
@pytest_twisted.ensureDeferred
async def test_the_addon_writes_json_feeds_through_orjson_when_asked_unless_the_project_names_its_exporter(
        tmp_path, fast, own_jsonlines):
    """Scrapy's exporters stay unless DEBOILER_FAST_EXPORTERS asks for the
    orjson ones; a format the project names its own exporter for keeps it."""
    a, pa = serve_site(6, "alpha")
    own = {"FEED_EXPORTERS": {"jsonlines": "scrapy.exporters.JsonLinesItemExporter"}} if own_jsonlines else {}
    try:
        crawler, items = await crawl(tmp_path, [a], DEBOILER_MIN_PAGES=3, FEEDS={
            str(tmp_path / "items.jsonl"): {"format": "jsonlines"},
            str(tmp_path / "items.json"): {"format": "json"}}, DEBOILER_FAST_EXPORTERS=fast, **ADDON, **own)
    finally:
        close(pa)
    assert len(items) == 6 and all(i["deboiler"]["status"] == "cleaned" for i in items)
    array = (tmp_path / "items.json").read_bytes()
    assert sorted(json.loads(array), key=lambda i: i["url"]) == sorted(items, key=lambda i: i["url"])
    assert (b'{"url":"' in array and b'{"url": "' not in array) is fast  # orjson's spacing
    lines = (tmp_path / "items.jsonl").read_bytes()
    ours = fast and not own_jsonlines
    assert (b'{"url": "' in lines) is not ours and (b'{"url":"' in lines) is ours


def test_the_addon_leaves_the_feeds_alone_when_deboiler_is_off():
    from scrapy.settings import Settings

    from scrapy_deboiler import Addon

    for value, ours in ((False, False), ("0", False), (True, True), ("maybe", False)):
        settings = Settings({"DEBOILER_ENABLED": value, "DEBOILER_FAST_EXPORTERS": True})
        Addon().update_settings(settings)
        assert (settings.getwithbase("FEED_EXPORTERS")["jsonlines"] is FastJsonLinesItemExporter) is ours, value
