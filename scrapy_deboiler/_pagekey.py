"""A page's identity: one key for the crawl, the command line and the
signature files.

A page is its URL (without fragment) and its content: the same page twice
(a start URL fetched again, the items of one response, a repeated record)
counts once; one URL with new content is a new page. The crawl knows a
page's HTML when its item arrives, before any parse, and takes a digest of
it; the command line keys the signatures it packed; both go through
``page_key``. A page pooled in Redis is keyed by URL alone
(``pooled_key``): the pool is fed signatures, never HTML, and one URL is
offered once. A provisional model's ``page_keys`` hold the keys of the pages
it has seen, of either kind (docs/pipeline.md, "Signature files, version 2").
"""

from __future__ import annotations

from hashlib import blake2b

__all__ = ["html_digest", "page_key", "pooled_key"]

#: hashlib releases the GIL for updates of 2048 bytes or more.
_HASH_PIECE = 2047


def page_key(url: str, content: bytes) -> bytes:
    """8 bytes: BLAKE2b of the URL without fragment and ``content`` (a
    digest of the HTML, or the page's packed signatures)."""
    base = url.split("#", 1)[0].encode("utf-8", "surrogatepass")
    return blake2b(base + b"\0" + content, digest_size=8).digest()


def html_digest(html: str | bytes) -> bytes:
    """16 bytes of BLAKE2b of the HTML (UTF-8 if text). Hashed in pieces
    hashlib hashes without releasing the GIL: on the reactor thread,
    getting it back from the cleaning threads costs more than the hashing
    (up to ``sys.getswitchinterval()``)."""
    data = memoryview(html if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass"))
    h = blake2b(digest_size=16)
    for i in range(0, len(data), _HASH_PIECE):
        h.update(data[i:i + _HASH_PIECE])
    return h.digest()


def pooled_key(url: str) -> str:
    """A page pooled in Redis: 16 hex digits of BLAKE2b of its URL."""
    return blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
