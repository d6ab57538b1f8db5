"""Hostile and odd page bodies, written for the tests, each with the outcome
the README's "Security" section promises for it."""

from __future__ import annotations

import gzip
import struct
import zlib

MB = 1024 * 1024


def _libxml2_limits_depth() -> bool:
    """Whether this libxml2 stops reading at 2048 levels of nesting (2.13
    and later do, and the loader flattens such pages, noted
    "depth-flattened"); older ones read every level: nothing to repair."""
    from lxml import etree

    parser = etree.HTMLParser(huge_tree=True)  # as the loader's
    etree.fromstring("<div>" * 3000 + "x", parser)
    return any("Excessive depth" in e.message for e in parser.error_log)


LIBXML2_LIMITS_DEPTH = _libxml2_limits_depth()
DEEP_NOTE = "depth-flattened" if LIBXML2_LIMITS_DEPTH else ""


def _png() -> bytes:
    raw = b"".join(b"\x00" + bytes(range(16)) * 3 for _ in range(16))
    ihdr = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


_PDF = (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n"
        b"2 0 obj << /Length 12 /Filter /FlateDecode >> stream\n" + zlib.compress(b"BT (x) Tj ET")
        + b"\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

#: name -> (body, expected status, expected kind or note)
#: status "skipped" names the Skip kind; "cleaned" names a note that must
#: be on the item (or "" for none).
CASES: dict[str, tuple[bytes, str, str]] = {
    "empty": (b"", "cleaned", "empty"),
    "blank": (b" \r\n\t  \n", "cleaned", "empty"),
    "pdf": (_PDF, "skipped", "binary"),
    "png": (_png(), "skipped", "binary"),
    "gzip": (gzip.compress(b"<html><body><p>compressed twice</p></body></html>" * 50, mtime=0),
             "skipped", "binary"),
    "json": (b'{"title": "<p>not a page</p>", "items": [1, 2, 3]}\n', "skipped", "json"),
    "xml": (b'<?xml version="1.0"?><rss version="2.0"><channel><title>Feed</title>'
            b"<item><title>Entry</title></item></channel></rss>", "skipped", "xml"),
    "plain-text": (b"Just words.\nNo markup at all, in two lines.\n", "cleaned", ""),
    "bogus-encoding": (('<html><head><meta charset="no-such-charset"></head><body><p>Caf\u00e9 '
                       "cr\u00e8me br\u00fbl\u00e9e and more words to read here.</p></body></html>"
                        ).encode("latin-1"), "cleaned", "encoding-fallback"),
    "lying-encoding": (('<html><head><meta charset="utf-8"></head><body><p>Na\u00efve fa\u00e7ade, '
                        "declared UTF-8 but written in Latin-1.</p></body></html>").encode("latin-1"),
                       "cleaned", "encoding-fallback"),
    "nul-and-controls": (b"<html><body><p>Text with a NUL \x00 here and \x01\x02 controls \x1b "
                         b"in the middle of a sentence.</p></body></html>", "cleaned", "nul"),
    "malformed-names": (b'<html><body><p\x01 1a="x" ="y" a:b:c="z" \xff\xfe="w" <="<">Odd names '
                        b"<a\x02b href=x>link</a\x02b> <x-\xe2\x80\x8b>zero width</x-\xe2\x80\x8b>"
                        b"</p><1p>not a tag</1p></body></html>", "cleaned", ""),
    "50-mb": (b"<html><body>" + b"<p>A paragraph of a page far too long.</p>\n" * (50 * MB // 43)
              + b"</body></html>", "skipped", "too-large"),
    "deep-closed": (b"<html><body>" + b"<div>" * 100_000 + b"deep text" + b"</div>" * 100_000
                    + b"</body></html>", "cleaned", DEEP_NOTE),
    "deep-unclosed": (b"<html><body>" + b"<div><span>" * 50_000 + b"deep text", "cleaned", DEEP_NOTE),
    "million-siblings": (b"<html><body>" + b"<i>x</i>" * 1_000_000 + b"</body></html>", "skipped",
                         "too-many-elements"),
    "million-entities": (b"<html><body><p>" + b"&amp;&#233;&lt;&nbsp;&#x1F600;" * 200_000
                         + b"</p></body></html>", "cleaned", ""),
    # One element with 100,000 attributes: 1.5 MB, under the other limits,
    # and minutes of libxml2's attribute checks.
    "many-attributes": (b"<html><body><div " + b" ".join(b'a%d="%d"' % (i, i) for i in range(100_000))
                        + b"><p>x</p></div></body></html>", "skipped", "too-many-attributes"),
    # A long tag that is fine: an image inlined as a 1 MB data: URI.
    "inline-image": (b'<html><body><p>Caption text of the inline image.</p><img alt="a b c" src="data:image/png;base64,'
                     + b"QUJD" * 250_000 + b'"></body></html>', "cleaned", ""),
}

#: Lone surrogates only exist in text, not in bytes.
SURROGATES = "<html><body><p>Broken \ud800 pair \udfff here, in a sentence.</p></body></html>"
