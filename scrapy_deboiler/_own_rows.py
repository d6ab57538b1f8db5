"""The rows of a page's own lists (``_clean.dropped_entries``): what a site
match inside them holds is the page's own, where few of the site's pages
share it. A forum's topic lists share the shape of their rows, and their
threads' "Similar topics" boxes the topics' titles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from lxml import etree

from ._signatures import SignedTree
from ._text import text_chars

__all__ = ["ENTRY_CHARS", "ENTRY_REACH", "ENTRY_REPEATS", "own_parts", "own_rows"]

#: A page's own list: this many or more siblings of one tag and class ...
ENTRY_REPEATS = 3
#: ... holding a match this many levels below them or less, and this many
#: characters of text each or fewer, on average (a title, a teaser, a
#: price: not the parts of an article's body).
ENTRY_REACH = 4
ENTRY_CHARS = 400
_TABLE_PARTS = frozenset(("tr", "td", "th", "thead", "tbody", "tfoot"))
#: Rows alike by their tag alone; other siblings are rows where they share a class.
_ENTRY_TAGS = frozenset(("li", "article"))


def own_rows(signed: SignedTree, found: list[int], share: float,
             rare: Callable[[str], bool]) -> list[etree._Element]:
    """The rows of the page's own lists that hold entries of ``found``
    ``rare`` (few of the site's pages share them; the others only count
    where they sit): ``ENTRY_REPEATS`` or more siblings of one tag and
    class (``<li>`` and ``<article>`` may have none), short
    (``ENTRY_CHARS``), their list holding more than ``share`` of the text
    the page's other matches leave, not readers' comments. A forum's three
    topic lists, neighbours in URL order, share the shape of their rows,
    and their threads' "Similar topics" boxes the topics' titles: a new
    user's board lost every title. A box of other pages' items beside an
    article holds less text than the article; a table's rows are
    ``_clean._outside_data_tables``' business. (Most pages' matches are
    all the site's template: they are walked no further, 0.25 ms a page.)"""
    lists: dict[etree._Element, tuple[tuple, set[int]]] = {}
    sigs = signed.signatures
    for i in found:
        if rare(sigs[i]):
            _place(signed, i, lists, True)
    if not lists:
        return []
    for i in found:
        if not rare(sigs[i]):
            _place(signed, i, lists, False)
    chars = signed.chars
    inside = set().union(*(held for _, held in lists.values()))
    left = signed.total_chars - sum(chars[i] for i in found if i not in inside)
    rows = []
    for parent, ((tag, cls), _) in lists.items():
        size = text_chars(parent)
        if size <= share * left or _readers(parent, cls):
            continue
        siblings = [c for c in parent if c.tag == tag and c.get("class") == cls]
        if size <= ENTRY_CHARS * len(siblings):
            rows.extend(siblings)
    return rows


def _place(signed: SignedTree, i: int, lists: dict, new: bool) -> None:
    """Add entry ``i`` to the list whose row holds it (``ENTRY_REACH``
    levels up at most); with ``new``, the first list of rows above it
    (siblings of its ancestor's tag and class) is one."""
    node = signed.element(i)
    for _ in range(ENTRY_REACH + 1):
        parent = node.getparent()
        if parent is None or not isinstance(node.tag, str) or node.tag in _TABLE_PARTS:
            return
        kind = (node.tag, node.get("class"))
        if parent in lists and lists[parent][0] == kind:
            lists[parent][1].add(i)
            return
        if new and (kind[1] or node.tag in _ENTRY_TAGS) and sum(
                1 for c in parent if c.tag == kind[0] and c.get("class") == kind[1]) >= ENTRY_REPEATS:
            lists[parent] = (kind, {i})
            return
        node = parent


def _readers(parent: etree._Element, cls: str | None) -> bool:
    """Whether a list is readers' comments, by its rows' class or the class
    or id of the list or what holds it: their bylines and "Reply" links are
    template where the site's other pages show them."""
    words = [cls or ""]
    node: etree._Element | None = parent
    for _ in range(ENTRY_REACH):
        if node is None or not isinstance(node.tag, str):
            break
        words += [node.get("class") or "", node.get("id") or ""]
        node = node.getparent()
    return "comment" in " ".join(words).lower()


def own_parts(signed: SignedTree, found: list[int], rows: set, rare: Callable[[str], bool]) -> set[int]:
    """The entries of ``found`` in the page's own rows that are the rows'
    own: matched by shape alone (a row's text is its own), or holding a
    row's title, its first link (a title a neighbour's box links to; not a
    "Replies" label, a post's signature), where few of the site's pages
    share the match (``rare``: not a sidebar's list of tags). A row matched
    whole by its text is not its own."""
    shapes = signed.shapes
    out = set()
    for i in found:
        if not rare(signed.signatures[i]):
            continue  # a match most of the site's pages have: a widget's list, not this page's
        el = signed.element(i)
        if el in rows:
            if i in shapes:
                out.add(i)
            continue
        row = next((a for a in el.iterancestors() if a in rows), None)
        if row is not None and (i in shapes or _title_of(row) in (el, *el.iterdescendants("a"))):
            out.add(i)
    # A title differs from row to row; a link every row has ("Reply") is template.
    counts = Counter(signed.signatures[i] for i in out)
    return {i for i in out if i in shapes or counts[signed.signatures[i]] == 1}


def _title_of(row: etree._Element) -> etree._Element | None:
    """A row's first link with words: its entry's title."""
    return next((a for a in row.iter("a") if "".join(a.itertext()).strip()), None)
