"""Reading and writing the CLI's files: JSON Lines, plain, gzip or zstd.

JSON goes through orjson (decoding a page's line is 2x faster than the
standard library's, encoding 3.5x; measured on the annotated pages), with
the standard library as the fallback for what orjson refuses: lone
surrogate escapes and integers beyond 64 bits, which JSON allows.

gzip goes through python-isal (Intel's ISA-L) where it is installed:
reading 0.12 ms a page against zlib's 0.30, writing 5x faster at the
ratio of zlib's level 3 (0.228 against 0.224 of the text); zlib otherwise,
at level 3 (level 9 cost 1.3 ms a page for 10 % less). ``.zst``
(zstandard, level 3) is smaller than gzip at any level.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import IO, Any

import orjson

__all__ = ["DamagedInput", "GZIP_LEVEL", "ZSTD_LEVEL", "dumps", "loads", "open_binary", "open_text", "read_lines"]

# isal's igzip or the standard library's gzip: the same interface.
_gzip: ModuleType
try:
    from isal import igzip as _gzip

    GZIP_LEVEL = 2  # isal's levels are 0-3; 2 writes what zlib's 3 does
except ImportError:  # no wheel for this platform
    _gzip = gzip
    GZIP_LEVEL = 3
ZSTD_LEVEL = 3


def _zstd():
    import zstandard

    return zstandard


def open_binary(path: str | os.PathLike, mode: str, gzip_level: int = GZIP_LEVEL) -> IO[bytes]:
    """A binary stream, gzip or zstd by the name's ending; ``-`` is stdout."""
    name = os.fspath(path)
    if name == "-":
        if "w" not in mode:
            raise ValueError("input must be a file: it is read twice")
        return os.fdopen(os.dup(1), "wb")
    if name.endswith(".gz"):
        if "w" in mode:
            # No name and no time in the header: the same records give the
            # same bytes, whatever the file is called and whenever it is made.
            raw = open(name, mode + "b")
            out = _gzip.GzipFile(filename="", mode=mode + "b", compresslevel=gzip_level, fileobj=raw, mtime=0)
            out.myfileobj = raw  # GzipFile closes the file it holds there
            return out
        return _gzip.open(name, "rb")
    if name.endswith(".zst"):
        z = _zstd()
        if "w" in mode:
            return z.ZstdCompressor(level=ZSTD_LEVEL).stream_writer(open(name, "wb"), closefd=True)
        return io.BufferedReader(z.ZstdDecompressor().stream_reader(open(name, "rb"), closefd=True))
    return open(name, mode + "b")


def open_text(path: str | os.PathLike, mode: str) -> IO[str]:
    """A text stream of a JSON Lines file (gzip, zstd or plain); ``-`` is
    stdout. Bad bytes read become U+FFFD; lone surrogates written (JSON
    allows them as escapes) are written back as escapes."""
    errors = "replace" if "r" in mode else "backslashreplace"
    return io.TextIOWrapper(open_binary(path, mode.replace("t", "")), encoding="utf-8", errors=errors)


class DamagedInput(Exception):
    """An input file cannot be read to its end (truncated or corrupt): the
    records before the damage are good."""


def read_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of every non-blank line; a compressed file cut
    short raises ``DamagedInput`` after the lines before the cut."""
    lineno = 0
    try:
        with open_binary(path, "r") if not os.fspath(path).endswith(".zst") else _ZstdLines(path) as f:
            for lineno, line in enumerate(f, 1):
                if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 BOM (editors on Windows)
                    line = line[3:]
                if line and not line.isspace():  # (strip() would copy each page)
                    yield lineno, line
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DamagedInput(f"{os.fspath(path)}: truncated or corrupt after line {lineno} ({e}); "
                           "the records before it were read") from None
    except Exception as e:  # zstandard's and isal's own errors
        if type(e).__module__.split(".")[0] in ("zstandard", "isal"):
            raise DamagedInput(f"{os.fspath(path)}: truncated or corrupt after line {lineno} ({e}); "
                               "the records before it were read") from None
        raise


class _ZstdLines:
    """Lines of a .zst file, frame by frame: zstandard's stream reader ends
    quietly at a frame cut short, this raises ``EOFError`` there."""

    def __init__(self, path: str | os.PathLike) -> None:
        self._f = open(path, "rb")

    def __enter__(self) -> "_ZstdLines":
        return self

    def __exit__(self, *exc) -> None:
        self._f.close()

    def __iter__(self) -> Iterator[bytes]:
        z = _zstd()
        d, rest = None, b""
        while chunk := self._f.read(1 << 20):
            while chunk:
                if d is None or d.eof:
                    d = z.ZstdDecompressor().decompressobj()
                data = d.decompress(chunk)
                chunk = d.unused_data if d.eof else b""
                *lines, rest = (rest + data).split(b"\n")
                for line in lines:
                    yield line + b"\n"
        if d is not None and not d.eof:
            raise EOFError("the last zstd frame is cut short")
        if rest:
            yield rest


def loads(line: bytes) -> Any:
    """A JSON value; bad UTF-8 bytes become U+FFFD, as a text read would."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line.decode("utf-8", "replace"))


def dumps(value: Any) -> bytes:
    """One JSON line (no newline), UTF-8; lone surrogates as escapes."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")
