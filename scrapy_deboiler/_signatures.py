"""Stable signatures of candidate subtrees, all computed in one bottom-up pass.

A subtree's signature is a Merkle hash of its normalised content: tag names
and text, whitespace removed (non-breaking too), case folded, attributes,
comments and processing instructions ignored. Each candidate is hashed over
its own text plus the digests of the candidates below it, so a page costs
O(text), not O(text x depth) as deboiler's string representation does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from hashlib import blake2b

from lxml import etree

__all__ = ["Candidates", "DEFAULT_CANDIDATES", "SignedTree", "sign_tree"]

# Private separators: the loader strips these control characters from pages,
# so page text can never imitate structure.
_OPEN, _END_OPEN, _CLOSE, _CHILD = "\x01", "\x02", "\x05", "\x03"

#: Hex digits in a signature (64 bits).
SIGNATURE_HEX = 16


@dataclass(frozen=True)
class Candidates:
    """Which elements are candidate subtrees.

    ``everything`` makes every element a candidate except ``exclude``;
    otherwise a tag counts when it is in ``exact`` or contains one of
    ``contains`` (deboiler's rule, so ``<custom-topbar>`` counts).
    """

    exact: frozenset[str] = frozenset()
    contains: tuple[str, ...] = ()
    everything: bool = False
    exclude: frozenset[str] = frozenset()

    def __call__(self, tag: str) -> bool:
        if tag in self.exclude:
            return False
        return self.everything or tag in self.exact or any(s in tag for s in self.contains)

    def to_json(self) -> dict:
        return {
            "exact": sorted(self.exact),
            "contains": list(self.contains),
            "everything": self.everything,
            "exclude": sorted(self.exclude),
        }

    @classmethod
    def from_json(cls, data: dict) -> "Candidates":
        return cls(
            frozenset(map(str, data["exact"])),
            tuple(map(str, data["contains"])),
            bool(data["everything"]),
            frozenset(map(str, data["exclude"])),
        )


#: Every element that can hold text, measured against deboiler's
#: div/nav/header-like list on ../shared/eval (README: "Choosing the
#: defaults"): finer candidates find shared headings, list items and links
#: inside containers that differ from page to page.
DEFAULT_CANDIDATES = Candidates(
    everything=True,
    exclude=frozenset(("html", "body", "head")),
)


@dataclass
class SignedTree:
    """A page's candidate signatures, descendants before ancestors, with the
    element each belongs to. Only subtrees holding text are signed: text-free
    ones (``<div><img></div>``) match across unrelated pages because
    attributes are ignored, so they are never evidence of boilerplate."""

    signatures: list[str] = field(default_factory=list)
    elements: list[etree._Element] = field(default_factory=list)


def sign_tree(
    root: etree._Element, candidates: Candidates = DEFAULT_CANDIDATES
) -> SignedTree:
    """Sign every text-holding candidate subtree under ``root`` in one
    iterative post-order walk."""
    is_cand: dict[str, bool] = {}
    signatures: list[str] = []
    elements: list[etree._Element] = []
    # In post-order an element's children are the last len(el) entries of
    # these stacks: their contributions (digest or content, plus tail) and
    # whether those hold text.
    done: list[str] = []
    flags: list[bool] = []
    for _, el in etree.iterwalk(root, events=("end",)):
        tag = el.tag
        tail = el.tail or ""
        if not isinstance(tag, str):  # comment, PI or entity: only its tail counts
            done.append(tail)
            flags.append(bool(tail) and not tail.isspace())
            continue
        text = el.text or ""
        n = len(el)
        if n:
            body = text + "".join(done[-n:])
            has_text = True in flags[-n:]
            del done[-n:], flags[-n:]
            if not has_text and text:
                has_text = not text.isspace()
        else:
            body = text
            has_text = bool(text) and not text.isspace()
        cand = is_cand.get(tag)
        if cand is None:
            cand = is_cand[tag] = candidates(tag)
        if has_text and cand:
            norm = "".join((_OPEN + tag + _END_OPEN + body).split()).casefold()
            sig = blake2b(
                norm.encode("utf-8", "surrogatepass"), digest_size=SIGNATURE_HEX // 2
            ).hexdigest()
            signatures.append(sig)
            elements.append(el)
            done.append(_CHILD + sig + tail)
        else:
            done.append(_OPEN + tag + _END_OPEN + body + _CLOSE + tail)
        flags.append(has_text or (bool(tail) and not tail.isspace()))
    return SignedTree(signatures, elements)
