"""A text block of a page: what content mode judges, one at a time."""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

# None when not built or switched off (only the compiled table makes _TableBlocks)
from ._compiled import speedups as _speedups

__all__ = ["Block"]

@dataclass
class Block:
    """The text one block-level element holds directly (nested blocks are
    blocks of their own)."""

    element: etree._Element
    depth: int
    hints: int  # bit set over HINTS, from the element and its ancestors
    near: bool = False  # inside a subtree that neighbouring pages share
    parts: list[str] = field(default_factory=list)
    link_chars: int = 0
    text: str = ""
    words: int = 0
    place: object = None  # where it sits (place_keys); set by judge_blocks


class _TableBlock(Block):
    """A Block of the compiled table. Its element proxy is made when first
    asked for (making one for each block cost 0.6 ms on a page of 400
    paragraphs, and content mode needs none: ``tag`` comes with the
    table)."""

    def __getattr__(self, name: str):
        if name == "element":
            d = self.__dict__
            assert _speedups is not None  # only the compiled table makes these
            el = d["element"] = _speedups.element_at(d["_root"], d["_address"])
            return el
        raise AttributeError(name)
