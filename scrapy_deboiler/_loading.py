"""Turn bytes or text into an lxml tree the way a browser would read it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree
from w3lib.encoding import html_to_unicode

__all__ = ["ParsedHTML", "decode_html", "empty_root", "parse_html", "MAX_DEPTH"]

#: Depth we keep when a page nests deeper than libxml2 accepts (2048 with
#: ``huge_tree``). Deeper start tags are dropped, their text is kept.
MAX_DEPTH = 1024

_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr".split()
)
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*?(/?)>")
# C0 controls other than tab, newline, CR and form feed: libxml2 passes some
# through into text, where lxml then refuses to set them (ValueError), and
# browsers do not show them. They never occur inside multi-byte UTF-8
# sequences, so they are deleted from the encoded bytes in one C call.
_CONTROL_BYTES = bytes([*range(1, 9), 11, *range(14, 32)])
_REPLACEMENT = "\ufffd".encode("utf-8")


@dataclass
class ParsedHTML:
    """A parsed page: its root element and what loading had to repair."""

    root: etree._Element
    encoding: str
    notes: list[str] = field(default_factory=list)


def decode_html(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """Decode bytes like a browser: BOM, then the declared encoding (HTTP
    header), then ``<meta charset>``, then detection (w3lib.encoding)."""
    content_type = f"text/html; charset={encoding}" if encoding else None
    name, text = html_to_unicode(content_type, data)
    return text, name


def _parser() -> etree.HTMLParser:
    # A new parser per call: parsers keep an error log, so one shared parser
    # would couple threads (lxml is thread-safe only without shared state).
    return etree.HTMLParser(
        encoding="utf-8",
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        no_network=True,  # never fetch anything a page refers to
        default_doctype=False,
    )


def _depth_limited(parser: etree.HTMLParser) -> bool:
    # Running out of depth is fatal, so it is the last error if it happened.
    last = parser.error_log.last_error
    return last is not None and "Excessive depth" in last.message


def flatten_deep(text: str, max_depth: int = MAX_DEPTH) -> str:
    """Drop start and end tags nested deeper than ``max_depth``, keeping text.

    libxml2 stops reading at 2048 levels and silently loses the rest of the
    page; flattening the excess keeps every word in the deepest kept element.
    """
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _TAG.finditer(text):
        closing, name, selfclose = m.group(1), m.group(2).lower(), m.group(3)
        keep = True
        if closing:
            if depth > max_depth:
                keep = False
            depth = max(depth - 1, 0)
        elif name not in _VOID and not selfclose:
            depth += 1
            keep = depth <= max_depth
        if not keep:
            out.append(text[pos : m.start()])
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def empty_root() -> etree._Element:
    root = etree.Element("html")
    etree.SubElement(root, "body")
    return root


def parse_html(
    html: str | bytes, encoding: str | None = None
) -> ParsedHTML:
    """Parse a page with lxml's HTML parser; never raises on bad input.

    ``encoding`` is the declared one (e.g. from HTTP headers) and only
    matters for bytes.
    """
    notes: list[str] = []
    if isinstance(html, bytes):
        text, enc = decode_html(html, encoding)
        if "\ufffd" in text and b"\xef\xbf\xbd" not in html:
            notes.append("decode-errors")  # bytes the encoding cannot read
    else:
        text, enc = html, "unicode"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (only in str input) become "?"
        data = text.encode("utf-8", "replace")
        notes.append("surrogates")
    if b"\x00" in data:  # browsers read NUL as U+FFFD
        data = data.replace(b"\x00", _REPLACEMENT)
        notes.append("nul")
    cleaned = data.translate(None, _CONTROL_BYTES)
    changed = len(cleaned) != len(data)
    # Form feed is whitespace to a browser; U+FFFE and U+FFFF are not
    # characters. lxml refuses all three in text it sets (found by fuzzing).
    if b"\x0c" in cleaned:
        cleaned = cleaned.replace(b"\x0c", b" ")
        changed = True
    if b"\xef\xbf\xbe" in cleaned or b"\xef\xbf\xbf" in cleaned:
        cleaned = cleaned.replace(b"\xef\xbf\xbe", _REPLACEMENT).replace(b"\xef\xbf\xbf", _REPLACEMENT)
        changed = True
    if changed:
        data = cleaned
        notes.append("control-characters")
    if not data or data.isspace():
        return ParsedHTML(empty_root(), enc, notes + ["empty"])
    parser = _parser()
    try:
        root = etree.fromstring(data, parser)
    except (etree.LxmlError, ValueError):
        root = None
    if root is not None and _depth_limited(parser):
        notes.append("depth-flattened")
        flat = flatten_deep(data.decode("utf-8")).encode("utf-8")
        root = etree.fromstring(flat, _parser())
    if root is None:
        return ParsedHTML(empty_root(), enc, notes + ["unparsable"])
    if _runaway_title(root):
        fixed = _close_title(data)
        if fixed is not None:
            again = etree.fromstring(fixed, _parser())
            if again is not None:
                root = again
                notes.append("title-closed")
    if _body_in_head(root):
        notes.append("body-recovered")
    return ParsedHTML(root, enc, notes)


_HEAD_TAGS = frozenset("title meta link script style base noscript template object".split())


def _body_in_head(root: etree._Element) -> bool:
    """libxml2 keeps an unknown tag met in ``<head>`` (``<mbox>``) and all
    that follows inside the head, which text extraction skips; a browser
    starts the body there. Move it into a new ``<body>``."""
    head = root.find("head")
    if head is None or root.find("body") is not None:
        return False
    start = next((i for i, el in enumerate(head) if not isinstance(el.tag, str) or el.tag not in _HEAD_TAGS), None)
    if start is None:
        return False
    body = etree.SubElement(root, "body")
    for el in list(head)[start:]:
        body.append(el)  # moves it, with its tail
    return True


_TITLE_OPEN = re.compile(rb"<title\b[^>]*>", re.I)


def _runaway_title(root: etree._Element) -> bool:
    """A ``<title>`` never closed swallows the rest of the page as its text
    (seen on real pages: 10 of 163 l3s-gn1 pages lose their article so)."""
    title = root.find("head/title")
    if title is None:
        return False
    text = title.text or ""
    return len(text) > 500 and "<" in text and root.find("body") is None


def _close_title(data: bytes) -> bytes | None:
    """``data`` with ``</title>`` put before the first tag after ``<title>``
    (or at its first line break when no tag follows)."""
    m = _TITLE_OPEN.search(data)
    if m is None:
        return None
    end = data.find(b"<", m.end())
    line = data.find(b"\n", m.end())
    cut = min(x for x in (end, line) if x >= 0) if max(end, line) >= 0 else -1
    if cut < 0:
        return None
    return data[:cut] + b"</title>" + data[cut:]
