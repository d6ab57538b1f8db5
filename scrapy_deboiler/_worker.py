"""The worker processes' side of ``_executor``: tasks read from a pipe,
answers written to another, in order. It imports neither Twisted nor
Scrapy: a worker starts with what cleaning needs.

A frame is an orjson header and the strings it carries as UTF-8 blobs: no
pickle, nothing a worker sends is executed.
"""

from __future__ import annotations

import os
import signal
import struct
from collections import OrderedDict
from typing import Any

import orjson

from ._clean import CleanResult, Page, clean_page
from ._model import FitParams, SiteModel
from ._store import model_from_json, model_to_json

__all__ = ["decode_frame", "encode_frame", "worker_main"]

#: A frame: the header's length, the blobs' total length, the header (JSON
#: with the blobs' lengths under "b"), the blobs.
_FRAME = struct.Struct("<II")
#: Pipe buffer (Linux ``F_SETPIPE_SZ``): a page, or most of a fit's pages,
#: in one write. The default 64 KiB took several reactor turns a page.
_PIPE_BYTES = 1 << 20
#: Models a worker keeps (least recently used go first).
_KEEP_MODELS = 256
#: The least a kept page counts for (bounding their number).
_MIN_PAGE_BYTES = 4096
#: What a terminal's Ctrl-C (to the whole process group) and systemd's stop
#: (SIGTERM to the whole unit) send the workers too.
_SHUTDOWN_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _blob(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _text(b: memoryview | bytes) -> str:
    return str(b, "utf-8", "surrogatepass")


def encode_frame(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    header["b"] = [len(b) for b in blobs]
    head = orjson.dumps(header)
    return b"".join([_FRAME.pack(len(head), sum(header["b"])), head, *blobs])


def decode_frame(buf: bytearray | bytes, at: int) -> tuple[dict[str, Any], list[memoryview], int] | None:
    """The frame starting at ``at`` (its header, its blobs, where the next
    one starts), or None if ``buf`` does not hold all of it yet."""
    if len(buf) - at < _FRAME.size:
        return None
    hlen, blen = _FRAME.unpack_from(buf, at)
    start = at + _FRAME.size
    end = start + hlen + blen
    if len(buf) < end:
        return None
    view = memoryview(buf)
    header = orjson.loads(view[start:start + hlen])
    blobs, pos = [], start + hlen
    for n in header["b"]:
        blobs.append(view[pos:pos + n])
        pos += n
    if pos != end:
        raise ValueError("frame blobs do not add up")
    return header, blobs, end


#: Blobs a result carries: text, html, comments, markdown, title.
_RESULT_BLOBS = 5


def _result_frame(i: int, result: CleanResult, sigs: frozenset[str] | None) -> tuple[dict, list[bytes]]:
    skipped = [result.skipped.kind, result.skipped.reason] if result.skipped is not None else None
    return ({"i": i, "removed": result.removed, "notes": result.notes, "skipped": skipped,
             "blocks": result.removed_blocks, "sigs": sorted(sigs) if sigs is not None else None,
             "fallback": result.fallback, "model_share": result.model_share},
            [_blob(result.text), _blob(result.html), _blob(result.comments), _blob(result.markdown),
             _blob(result.title)])


def _page_args(head: dict, blobs: list[memoryview], at: int) -> tuple[str | bytes, str, str | None]:
    """A page's HTML, URL and encoding from three blobs."""
    html: str | bytes = bytes(blobs[at]) if head["raw"][at // 3] else _text(blobs[at])
    enc = _text(blobs[at + 2]) if head["enc"][at // 3] else None
    return html, _text(blobs[at + 1]), enc


class _Missing(Exception):
    """The task names a model or a kept page this worker does not have."""


class _PageCache:
    """Pages kept parsed by ``ref``, oldest first, at most ``cap`` bytes of
    their HTML (but the newest). The worker keeps the pages and the parent
    a mirror with the same sizes: the worker handles tasks in the order they
    are sent, so both sides evict alike."""

    def __init__(self) -> None:
        self.entries: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self.size = 0

    def __contains__(self, ref: str) -> bool:
        return ref in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def keep(self, ref: str, value: Any, size: int, cap: int) -> None:
        self.pop(ref)
        size = max(size, _MIN_PAGE_BYTES)
        self.entries[ref] = (value, size)
        self.size += size
        while self.size > cap and len(self.entries) > 1:
            _, (_, n) = self.entries.popitem(last=False)
            self.size -= n

    def pop(self, ref: str) -> Any:
        got = self.entries.pop(ref, None)
        if got is None:
            return None
        self.size -= got[1]
        return got[0]

    def drop(self, ref: str) -> bool:
        """Take ``ref`` out; whether it was there."""
        had = ref in self.entries
        self.pop(ref)
        return had


class _WorkerState:
    def __init__(self) -> None:
        self.models: OrderedDict[int, SiteModel] = OrderedDict()
        self.pages = _PageCache()
        self._params: tuple[Any, FitParams] | None = None

    def params(self, doc: dict) -> FitParams:
        if self._params is None or self._params[0] != doc:
            self._params = (doc, FitParams.from_json(doc))
        return self._params[1]

    def model(self, head: dict) -> SiteModel | None:
        """The task's model; the parent's mirror of this cache evicts the
        same way, in the same order."""
        token = head.get("token")
        if token is None:
            return None
        model = self.models.get(token)
        doc = head.get("model")
        if doc is not None:
            model = self.models[token] = model_from_json(doc)[1]
            if len(self.models) > _KEEP_MODELS:
                self.models.popitem(last=False)
        elif model is None:
            raise _Missing(token)
        self.models.move_to_end(token)
        return model

    def handle(self, head: dict, blobs: list[memoryview]) -> bytes:
        i = head["i"]
        try:
            params = self.params(head["params"])
            if head["kind"] == "sign":
                ref = head["ref"]
                self.pages.pop(ref)  # a page failing here is not kept
                html, url, enc = _page_args(head, blobs, 0)
                page = Page(html, url, enc, params.scheme, limits=None)
                sigs = sorted(page.signatures)
                self.pages.keep(ref, page, head["size"], head["cap"])
                return encode_frame({"i": i, "sigs": sigs}, [])
            opts = {"mode": head["mode"], "explain": head["explain"], "markdown": head["markdown"],
                    "body_only": head["body_only"]}
            if head["kind"] == "clean":
                model = self.model(head)
                kept: Page | None = self.pages.pop(head["ref"]) if head.get("ref") is not None else None
                if kept is None:
                    if not blobs:  # sent as kept here, and it is not
                        raise _Missing(head["ref"])
                    html, url, enc = _page_args(head, blobs, 0)
                    kept = Page(html, url, enc, params.scheme, limits=None)
                learnt = kept.signatures if head["learn"] else None
                return encode_frame(*_result_frame(i, clean_page(kept, model, **opts), learnt))
            parsed = []
            for at in range(0, len(blobs), 3):
                html, url, enc = _page_args(head, blobs, at)
                parsed.append(Page(html, url, enc, params.scheme, limits=None))
            model = SiteModel.fit(parsed, params)
            results = [clean_page(p, model, **opts) for p in parsed]
            heads, out = [], []
            for r in results:
                h, b = _result_frame(i, r, None)
                heads.append(h)
                out.extend(b)
            return encode_frame({"i": i, "model": model_to_json("", model), "results": heads}, out)
        except _Missing as e:
            return encode_frame({"i": i, "missing": e.args[0]}, [])
        except Exception as e:  # the page fails, the worker goes on
            return encode_frame({"i": i, "error": f"{type(e).__name__}: {e}"[:2000]}, [])


def worker_main(task_fd: int, result_fd: int) -> None:
    """A worker: read tasks from ``task_fd`` and answer each on
    ``result_fd``, in order, until the parent closes the tasks' pipe.

    Ctrl-C and SIGTERM are the crawl's to handle: a worker that died of one
    failed the page it was cleaning while Scrapy closed gracefully. Workers
    are born with both blocked (``ProcessCleaner._spawn``), so one arriving
    while the worker starts waits here to be ignored."""
    for sig in _SHUTDOWN_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SHUTDOWN_SIGNALS)
    try:
        _serve(task_fd, result_fd)
    except BrokenPipeError:  # the crawl closed its end first: it is done with us
        pass


def _serve(task_fd: int, result_fd: int) -> None:
    state = _WorkerState()
    os.write(result_fd, encode_frame({"ready": True}, []))
    with os.fdopen(task_fd, "rb", buffering=_PIPE_BYTES) as tasks:
        while True:
            head = tasks.read(_FRAME.size)
            if len(head) < _FRAME.size:
                return  # the crawl is done with us
            hlen, blen = _FRAME.unpack(head)
            body = tasks.read(hlen + blen)
            if len(body) < hlen + blen:
                return
            frame = decode_frame(head + body, 0)
            assert frame is not None
            out = memoryview(state.handle(frame[0], frame[1]))
            while out:
                out = out[os.write(result_fd, out):]
