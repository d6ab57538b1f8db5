"""Stable signatures of a page's subtrees, all computed in one bottom-up pass.

Two kinds, both 64-bit hex digests (blake2b):

* **content** signatures: a Merkle hash of a subtree's tag names and text,
  whitespace removed (non-breaking too), case folded; attributes, comments and
  processing instructions ignored. Each subtree is hashed over its own text
  plus the digests of the subtrees below it, so a page costs O(text), not
  O(text x depth) as deboiler's string representation does.
* **template** signatures: the tag structure alone of link-dense subtrees
  (menus, "top stories", related links), with the tags of their nearest
  ancestors. Their links change from page to page, so their content never
  matches, but their shape where they stand does.
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import blake2b

from lxml import etree

# None when not built or switched off (the pure-Python walk gives the same result)
from ._compiled import speedups as _speedups

__all__ = ["Candidates", "DEFAULT_SCHEME", "SignatureScheme", "SignedTree", "sign_tree"]

# Private separators: the loader strips these control characters from pages,
# so page text can never imitate structure.
_OPEN, _END_OPEN, _CLOSE, _CHILD = "\x01", "\x02", "\x05", "\x03"
# Code, not text: per-page tokens in scripts would keep template blocks from
# matching, and code would count as text in link density.
_CODE = frozenset(("script", "style"))
#: blake2b personalisation of template signatures, apart from content ones.
TEMPLATE_PERSON = b"template"


#: Ancestors whose tags a template signature hashes (``SignatureScheme``).
TEMPLATE_CONTEXT = 4
_CONTEXT = "\x04"

#: Hex digits in a signature (64 bits).
SIGNATURE_HEX = 16


def checked(data: dict, key: str, types: tuple[type, ...], lo: float | None = None,
            hi: float | None = None):
    """``data[key]`` when it has one of ``types`` exactly (so no bool for an
    int, no string for a number) and lies in [lo, hi]; else ValueError.
    Signature files are read through this: they are data from disk."""
    value = data[key]
    if type(value) not in types or (lo is not None and not lo <= value <= hi):
        raise ValueError(f"{key!r} must be {' or '.join(t.__name__ for t in types)}"
                         + (f" in [{lo}, {hi}]" if lo is not None else ""))
    return value


def checked_strings(data: dict, key: str) -> list[str]:
    value = data[key]
    if type(value) is not list or len(value) > 1000 or not all(type(v) is str for v in value):
        raise ValueError(f"{key!r} must be a list of at most 1000 strings")
    return value


@dataclass(frozen=True)
class Candidates:
    """Which elements get content signatures.

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
            frozenset(checked_strings(data, "exact")),
            tuple(checked_strings(data, "contains")),
            checked(data, "everything", (bool,)),
            frozenset(checked_strings(data, "exclude")),
        )


#: deboiler's candidate rule, for comparison.
DEBOILER_CANDIDATES = Candidates(
    exact=frozenset(("div", "nav")),
    contains=("form", "navigation", "footer", "header", "menu", "top", "bottom", "left", "right"),
)


@dataclass(frozen=True)
class SignatureScheme:
    """Everything that decides a page's signatures. Models fitted with
    different schemes cannot be compared or merged."""

    #: Every element that can hold text is a candidate by default; measured
    #: against deboiler's div/nav list on annotated pages (docs/measurements.md, "Choosing
    #: the defaults"): finer candidates find shared headings, list items and
    #: links inside containers that differ from page to page.
    candidates: Candidates = Candidates(
        everything=True, exclude=frozenset(("html", "body", "head"))
    )
    #: Template signatures cover subtrees of at least this many elements
    #: whose link text is at least this share of their text. 0 turns them off.
    template_min_elements: int = 4
    template_link_density: float = 0.5
    #: A template signature also hashes the tag names of this many of the
    #: subtree's nearest ancestors: a shop's list of two product links has
    #: the shape of a footer's list of two links, and matched it on every
    #: page. 0 (files written before it): the shape alone.
    template_context: int = TEMPLATE_CONTEXT

    def to_json(self) -> dict:
        data = {
            "candidates": self.candidates.to_json(),
            "template_min_elements": self.template_min_elements,
            "template_link_density": self.template_link_density,
        }
        if self.template_context:
            data["template_context"] = self.template_context
        return data

    @classmethod
    def from_json(cls, data: dict) -> "SignatureScheme":
        return cls(
            Candidates.from_json(data["candidates"]),
            checked(data, "template_min_elements", (int,), 1, 10**6),
            float(checked(data, "template_link_density", (int, float), 0, 1)),
            checked(data, "template_context", (int,), 0, 1000) if "template_context" in data else 0,
        )


DEFAULT_SCHEME = SignatureScheme()


class SignedTree:
    """A page's signatures, descendants before ancestors, with the element
    each belongs to.

    Only subtrees holding text are signed: text-free ones (``<div><img></div>``)
    match across unrelated pages because attributes are ignored, so they are
    never evidence of boilerplate.

    ``starts[i]`` is the index of the first entry inside entry i's subtree:
    entries ``starts[i]..i`` all lie in ``element(i)``'s subtree. Elements are
    valid while the tree is unchanged; removing a subtree invalidates the
    entries inside it only.
    """

    __slots__ = ("signatures", "starts", "chars", "shapes", "total_chars", "_elements", "_root",
                 "_addresses")

    def __init__(
        self,
        signatures: list[str] | None = None,
        elements: list[etree._Element] | None = None,
        starts: list[int] | None = None,
        *,
        root: etree._Element | None = None,
        addresses: list[int] | None = None,
        chars: list[int] | None = None,
        shapes: frozenset[int] = frozenset(),
        total_chars: int = 0,
    ) -> None:
        self.signatures = signatures or []
        self.starts = starts or []
        #: Normalised text characters in each entry's subtree, and in the
        #: whole tree: what cleaning would remove, without walking it again.
        self.chars = chars or []
        self.total_chars = total_chars
        #: Entries whose signature is a template one (tag structure alone).
        self.shapes = shapes
        self._elements = elements
        self._root = root
        self._addresses = addresses

    def element(self, i: int) -> etree._Element:
        if self._elements is not None:
            return self._elements[i]
        # Without elements the entries are the compiled walk's addresses.
        assert _speedups is not None and self._addresses is not None
        return _speedups.element_at(self._root, self._addresses[i])

    def tables(self, entries: list[int]) -> list[etree._Element | None]:
        """Each entry's nearest enclosing ``table`` element, or None; element
        proxies only for the tables (compiled walk)."""
        if self._addresses is None:
            return [next(self.element(i).iterancestors("table"), None) for i in entries]
        assert _speedups is not None  # addresses come from the compiled walk
        tables = _speedups.nearest_tables([self._addresses[i] for i in entries])
        made: dict[int, etree._Element] = {}
        for t in set(tables) - {0}:
            made[t] = _speedups.element_at(self._root, t)
        return [made.get(t) for t in tables]

    def addresses(self, entries: list[int]) -> list[int] | None:
        """libxml2 node addresses of these entries (compiled walk only)."""
        if self._addresses is None:
            return None
        return [self._addresses[i] for i in entries]

    @property
    def elements(self) -> list[etree._Element]:
        if self._elements is None:
            self._elements = [self.element(i) for i in range(len(self.signatures))]
        return self._elements


def normalise(text: str) -> str:
    """What a text or tail contributes: whitespace removed, case folded."""
    return "".join(text.split()).casefold()


def sign_tree(root: etree._Element, scheme: SignatureScheme = DEFAULT_SCHEME) -> SignedTree:
    """Sign ``root``'s subtrees in one bottom-up walk.

    Uses the compiled walk in ``_speedups`` when it was built; this Python
    version defines the result and is the fallback.
    """
    if _speedups is not None:
        fast = _speedups.sign_tree(root, scheme)
        if fast is not None:
            sigs, addresses, starts, chars, shapes, total = fast
            return SignedTree(sigs, None, starts, root=root, addresses=addresses, chars=chars,
                              shapes=frozenset(shapes), total_chars=total)
    return sign_tree_py(root, scheme)


def _in_context(sig: str, el: etree._Element, root: etree._Element, reach: int) -> str:
    """A template signature with the tags of ``el``'s ``reach`` nearest
    ancestors inside ``root``: ``blake2b-64(sig CONTEXT tag END_OPEN ...)``,
    nearest first, under the template personalisation."""
    parts = [sig, _CONTEXT]
    for _ in range(reach):
        if el is root:
            break
        el = el.getparent()
        parts.append(el.tag + _END_OPEN)
    data = "".join(parts).encode("utf-8", "surrogatepass")
    return blake2b(data, digest_size=8, person=TEMPLATE_PERSON).hexdigest()


def sign_tree_py(root: etree._Element, scheme: SignatureScheme = DEFAULT_SCHEME) -> SignedTree:
    """The reference walk: reversed document order over a list of all
    elements, which visits every element after its descendants. (lxml's
    iterwalk slows down quadratically on deep trees while the caller holds
    element proxies, as this function must.)

    content(E) = OPEN tag END_OPEN N(text) + per child: piece(child) N(tail)
                 (the code inside script and style counts as no text)
    piece(C)   = CHILD sig(C) when C is signed, else content(C) CLOSE
    sig(E)     = blake2b-64(content(E)), when E is a candidate holding text
    Template signatures hash shape(E) the same way with tags only, under
    another blake2b personalisation, and sign E when it is link-dense: its
    shape's digest with the tags of its ``template_context`` nearest
    ancestors (``_in_context``).
    """
    candidates = scheme.candidates
    reach = scheme.template_context
    min_elements = scheme.template_min_elements or 1 << 62
    density = scheme.template_link_density
    is_cand: dict[str, bool] = {}
    signatures: list[str] = []
    elements: list[etree._Element] = []
    starts: list[int] = []
    chars: list[int] = []
    shapes: list[int] = []
    # An element's children are the last len(el) entries of these stacks,
    # first child on top, each covering the child's subtree and (for content
    # and text length) its tail.
    content: list[str] = []  # digest or normalised content
    shape: list[str] = []  # digest or tag structure
    # Three counts packed in one int so one sum() adds them all up:
    # elements << 64 | normalised text length << 32 | link text length.
    counts: list[int] = []
    first: list[int] = []  # len(signatures) when the subtree began
    for el in reversed(list(root.iter())):
        tag = el.tag
        tail = normalise(el.tail) if el.tail else ""
        if not isinstance(tag, str):  # comment, PI or entity: only its tail counts
            content.append(tail)
            shape.append("")
            counts.append(len(tail) << 32)
            first.append(len(signatures))
            continue
        text = normalise(el.text) if el.text and tag not in _CODE else ""
        n_chars = len(text)
        n = len(el)
        if n:
            body = text + "".join(reversed(content[-n:]))
            shape_body = "".join(reversed(shape[-n:]))
            total = sum(counts[-n:])
            start = first[-n]
            del content[-n:], shape[-n:], counts[-n:], first[-n:]
            n_el = 1 + (total >> 64)
            n_chars += (total >> 32) & 0xFFFFFFFF
            n_links = total & 0xFFFFFFFF
        else:
            body = text
            shape_body = ""
            n_el = 1
            n_links = 0
            start = len(signatures)
        if tag == "a":
            n_links = n_chars
        cand = is_cand.get(tag)
        if cand is None:
            cand = is_cand[tag] = candidates(tag)
        if n_chars and cand:
            data = (_OPEN + tag + _END_OPEN + body).encode("utf-8", "surrogatepass")
            sig = blake2b(data, digest_size=8).hexdigest()
            signatures.append(sig)
            elements.append(el)
            starts.append(start)
            chars.append(n_chars)
            content.append(_CHILD + sig + tail)
        else:
            content.append(_OPEN + tag + _END_OPEN + body + _CLOSE + tail)
        if n_el >= min_elements:
            data = (_OPEN + tag + _END_OPEN + shape_body).encode("utf-8", "surrogatepass")
            sig = blake2b(data, digest_size=8, person=TEMPLATE_PERSON).hexdigest()
            shape.append(_CHILD + sig)
            if n_chars and n_links >= density * n_chars:
                if reach:
                    sig = _in_context(sig, el, root, reach)
                shapes.append(len(signatures))
                signatures.append(sig)
                elements.append(el)
                starts.append(start)
                chars.append(n_chars)
        else:
            shape.append(_OPEN + tag + _END_OPEN + shape_body + _CLOSE)
        counts.append(n_el << 64 | (n_chars + len(tail)) << 32 | n_links)
        first.append(start)
    total = (counts[-1] >> 32 & 0xFFFFFFFF) - len(normalise(root.tail or "")) if counts else 0
    return SignedTree(signatures, elements, starts, chars=chars, shapes=frozenset(shapes), total_chars=total)
