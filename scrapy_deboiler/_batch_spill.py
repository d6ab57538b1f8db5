"""The spill file of a batch run: the input items whose parsed pages are
not kept in memory between the passes, read back in order in pass 3."""

from __future__ import annotations

import os
import struct
from typing import IO

from ._batch_pages import Item
from ._files import open_binary

__all__: list[str] = []


class _Spill:
    """Input items not kept in memory, in order, zstd-compressed on disk."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "spill.zst")
        self._out: IO[bytes] | None = None
        self._in: IO[bytes] | None = None

    _FRAME = struct.Struct("<QIQ")  # line number, head bytes, body bytes + 1 (0: no body)

    def write(self, where: int, item: Item) -> None:
        if self._out is None:
            self._out = open_binary(self.path, "w")
        head, body = item
        self._out.write(self._FRAME.pack(where, len(head), 0 if body is None else len(body) + 1) + head)
        if body is not None:
            self._out.write(body)

    def read(self) -> tuple[int, Item]:
        if self._in is None:
            if self._out is not None:
                self._out.close()
                self._out = None
            self._in = open_binary(self.path, "r")
        where, head_len, body_len = self._FRAME.unpack(self._in.read(self._FRAME.size))
        head = self._in.read(head_len)
        return where, (head, self._in.read(body_len - 1) if body_len else None)

    def close(self) -> None:
        for f in (self._out, self._in):
            if f is not None:
                f.close()
