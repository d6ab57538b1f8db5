"""Stable signatures of candidate subtrees, all computed in one bottom-up pass.

A subtree's signature is a Merkle hash of its normalised content: tag names
and text, whitespace removed, case folded, attributes ignored. Each candidate
is hashed once over its own text plus the 8-byte digests of the candidates
below it, so a page costs O(text), not O(text x depth) as a string
representation would.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import blake2b

from lxml import etree

__all__ = ["Candidates", "DEFAULT_CANDIDATES", "Signed", "sign_tree", "text_signatures"]

# Private separators: these control characters cannot occur in lxml text, so
# page text can never imitate structure.
_OPEN, _END_OPEN, _CLOSE = "\x01", "\x02", "\x05"
_CHILD_TEXT, _CHILD_BLANK, _END_CHILD = "\x03", "\x06", "\x04"
_WS = re.compile(r"\s+")
_STRUCTURE = re.compile("\x01[^\x02]*\x02|\x05|\x06[0-9a-f]*\x04")

DIGEST_SIZE = 8


@dataclass(frozen=True)
class Candidates:
    """Which tags are candidate subtrees: exact names, or names containing a
    substring (deboiler's rule, so ``<custom-topbar>`` counts)."""

    exact: frozenset[str]
    contains: tuple[str, ...] = ()

    def __call__(self, tag: str) -> bool:
        return tag in self.exact or any(s in tag for s in self.contains)

    def to_json(self) -> dict:
        return {"exact": sorted(self.exact), "contains": list(self.contains)}

    @classmethod
    def from_json(cls, data: dict) -> "Candidates":
        return cls(frozenset(data["exact"]), tuple(data["contains"]))


DEFAULT_CANDIDATES = Candidates(
    exact=frozenset(
        "div nav aside section ul ol li table tr p dl".split()
    ),
    contains=(
        "form", "navigation", "footer", "header", "menu",
        "top", "bottom", "left", "right",
    ),
)


@dataclass
class Signed:
    """A candidate's digest, whether it holds text, and the element."""

    digest: bytes
    has_text: bool
    element: etree._Element


def sign_tree(
    root: etree._Element, candidates: Candidates = DEFAULT_CANDIDATES
) -> list[Signed]:
    """Sign every candidate subtree under ``root`` (descendants first)."""
    cache: dict[str, bool] = {}
    out: list[Signed] = []
    stack: list[list[str]] = []
    cur: list[str] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if event == "start":
            stack.append(cur)
            if isinstance(tag, str):
                cur = [_OPEN, tag, _END_OPEN, el.text or ""]
            else:  # a comment or PI in a tree the caller built: no content
                cur = []
            continue
        cur.append(_CLOSE)
        parent = stack.pop()
        if isinstance(tag, str):
            cand = cache.get(tag)
            if cand is None:
                cand = cache[tag] = candidates(tag)
            if cand:
                norm = _WS.sub("", "".join(cur)).casefold()
                digest = blake2b(
                    norm.encode("utf-8", "surrogatepass"), digest_size=DIGEST_SIZE
                ).digest()
                has_text = _CHILD_TEXT in norm or bool(_STRUCTURE.sub("", norm))
                out.append(Signed(digest, has_text, el))
                parent.append(
                    (_CHILD_TEXT if has_text else _CHILD_BLANK) + digest.hex() + _END_CHILD
                )
            else:
                parent.extend(cur)
        tail = el.tail
        if tail:
            parent.append(tail)
        cur = parent
    return out


def text_signatures(signed: Iterable[Signed]) -> set[bytes]:
    """The distinct digests of subtrees that hold text: the evidence a site
    model is fitted on (text-free subtrees like ``<div><img></div>`` match
    across unrelated pages because attributes are ignored)."""
    return {s.digest for s in signed if s.has_text}
