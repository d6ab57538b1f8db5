"""Turn bytes or text into an lxml tree the way a browser would read it."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from lxml import etree
from w3lib.encoding import html_body_declared_encoding, html_to_unicode, resolve_encoding, to_unicode

# None when not built or switched off (every page goes through _repair's checks)
from ._compiled import speedups as _speedups
from ._streamed import mark_boundaries, place_streamed

__all__ = ["ParsedHTML", "decode_html", "decode_page", "empty_root", "garbled", "lossy_decoding", "parse_html",
           "MAX_DEPTH"]

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
    header), then ``<meta charset>``, then detection (w3lib.encoding);
    and when that loses characters, as ``decode_page`` does."""
    text, name, _ = decode_page(data, encoding)
    return text, name


#: One-byte encodings (codecs' names): valid multi-byte UTF-8 read in any of
#: them is mojibake ("crÃ¨me"), which real text in them practically never
#: forms as a whole page of valid UTF-8.
_SINGLE_BYTE = frozenset([*(f"cp{n}" for n in range(1250, 1259)), *(f"iso8859-{n}" for n in range(1, 17) if n != 12),
                          "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp866", "cp874", "cp437", "cp850"])


def lossy_decoding(data: bytes, text: str, encoding: str | None = None) -> bool:
    """Whether ``text``, decoded from ``data`` (with ``encoding``), lost
    what the bytes hold: replacement characters the bytes did not have;
    markup gone (tags in the bytes, none in the text: UTF-16 read from
    UTF-8); or UTF-8 read as a one-byte encoding (valid multi-byte UTF-8
    sequences, which one-byte text almost never forms, become mojibake)."""
    if "\ufffd" in text and text.count("\ufffd") > data.count(b"\xef\xbf\xbd"):
        return True
    if b"<" in data[:2048] and "<" not in text[:4096]:
        return True
    if encoding is not None and not data.isascii():
        try:
            name = codecs.lookup(encoding).name
        except LookupError:
            return False
        if name in _SINGLE_BYTE:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return False
            return True
    return False


#: The legacy encodings of the WHATWG Encoding Standard (what browsers
#: read), as Python names: detection picks among these only (left free,
#: charset-normalizer guessed DOS code pages for short Western pages).
_WEB_ENCODINGS = [
    "utf_8", "utf_16", "ibm866", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6",
    "iso8859_7", "iso8859_8", "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15",
    "iso8859_16", "koi8_r", "koi8_u", "mac_cyrillic", "cp874", "cp1250", "cp1251", "cp1252",
    "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "gb18030", "big5", "euc_jp",
    "iso2022_jp", "shift_jis", "euc_kr",
]


def _detected(data: bytes) -> str | None:
    """charset-normalizer's guess from byte statistics (a dependency, so
    every install guesses alike). Among equally good guesses windows-1252,
    the commonest legacy encoding on the web, wins: short Western pages
    read equally well in several one-byte encodings."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return None
    try:
        matches = list(from_bytes(data[:65536], cp_isolation=_WEB_ENCODINGS))
    except Exception:
        return None
    if not matches:
        return None
    best = matches[0]
    tied = [m.encoding for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)]
    return "cp1252" if "cp1252" in tied else best.encoding


def decode_page(data: bytes, encoding: str | None = None) -> tuple[str, str, list[str]]:
    """(text, encoding used, notes): ``html_to_unicode`` with ``encoding``
    as the declared one (BOM, then it, then ``<meta charset>``, then
    detection), as a browser reads a page. When that decoding is lossy
    (``lossy_decoding``: a wrong declared encoding), the other readings
    are tried in turn: the ``<meta>`` one, UTF-8, charset-normalizer's
    guess, windows-1252; the first that reads the bytes without loss is
    used, with the note ``encoding-fallback``. If none does, the least
    damaged reading is used, noted ``decode-errors``."""
    content_type = f"text/html; charset={encoding}" if encoding else None
    name, text = html_to_unicode(content_type, data)
    if not lossy_decoding(data, text, name):
        return text, name, []
    tried = {name}
    best = (_damage(data, text), text, name)
    for candidate in (html_body_declared_encoding(data), "utf-8", _detected(data), "cp1252"):
        resolved = resolve_encoding(candidate) if candidate else None
        if resolved is None or resolved in tried:
            continue
        tried.add(resolved)
        try:
            other = to_unicode(data, resolved)
        except (LookupError, UnicodeError, TypeError):
            continue
        if not lossy_decoding(data, other, resolved):
            return other, resolved, ["encoding-fallback"]
        damage = _damage(data, other)
        if damage < best[0]:
            best = (damage, other, resolved)
    _, text, used = best
    return text, used, ["decode-errors"] + (["encoding-fallback"] if used != name else [])


def _damage(data: bytes, text: str) -> int:
    """How much a lossy reading lost: its new replacement characters, and
    the whole text when the markup is gone."""
    lost = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    if b"<" in data[:2048] and "<" not in text[:4096]:
        lost += len(text)
    return lost


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


def _repair(data: bytes, notes: list[str]) -> bytes:
    """``data`` with what browsers do not show, and lxml refuses in text it
    sets, replaced or removed; ``notes`` says what was found."""
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
        notes.append("control-characters")
        return cleaned
    return data


#: Replacement characters (U+FFFD) that mark a page decoded before it came
#: with the wrong encoding: at least this many, and one in a hundred
#: characters (a page may quote a few of its own).
GARBLED_MIN = 16


def garbled(text: str) -> bool:
    """Whether ``text`` is a page someone decoded with the wrong encoding
    (``html=response.text`` from a server declaring the wrong charset):
    its lost characters are U+FFFD, and its words with them. Bytes are read
    again instead (``decode_page``); text cannot be."""
    n = text.count("\ufffd")
    return n >= GARBLED_MIN and n * 100 >= len(text)


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
        text, enc, notes = decode_page(html, encoding)  # notes: a wrong declared encoding
    else:
        text, enc = html, "unicode"
        if garbled(text):
            notes.append("replacement-characters")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (only in str input) become "?"
        data = text.encode("utf-8", "replace")
        notes.append("surrogates")
    if _speedups is None or _speedups.needs_repair(data):
        data = _repair(data, notes)
    if not data or data.isspace():
        return ParsedHTML(empty_root(), enc, notes + ["empty"])
    streamed = b'id="S:' in data
    if streamed:
        data = mark_boundaries(data)
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
    if streamed and place_streamed(root):
        notes.append("streamed-placed")
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
