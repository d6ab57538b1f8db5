"""What a page may cost, and pages that are not HTML at all.

A crawl over the open web meets PDFs, images, gzip bodies, JSON APIs, feeds
and pages built to exhaust parsers. These are recognised from their first
bytes and their size before anything is parsed, so a hostile page costs
time proportional to a scan of its bytes, never a parse of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lxml.html.defs import tags as _HTML_TAGS

__all__ = ["DEFAULT_LIMITS", "Limits", "Skip", "binary_kind", "check_page"]


@dataclass(frozen=True)
class Limits:
    """Per-page caps. Both are counted before parsing, so they bound the
    parse and everything after it (README, "Security")."""

    #: Longer pages are skipped (bytes, or characters for text).
    max_bytes: int = 10 * 1024 * 1024
    #: Pages with more start tags (``<`` then a letter) are skipped.
    max_elements: int = 200_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Skip:
    """Why a page is passed on without cleaning."""

    kind: str  # too-large, too-many-elements, too-many-attributes, binary, json, xml
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


# File signatures of the binary bodies crawls meet most.
_MAGIC = (
    (b"%PDF-", "pdf"), (b"\x89PNG\r\n\x1a\n", "png"), (b"GIF87a", "gif"), (b"GIF89a", "gif"),
    (b"\xff\xd8\xff", "jpeg"), (b"\x1f\x8b", "gzip"), (b"PK\x03\x04", "zip"), (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"), (b"RIFF", "riff"), (b"\x00\x00\x01\x00", "ico"),
    (b"wOFF", "woff"), (b"wOF2", "woff2"), (b"\x7fELF", "elf"), (b"MZ", "exe"),
    (b"OggS", "ogg"), (b"ID3", "mp3"), (b"%!PS", "postscript"), (b"\xd0\xcf\x11\xe0", "ole"),
)
# Control characters no text format uses; UTF-16/32 text has NULs but
# starts with a BOM, which w3lib decodes first.
_BINARY_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32)])
_BINARY_CHARS = dict.fromkeys(_BINARY_BYTES)
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_START_TAG = re.compile(rb"<[A-Za-z]")
#: libxml2 checks each attribute of an element against the others before
#: it: an element with n attributes costs n^2 (10,000: 0.08 s; 20,000: 0.36
#: s; 40,000: 1.6 s; 200,000: 155 s in a 3 MB page under every other limit).
#: Repeated names cost nothing (60,000 in one tag: 0 s); distinct ones take
#: about 5 characters each, so a page of up to 128 KB holds at most about
#: 25,000 (0.6 s) and is not looked at (the scan costs 30 us on a 66 KB
#: page, on the crawl's reactor thread); in longer ones, tags of 60 KB or
#: more have their attributes counted (quotes respected: a data: URI or a
#: long style value is one).
MAX_ATTRIBUTES = 10_000
_ATTRIBUTES_FROM = 128 * 1024
# Keyed by the page's type (str or bytes): each pattern scans that type.
_LONG_TAG: dict[type, re.Pattern[Any]] = {
    bytes: re.compile(rb"<[A-Za-z][^>]{60000,}"),
    str: re.compile(r"<[A-Za-z][^>]{60000,}"),
}
_ATTRIBUTE: dict[type, re.Pattern[Any]] = {
    bytes: re.compile(rb"""\s[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]*))?"""),
    str: re.compile(r"""\s[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]*))?"""),
}
_FIRST_ELEMENT = re.compile(rb"\s*(?:(?:<\?[^>]*>|<!--.*?-->|<![^>]*>)\s*)*<([A-Za-z][\w:.-]*)", re.S)
_XML_ROOTS = frozenset([b"rss", b"feed", b"urlset", b"sitemapindex", b"rdf:rdf", b"opml", b"svg"])


def _head(html: str | bytes, n: int) -> bytes:
    if isinstance(html, bytes):
        return html[:n]
    return html[:n].encode("utf-8", "surrogatepass")


def _binary(html: str | bytes, head: bytes) -> str | None:
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if head.startswith(_BOMS):
        return None
    if isinstance(html, bytes):
        sample = head[:1024]
        controls = len(sample) - len(sample.translate(None, _BINARY_BYTES))
        return "unknown" if controls >= 8 and controls * 10 > len(sample) else None
    # Text that was bytes once (Scrapy's response.text): its binary bytes
    # became controls and U+FFFD, which a page read with the wrong
    # encoding has too, but without the controls.
    text = html[:1024]
    controls = len(text) - len(text.translate(_BINARY_CHARS))
    odd = controls + text.count("\ufffd")
    return "unknown" if controls >= 4 and odd * 10 > len(text) else None


def binary_kind(body: bytes) -> str | None:
    """What binary format ``body`` is ("pdf", "png" ... "unknown"), or None
    for text: a PDF served as text/html is not a page read with the wrong
    encoding."""
    return _binary(body, body[:4096])


def check_page(html: str | bytes, limits: Limits = DEFAULT_LIMITS) -> Skip | None:
    """Why ``html`` should not be parsed, or None when it should be."""
    size = len(html)
    if size > limits.max_bytes:
        unit = "bytes" if isinstance(html, bytes) else "characters"
        return Skip("too-large", f"{size} {unit}, over the limit of {limits.max_bytes}")
    head = _head(html, 4096)
    binary = _binary(html, head)
    if binary:
        return Skip("binary", f"{binary} content")
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] in (b"{", b"[") and _head(html[-64:], 64).rstrip()[-1:] in (b"}", b"]"):
        return Skip("json", "JSON, not HTML")
    first = _FIRST_ELEMENT.match(stripped)
    if first:
        root = first.group(1).lower()
        if root in _XML_ROOTS or (stripped.startswith(b"<?xml")
                                  and root.decode("ascii", "replace") not in _HTML_TAGS):
            return Skip("xml", f"XML document <{root.decode('ascii', 'replace')}>, not HTML")
    if size > _ATTRIBUTES_FROM:
        kind = bytes if isinstance(html, bytes) else str
        for tag in _LONG_TAG[kind].finditer(html):
            n = sum(1 for _ in _ATTRIBUTE[kind].finditer(tag.group()))
            if n > MAX_ATTRIBUTES:
                return Skip("too-many-attributes",
                            f"an element with {n} attributes, over the limit of {MAX_ATTRIBUTES}")
    # A page holds no more '<' than characters: count them only when it is
    # longer than the limit (1.5 % of the CLI's work went to counting), and
    # look for real start tags only when that count is over it.
    if size > limits.max_elements and (html.count(b"<") if isinstance(html, bytes)
                                       else html.count("<")) > limits.max_elements:
        data = html if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass")
        tags = sum(1 for _ in _START_TAG.finditer(data))
        if tags > limits.max_elements:
            return Skip("too-many-elements", f"{tags} start tags, over the limit of {limits.max_elements}")
    return None
