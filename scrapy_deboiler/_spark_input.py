"""The Spark job's input (``_spark_job``): the IN arguments resolved to files
on the driver, and each file read in a task of its own into the same items
the command line reads (``_batch_run._items``), so that every record is
cleaned from the same bytes.

An item is ``("r", rid, where, head, body)``: ``rid`` a stable record id
(source number, record number) that orders and salts records whatever the
partitioning; ``where`` the line or record number the CLI's messages give;
``head``/``body`` as ``_batch_pages.Item``. Each file ends with one marker
``("m", source, counts, damage)``: the archive's left-out counts and, for a
truncated or corrupt file, why it ended early (its records before the cut
are items).

No pyspark import here at module level: the readers run in the executors'
Python workers, which import this module by name.
"""

from __future__ import annotations

import glob
import logging
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ._batch_options import BatchOptions
from ._files import DamagedInput, dumps, open_binary, read_lines
from ._warc import archive_pages, is_archive

__all__: list[str] = []

logger = logging.getLogger(__name__)

#: IN arguments with these endings list one path a line (Common Crawl's
#: ``warc.paths.gz``).
PATH_LISTS = (".paths", ".paths.gz", ".txt", ".lst")
#: Tables read by Spark itself (a folder of them too).
TABLES = (".parquet",)

Item = tuple[Any, ...]


def _remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    """A local path, absolute: the tasks run in folders of their own."""
    return os.path.abspath(path[len("file://"):] if path.startswith("file://") else path)


def _open_remote(path: str) -> Any:
    """A binary stream of a remote file: http(s) with the standard library,
    anything else (s3://, gs://, hdfs://, abfs://) through fsspec."""
    if path.startswith(("http://", "https://")):
        from urllib.request import urlopen

        return urlopen(path, timeout=300)  # noqa: S310 (the user's own input)
    try:
        import fsspec
    except ImportError:
        raise OSError(f"{path}: reading this scheme needs fsspec and its filesystem "
                      "(pip install fsspec s3fs, or gcsfs, ...)") from None
    return fsspec.open(path, "rb").open()


def expand(arguments: list[str], prefix: str = "") -> list[str]:
    """The files the IN arguments name, in the order given: a path, a glob,
    a folder (its files, sorted), or a list of paths (``PATH_LISTS``; each
    line is joined to ``prefix``, as Common Crawl's relative paths need). A
    name that matches nothing raises ``OSError`` before any work starts."""
    out: list[str] = []
    for arg in arguments:
        if arg.lower().endswith(PATH_LISTS):
            stream = _open_remote(arg) if _remote(arg) else open_binary(_local(arg), "r")
            with stream as f:
                data = f.read()
            if arg.endswith(".gz") and data[:2] == b"\x1f\x8b":  # a remote .gz
                import gzip

                data = gzip.decompress(data)
            for line in data.decode("utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    path = prefix + line.strip()
                    out.append(path if _remote(path) else _local(path))
            continue
        if _remote(arg):
            if any(c in arg for c in "*?["):
                try:
                    import fsspec
                except ImportError:
                    raise OSError(f"{arg}: remote globs need fsspec (pip install fsspec s3fs)") from None
                fs, _, found = fsspec.get_fs_token_paths(arg)
                out.extend(sorted(fs.unstrip_protocol(p) for p in found))
            else:
                out.append(arg)
            continue
        local = _local(arg)
        if os.path.isdir(local):
            if glob.glob(os.path.join(local, "*.parquet")):
                out.append(local)  # a table
            else:
                # Hadoop's hidden files (_SUCCESS, .crc) are no input, as Spark's readers skip them.
                out.extend(sorted(p for p in glob.glob(os.path.join(local, "*"))
                                  if os.path.isfile(p) and not os.path.basename(p).startswith(("_", "."))))
            continue
        found = sorted(glob.glob(local)) if any(c in local for c in "*?[") else [local]
        if not found or not all(os.path.exists(p) for p in found):
            raise OSError(f"{arg}: no such file")
        out.extend(found)
    return out


def is_table(path: str) -> bool:
    local = _local(path)
    return path.lower().rstrip("/").endswith(TABLES) or (
        not _remote(path) and os.path.isdir(local) and bool(glob.glob(os.path.join(local, "*.parquet"))))


def _fetched(path: str) -> tuple[str, str | None]:
    """A local path of the file, and the temporary folder to delete after
    (a remote file is copied to the task's local disk first: the archive
    readers seek, and check the end of the file for truncation)."""
    if not _remote(path):
        return _local(path), None
    folder = tempfile.mkdtemp(prefix="scrapy-deboiler-spark-")
    name = os.path.join(folder, os.path.basename(path.split("?", 1)[0]) or "input")
    with _open_remote(path) as src, open(name, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return name, folder


def read_source(source: int, path: str, options: BatchOptions) -> Iterator[Item]:
    """The items of one file, then its marker. Streams: one record at a
    time in memory. A file that cannot be read at all is a marker with its
    reason (the job goes on with the others; the command fails at the end)."""
    counts: Counter = Counter()
    damage: str | None = None
    folder = None
    try:
        local, folder = _fetched(path)
        if is_archive(local):
            for n, page in enumerate(archive_pages(local, counts, options.limits.max_bytes), 1):
                body = page.pop("html")
                fields = {"warc_record_id": page["warc_record_id"], options.url_field: page["url"],
                          "warc_date": page["warc_date"], "encoding": page["encoding"]}
                yield ("r", (source, n), n, dumps(fields), body)
        else:
            for lineno, line in read_lines(local):
                yield ("r", (source, lineno), lineno, line, None)
    except DamagedInput as e:  # the records before the damage are out already
        damage = str(e)
    except Exception as e:  # unreadable: named at the end, the other files still cleaned
        damage = f"{path}: {type(e).__name__}: {e}" if path not in str(e) else f"{e}"
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    if damage is not None and folder is not None:
        damage = damage.replace(os.path.join(folder, os.path.basename(path.split("?", 1)[0])), path)
    yield ("m", source, dict(counts), damage)


def _plain(value: Any) -> Any:
    """A table cell as JSON can hold it (timestamps, decimals and the like
    as text; bytes as UTF-8 text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def row_item(source: int, row: Any, index: int, html_field: str) -> Item:
    """A table's row (a ``pyspark.sql.Row``) as the item of a JSON Lines
    record with the same fields: what the command line would read from the
    table written as JSON Lines. Binary HTML stays bytes, as an archive's
    body (decoded as a browser would, an ``encoding`` column its charset)."""
    record = row.asDict(recursive=True)
    html = record.get(html_field)
    body = None
    if isinstance(html, (bytes, bytearray)):
        body = bytes(record.pop(html_field))
    head = dumps({k: _plain(v) for k, v in record.items()})
    return ("r", (source, index + 1), index + 1, head, body)
