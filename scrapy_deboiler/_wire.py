"""The worker protocol: the messages between the crawl (``_executor``) and
its worker processes (``_worker``), and how they travel.

Each task and answer is a dataclass here, written by ``task_frame`` /
``answer_frame`` and read back by ``read_task`` / ``read_answer``; both
sides import this module, so a field is named in one place. A frame is an
orjson header and the strings it carries as UTF-8 blobs: no pickle, nothing
a worker sends is executed. Both sides are this package at one version (a
worker is started from the crawl's own ``sys.path``), so the header's
layout may change with it.
"""

from __future__ import annotations

import signal
import struct
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Union

import orjson

from ._clean import CleanResult
from ._limits import Skip

__all__ = [
    "KEEP_MODELS", "PIPE_BYTES", "SHUTDOWN_SIGNALS", "Answer", "CleanOptions", "CleanTask", "Cleaned", "Failed",
    "FitTask", "Fitted", "Missing", "PageCache", "PageData", "Ready", "SignTask", "Signed", "Task",
    "answer_frame", "decode_frame", "encode_frame", "read_answer", "read_task", "task_frame", "widen_pipe",
]

#: A frame: the header's length, the blobs' total length, the header (JSON
#: with the blobs' lengths under "b"), the blobs.
_FRAME = struct.Struct("<II")
FRAME_HEAD = _FRAME.size
#: Pipe buffer (Linux ``F_SETPIPE_SZ``): a page, or most of a fit's pages,
#: in one write. The default 64 KiB took several reactor turns a page.
PIPE_BYTES = 1 << 20
#: Linux's F_SETPIPE_SZ (fcntl).
_F_SETPIPE_SZ = 1031


def widen_pipe(fd: int) -> None:
    """Ask for a pipe of ``PIPE_BYTES`` (the crawl's and the CLI's workers)."""
    try:
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        pass
#: Models a worker keeps (least recently used go first); the crawl mirrors
#: the cache.
KEEP_MODELS = 256
#: The least a kept page counts for (bounding their number).
_MIN_PAGE_BYTES = 4096
#: What a terminal's Ctrl-C (to the whole process group) and systemd's stop
#: (SIGTERM to the whole unit) send the workers too.
SHUTDOWN_SIGNALS = {signal.SIGINT, signal.SIGTERM}

#: A page as it travels: its URL, its HTML (text, or bytes with the
#: encoding to decode them by, if known) and that encoding.
PageData = tuple[str, Union[str, bytes], Union[str, None]]


def _blob(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _text(b: memoryview | bytes) -> str:
    return str(b, "utf-8", "surrogatepass")


def encode_frame(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    header["b"] = [len(b) for b in blobs]
    head = orjson.dumps(header)
    return b"".join([_FRAME.pack(len(head), sum(header["b"])), head, *blobs])


def frame_sizes(head: bytes) -> tuple[int, int]:
    """The header's and the blobs' lengths, from a frame's first ``FRAME_HEAD`` bytes."""
    return _FRAME.unpack(head)


def decode_frame(buf: bytearray | bytes, at: int) -> tuple[dict[str, Any], list[memoryview], int] | None:
    """The frame starting at ``at`` (its header, its blobs, where the next
    one starts), or None if ``buf`` does not hold all of it yet. The blobs
    are views of ``buf``: the reader releases them once read."""
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


# -- pages -----------------------------------------------------------------


def _page_blobs(pages: list[PageData]) -> tuple[dict[str, Any], list[bytes]]:
    """Pages as header fields ("raw": which HTML is bytes, "enc": which has
    an encoding) and three blobs each."""
    blobs: list[bytes] = []
    for url, html, encoding in pages:
        blobs += [html if isinstance(html, bytes) else _blob(html), _blob(url), _blob(encoding or "")]
    return ({"raw": [isinstance(html, bytes) for _, html, _ in pages],
             "enc": [enc is not None for _, _, enc in pages]}, blobs)


def _pages(head: dict[str, Any], blobs: list[memoryview]) -> list[PageData]:
    pages = []
    for n, (raw, enc) in enumerate(zip(head["raw"], head["enc"])):
        html, url, encoding = blobs[3 * n:3 * n + 3]
        pages.append((_text(url), bytes(html) if raw else _text(html), _text(encoding) if enc else None))
    return pages


class PageCache:
    """Pages kept parsed by ``ref``, oldest first, at most ``cap`` bytes of
    their HTML (but the newest). The worker keeps the pages and the crawl a
    mirror with the same sizes (and no pages): the worker handles tasks in
    the order they are sent, so both sides evict alike."""

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


# -- tasks -----------------------------------------------------------------


@dataclass(frozen=True)
class CleanOptions:
    """``clean_page``'s options, as a task carries them."""

    mode: str
    explain: bool = False
    markdown: bool = False
    body_only: bool = False
    metadata: bool = False

    def kwargs(self) -> dict[str, Any]:
        """As ``clean_page``'s keyword arguments."""
        return {"mode": self.mode, "explain": self.explain, "markdown": self.markdown,
                "body_only": self.body_only, "metadata": self.metadata}


@dataclass
class SignTask:
    """Parse and sign a page and keep it parsed as ``ref`` (at most ``cap``
    bytes of kept pages; this one counts ``size``)."""

    i: int
    params: dict[str, Any]
    ref: str
    size: int
    cap: int
    page: PageData
    #: Answer the page's metadata summary too (``page_summary``).
    meta: bool = False


@dataclass
class CleanTask:
    """Clean a page: the one kept as ``ref``, else ``page`` (None: sent as
    kept, and the worker must say if it is not). ``token`` names the model
    (None: no model); ``model`` is its document when the worker may lack
    it. ``learn``: answer the page's signatures too."""

    i: int
    params: dict[str, Any]
    options: CleanOptions
    learn: bool
    page: PageData | None = None
    ref: str | None = None
    token: int | None = None
    model: dict[str, Any] | None = None


@dataclass
class FitTask:
    """Fit a site on its pages and clean them with the model."""

    i: int
    params: dict[str, Any]
    options: CleanOptions
    pages: list[PageData]


Task = Union[SignTask, CleanTask, FitTask]


def _options(o: CleanOptions) -> dict[str, Any]:
    return o.kwargs()


def task_frame(task: Task) -> bytes:
    if isinstance(task, SignTask):
        head, blobs = _page_blobs([task.page])
        return encode_frame({"kind": "sign", "i": task.i, "params": task.params, "ref": task.ref,
                             "size": task.size, "cap": task.cap, "meta": task.meta, **head}, blobs)
    if isinstance(task, CleanTask):
        head, blobs = _page_blobs([task.page] if task.page is not None else [])
        return encode_frame({"kind": "clean", "i": task.i, "params": task.params, **_options(task.options),
                             "learn": task.learn, "ref": task.ref, "token": task.token, "model": task.model,
                             **head}, blobs)
    head, blobs = _page_blobs(task.pages)
    return encode_frame({"kind": "fit", "i": task.i, "params": task.params, **_options(task.options), **head},
                        blobs)


def read_task(head: dict[str, Any], blobs: list[memoryview]) -> Task:
    kind, pages = head["kind"], _pages(head, blobs)
    if kind == "sign":
        return SignTask(head["i"], head["params"], head["ref"], head["size"], head["cap"], pages[0], head["meta"])
    options = CleanOptions(head["mode"], head["explain"], head["markdown"], head["body_only"], head["metadata"])
    if kind == "clean":
        return CleanTask(head["i"], head["params"], options, head["learn"], pages[0] if pages else None,
                         head["ref"], head["token"], head["model"])
    if kind == "fit":
        return FitTask(head["i"], head["params"], options, pages)
    raise ValueError(f"unknown task {kind!r}")


# -- answers ---------------------------------------------------------------


@dataclass
class Ready:
    """The worker has started: it could import what it needs."""


@dataclass
class Signed:
    i: int
    signatures: list[str]
    #: The page's ``page_summary``, when the task asked for ``meta``.
    meta: dict[str, list[list[str]]] | None = None


@dataclass
class Cleaned:
    i: int
    result: CleanResult
    #: The page's signatures (sorted), when the task asked to ``learn``.
    signatures: list[str] | None = None


@dataclass
class Fitted:
    i: int
    #: The model's signature document (``_store.model_to_json``).
    model: dict[str, Any]
    results: list[CleanResult]


@dataclass
class Missing:
    """The task names a model (its token) or a kept page (its ref) the
    worker does not have: send it again with them."""

    i: int
    name: int | str


@dataclass
class Failed:
    """The task raised in the worker (the worker goes on)."""

    i: int
    error: str


Answer = Union[Ready, Signed, Cleaned, Fitted, Missing, Failed]


def _result_head(result: CleanResult) -> tuple[dict[str, Any], list[bytes]]:
    """A result's fields and its five blobs: text, html, comments, markdown, title."""
    skipped = [result.skipped.kind, result.skipped.reason] if result.skipped is not None else None
    return ({"removed": result.removed, "notes": result.notes, "skipped": skipped,
             "blocks": result.removed_blocks, "fallback": result.fallback, "model_share": result.model_share,
             "model_chars": result.model_chars, "metadata": result.metadata},
            [_blob(result.text), _blob(result.html), _blob(result.comments), _blob(result.markdown),
             _blob(result.title)])


_RESULT_BLOBS = 5


def _result(head: dict[str, Any], blobs: list[memoryview]) -> CleanResult:
    skipped = head["skipped"]
    return CleanResult(
        text=_text(blobs[0]), html=_text(blobs[1]), removed=head["removed"], notes=list(head["notes"]),
        comments=_text(blobs[2]), skipped=Skip(*skipped) if skipped else None,
        removed_blocks=[tuple(b) for b in head["blocks"]], markdown=_text(blobs[3]), title=_text(blobs[4]),
        fallback=head["fallback"], model_share=head["model_share"], model_chars=head["model_chars"],
        metadata=head["metadata"])


def answer_frame(answer: Answer) -> bytes:
    if isinstance(answer, Ready):
        return encode_frame({"ready": True}, [])
    if isinstance(answer, Signed):
        return encode_frame({"i": answer.i, "sigs": answer.signatures, "meta": answer.meta}, [])
    if isinstance(answer, Cleaned):
        head, blobs = _result_head(answer.result)
        return encode_frame({"i": answer.i, "result": head, "sigs": answer.signatures}, blobs)
    if isinstance(answer, Fitted):
        heads, blobs = [], []
        for r in answer.results:
            h, b = _result_head(r)
            heads.append(h)
            blobs += b
        return encode_frame({"i": answer.i, "model": answer.model, "results": heads}, blobs)
    if isinstance(answer, Missing):
        return encode_frame({"i": answer.i, "missing": answer.name}, [])
    return encode_frame({"i": answer.i, "error": answer.error[:2000]}, [])


def read_answer(head: dict[str, Any], blobs: list[memoryview]) -> Answer:
    """An answer from its frame (copied out of the blobs, which the reader
    then releases)."""
    if head.get("ready"):
        return Ready()
    i = head["i"]
    if "error" in head:
        return Failed(i, str(head["error"]))
    if "missing" in head:
        return Missing(i, head["missing"])
    if "result" in head:
        return Cleaned(i, _result(head["result"], blobs), head["sigs"])
    if "results" in head:
        n = _RESULT_BLOBS
        return Fitted(i, head["model"], [_result(h, blobs[n * k:n * (k + 1)]) for k, h in enumerate(head["results"])])
    return Signed(i, head["sigs"], head.get("meta"))
