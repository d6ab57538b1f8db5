"""Pages from crawl archives: the HTML responses of WARC and ARC files.

WARC is read with FastWARC (0.11 ms a record against warcio's 0.26, same
file, gzip per record); ARC, which FastWARC does not read, with warcio.
Neither notices a truncated file (both simply stop), so the last record is
checked here before it is given out: its gzip member must be whole, or its
declared length must fit in the file. A record that cannot be read in the
middle of a file ends the reading there the same way: the records before it
are given out, then ``ArchiveError``.

Archivers store HTTP bodies as they came over the wire: chunked, and
compressed by the server (``Content-Encoding``). FastWARC gives them so;
``http_payload`` decodes them here (warcio, for ARC, does it itself).
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ._files import DamagedInput
from ._limits import DEFAULT_LIMITS

__all__ = ["ArchiveError", "ArchiveReaderMissing", "archive_pages", "http_payload", "is_archive"]

logger = logging.getLogger(__name__)

_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
#: Archives compressed otherwise: named, so that they are not read as JSON Lines.
_UNREAD_SUFFIXES = tuple(f"{a}.{c}" for a in (".warc", ".arc") for c in ("zst", "zstd", "lz4", "bz2", "xz", "br"))
_HTML_TYPES = ("text/html", "application/xhtml+xml")
#: Content types that say nothing: such bodies are sniffed.
_VAGUE_TYPES = ("", "application/octet-stream", "text/plain", "unknown/unknown", "binary/octet-stream")
_SNIFF = re.compile(rb"<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]", re.I)
_LENGTH = re.compile(rb"\r?\ncontent-length:[ \t]*(\d+)", re.I)


class ArchiveError(DamagedInput):
    """The archive cannot be read on (truncated or corrupt): the pages read
    before it are good."""


class ArchiveReaderMissing(RuntimeError):
    """The library that reads this kind of archive is not installed (the
    ``warc`` extra): nothing was read."""


def is_archive(path: str | os.PathLike) -> bool:
    return os.fspath(path).lower().endswith(_SUFFIXES + _UNREAD_SUFFIXES)


def _dechunk(body: bytes) -> bytes | None:
    """A chunked body's data, or None when ``body`` is not chunked (some
    archivers store it decoded and keep the header). A body cut short
    gives the chunks it has."""
    out: list[bytes] = []
    at, n = 0, len(body)
    while at < n:
        eol = body.find(b"\r\n", at)
        if eol < 0:
            eol = n
        size = body[at:eol].split(b";", 1)[0].strip()
        try:
            length = int(size, 16)
        except ValueError:
            length = -1
        if length < 0 or not size or len(size) > 16:
            return None if at == 0 else b"".join(out)
        if length == 0:
            break
        out.append(body[eol + 2:eol + 2 + length])
        at = eol + 2 + length + 2
    return b"".join(out)


def _decompress(data: bytes, kind: str, cap: int) -> bytes | None:
    """``data`` decoded from one Content-Encoding, at most ``cap`` bytes;
    what a body cut short gives; None when it cannot be decoded."""
    try:
        if kind in ("gzip", "x-gzip", "deflate"):
            # gzip or zlib by their headers; servers' "deflate" is raw deflate too.
            for wbits in (47, -15) if kind == "deflate" else (47,):
                d = zlib.decompressobj(wbits)
                try:
                    out = d.decompress(data, cap)
                except zlib.error:
                    continue
                return out
            return None
        if kind == "br":
            try:
                import brotli
            except ImportError:  # Scrapy's own choice of optional decoders
                try:
                    import brotlicffi as brotli
                except ImportError:
                    return None
            return brotli.decompress(data)[:cap]
        if kind == "zstd":
            import zstandard

            return zstandard.ZstdDecompressor().decompressobj().decompress(data)[:cap]
    except Exception:  # a decoder's own errors: the body is not what its header says
        return None
    return None


def http_payload(body: bytes, transfer_encoding: str | None, content_encoding: str | None,
                 cap: int) -> tuple[bytes | None, str | None]:
    """An HTTP body as an archive stores it (as sent), decoded: chunks
    joined, then the server's compression undone (at most ``cap`` bytes;
    a body over it is cut there, and is then too large to clean). Returns
    the payload, or None and why it could not be decoded."""
    if transfer_encoding and "chunked" in transfer_encoding.lower():
        dechunked = _dechunk(body)
        if dechunked is not None:
            body = dechunked
    for kind in reversed([k.strip().lower() for k in (content_encoding or "").split(",") if k.strip()]):
        if kind == "identity":
            continue
        decoded = _decompress(body, kind, cap)
        if decoded is None:
            if kind in ("gzip", "x-gzip", "deflate") and body[:1] == b"<":
                continue  # stored decoded under its old header (some archivers do)
            why = ("Content-Encoding br needs brotli: pip install brotli" if kind == "br"
                   else f"Content-Encoding {kind} could not be decoded")
            return None, why
        body = decoded
    return body, None


def _is_arc(path: str) -> bool:
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(0)
        if head == b"\x1f\x8b":
            head = zlib.decompressobj(31).decompress(f.read(4096))[:11]
        else:
            head = f.read(11)
    return head.startswith(b"filedesc://")


def is_html(content_type: str, body: bytes) -> bool:
    """By the HTTP Content-Type; a missing or vague one by sniffing."""
    mime = content_type.split(";")[0].strip().lower()
    if mime in _HTML_TYPES:
        return True
    return mime in _VAGUE_TYPES and bool(_SNIFF.search(body[:2048]))


def archive_pages(path: str | os.PathLike, counts: Counter | None = None,
                  max_bytes: int = DEFAULT_LIMITS.max_bytes) -> Iterator[dict[str, Any]]:
    """``{"url", "html" (bytes), "encoding", "warc_record_id", "warc_date"}``
    for every HTML response with a 2xx status, in file order (ARC records
    have no ID: ``warc_record_id`` is None), its body decoded as the server
    encoded it (``http_payload``; at most ``max_bytes`` + 1 bytes). ``counts``
    gets ``records``, ``html`` and why others were left out
    (``not_response``, ``revisit``, ``status``, ``not_html``,
    ``undecodable``). An empty archive gives one warning. A
    truncated or corrupt file raises ``ArchiveError`` after the pages
    before the damage; a file that is no archive at all, ``ValueError``."""
    path = os.fspath(path)
    counts = counts if counts is not None else Counter()
    if path.lower().endswith(_UNREAD_SUFFIXES):
        raise ValueError(f"{path}: archives compressed with {path.rsplit('.', 1)[1]} are not read; "
                         "decompress it, or compress it with gzip")
    reader = (_arc_records if _is_arc(path) else _warc_records)(path, max_bytes + 1)
    for kind, page in reader:
        counts["records"] += 1
        if not isinstance(page, dict):  # left out; for an undecodable body, why
            counts[kind] += 1
            if kind == "undecodable" and counts[kind] == 1:
                logger.warning("%s: an HTML body could not be decoded (%s); such records are left out "
                               "and counted", path, page)
            continue
        counts["html"] += 1
        yield page
    if not counts["records"]:  # no error: a crawl may have archived nothing, but say so
        logger.warning("%s: an empty archive (no records)", path)


def _page(url: str, status: int | None, content_type: str, charset: str | None, body: bytes,
          record_id: str | None, date: str, transfer: str | None = None, coding: str | None = None,
          cap: int = DEFAULT_LIMITS.max_bytes + 1) -> tuple[str, dict | str | None]:
    url = url.strip()
    if url.startswith("<") and url.endswith(">"):  # wget writes WARC-Target-URI: <http://...>
        url = url[1:-1]
    if status is None or not 200 <= status < 300:
        return "status", None
    payload, why = http_payload(body, transfer, coding, cap)
    if payload is None:
        if content_type.split(";")[0].strip().lower() not in _HTML_TYPES:
            return "not_html", None
        return "undecodable", why
    if not is_html(content_type, payload):
        return "not_html", None
    return "html", {"url": url, "html": payload, "encoding": charset or None,
                    "warc_record_id": record_id, "warc_date": date}


def _gzip_empty(path: str) -> bool:
    """Whether ``path`` is gzip of nothing (an empty archive, compressed)."""
    try:
        with gzip.open(path, "rb") as f:
            return f.read(1) == b""
    except (OSError, EOFError):
        return False


def _warc_records(path: str, cap: int) -> Iterator[tuple[str, dict | str | None]]:
    try:
        from fastwarc.warc import ArchiveIterator, WarcRecordType
    except ImportError:
        raise ArchiveReaderMissing("reading WARC files needs FastWARC: pip install 'scrapy-deboiler[warc]'") from None
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        # One record of look-ahead: a record is whole when another follows it;
        # the last one is checked against the end of the file.
        last: tuple[int, str, dict | str | None] | None = None
        records = iter(ArchiveIterator(f, record_types=WarcRecordType.any_type, parse_http=False))
        while True:
            try:
                rec = next(records, None)
                if rec is None:
                    break
                if rec.record_type == WarcRecordType.revisit:  # deduplicated: no body of its own
                    current: tuple[int, str, dict | str | None] = (rec.stream_pos, "revisit", None)
                elif rec.record_type != WarcRecordType.response:
                    current = (rec.stream_pos, "not_response", None)
                else:
                    rec.parse_http()
                    http = rec.http_headers if rec.is_http_parsed else None
                    status = http.status_code if http else None
                    body = rec.reader.read()
                    current = (rec.stream_pos, *_page(
                        rec.headers.get("WARC-Target-URI") or "", status, rec.http_content_type or "",
                        rec.http_charset, body, rec.record_id or "", rec.headers.get("WARC-Date") or "",
                        http.get("Transfer-Encoding") if http else None,
                        http.get("Content-Encoding") if http else None, cap))
            except Exception as e:  # FastWARC's errors on bad data (their classes vary by version)
                if last is None:
                    raise ValueError(f"{path} is not a WARC file, or its first record is damaged ({e})") from None
                yield last[1], last[2]
                raise ArchiveError(f"{path}: unreadable record, after the record at byte {last[0]} ({e}); "
                                   "the records before it were read") from None
            if last is not None:
                yield last[1], last[2]
            last = current
        start = last[0] if last is not None else 0
    if last is None and size and not (gzipped and _gzip_empty(path)):
        # FastWARC before 2.0 reads what is no WARC as no records
        raise ValueError(f"{path} is not a WARC file (no WARC record in it)")
    problem = _tail_problem(path, start, size, gzipped)
    if last is not None and problem is None:
        yield last[1], last[2]
    if problem is not None:
        raise ArchiveError(f"{path}: {problem}, after the record at byte {start}; the records before it were read")


def _tail_problem(path: str, start: int, size: int, gzipped: bool) -> str | None:
    """Why the file's last record (starting at ``start``) is not whole, or None."""
    if gzipped:
        with open(path, "rb") as f:
            f.seek(start)
            if f.read(2) != b"\x1f\x8b":  # not a member of its own: one gzip stream for the file
                start = 0
        return _gzip_problem(path, start)
    with open(path, "rb") as f:
        f.seek(start)
        tail = f.read()
    if not tail:
        return None if size == 0 else "no record"
    end = tail.find(b"\r\n\r\n")
    length = _LENGTH.search(tail[:end if end >= 0 else len(tail)])
    if end < 0 or length is None:
        return "truncated record header (the file is cut short)"
    if end + 4 + int(length.group(1)) > len(tail):
        return "truncated record (the file is cut short)"
    if tail[end + 4 + int(length.group(1)):].strip(b"\r\n"):
        return "unreadable data"
    return None


def _gzip_problem(path: str, start: int) -> str | None:
    """Whether the gzip members from ``start`` to the end are whole."""
    with open(path, "rb") as f:
        f.seek(start)
        reader = _GzipFile(f)
        chunk = bytearray(1 << 20)
        while reader.readinto(chunk):
            pass
    return reader.problem


class _GzipFile(io.RawIOBase):
    """A gzip file (one stream, or a member a record) read up to where it
    is cut short or corrupt, without raising there: ``problem`` says why it
    ended early (``gzip.open`` raised from inside warcio's read-ahead, and
    the records it had decompressed were lost with it)."""

    def __init__(self, raw: io.BufferedReader) -> None:
        self.raw = raw
        self.d: Any = None
        self.pending = memoryview(b"")
        self.problem: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while not self.pending and self.problem is None:
            data = self.d.unused_data if self.d is not None and self.d.eof else b""
            if self.d is None or self.d.eof:
                data += self.raw.read(1 << 16)
                if not data:
                    return 0  # the end, after whole members
                self.d = zlib.decompressobj(31)
            else:
                data = self.raw.read(1 << 16)
                if not data:
                    self.problem = "truncated gzip member (the file is cut short)"
                    break
            try:
                self.pending = memoryview(self.d.decompress(data))
            except zlib.error as e:
                self.problem = f"corrupt gzip data ({e})"
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]  # a view: no copy of the rest
        return n


def _arc_tail_problem(path: str, offset: int) -> str | None:
    """Whether the plain ARC record at ``offset`` (the last) is whole: its
    header line's length must fit in the file."""
    with open(path, "rb") as f:
        f.seek(offset)
        line = f.readline(4096)
        rest = os.path.getsize(path) - offset - len(line)
    fields = line.split()
    if not line.endswith(b"\n") or not fields or not fields[-1].isdigit():
        return "truncated record header (the file is cut short)"
    return "truncated record (the file is cut short)" if int(fields[-1]) > rest else None


def _arc_records(path: str, cap: int) -> Iterator[tuple[str, dict | str | None]]:
    try:
        from warcio.archiveiterator import ArchiveIterator
        from warcio.exceptions import ArchiveLoadFailed
    except ImportError:
        raise ArchiveReaderMissing("reading ARC files needs warcio: pip install 'scrapy-deboiler[warc]'") from None

    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        # warcio reads gzip ARC only when every record is a member of its own;
        # a stream it does not have to decompress reads either kind.
        gz = _GzipFile(raw) if gzipped else None
        f = io.BufferedReader(gz) if gz is not None else raw
        last: tuple[int, str, dict | str | None] | None = None  # held back until the next one is read
        problem = None
        whole = False  # the held-back record is known to be whole
        try:
            records = ArchiveIterator(f, arc2warc=True)
            for rec in records:
                if rec.rec_type != "response":
                    current: tuple[str, dict | str | None] = ("not_response", None)
                else:
                    http = rec.http_headers
                    status = (int(http.get_statuscode())
                              if http is not None and http.get_statuscode().isdigit() else None)
                    content_type = (http.get_header("Content-Type") if http is not None else None) or ""
                    charset = None
                    m = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.I)
                    if m:
                        charset = m.group(1)
                    # ARC records have no ID (warcio makes up a random one): None.
                    # content_stream() has undone chunking and compression.
                    current = _page(rec.rec_headers.get_header("WARC-Target-URI") or "", status, content_type,
                                    charset, rec.content_stream().read(cap), None,
                                    rec.rec_headers.get_header("WARC-Date") or "", cap=cap)
                if last is not None:
                    yield last[1], last[2]
                last = (records.get_record_offset(), *current)
        except (ArchiveLoadFailed, EOFError, zlib.error, ValueError, OSError) as e:
            # The record after the held-back one is unreadable: that one was
            # read whole, unless the data under it ended early.
            problem = f"unreadable record ({e})"
            whole = gz is None or gz.problem is None
        if gz is not None:
            problem = problem or gz.problem
        elif last is not None and problem is None:
            problem = _arc_tail_problem(path, last[0])
        if last is not None and (problem is None or whole):
            yield last[1], last[2]
    if problem is not None:
        raise ArchiveError(f"{path}: {problem}; the records before it were read")
