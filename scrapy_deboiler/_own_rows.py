"""What a site match holds that is the page's own (``_clean.dropped_entries``):
the rows of the page's own lists (a match inside them few of the site's
pages share, a place of the rows holding many values, a row's title link)
and its headline. A forum's topic lists share the shape of their rows, and
their threads' "Similar topics" boxes the topics' titles; a job board's
companies are on several result pages; a question's title is linked by its
neighbours' "Related" boxes."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable

from lxml import etree

from . import _title
from ._signatures import SignedTree
from ._text import text_chars

__all__ = ["COPY_CHARS", "ENTRY_CHARS", "ENTRY_REACH", "ENTRY_REPEATS", "FIELD_CHARS", "FIELD_ROWS", "FIELD_SPREAD",
           "FIELD_VALUES", "HEADLINE_CHARS", "HEADLINE_REACH", "SHAPE_HEADLINE_CHARS", "own_headline", "own_parts",
           "own_rows", "row_fields", "row_titles", "second_copies"]

_WORD = re.compile(r"\w")
#: Elements that may hold a row's title link alone.
_TITLE_HOLDERS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "strong", "b", "span", "div", "p"))
#: A page's own list: this many or more siblings of one tag and class ...
ENTRY_REPEATS = 3
#: ... holding a match this many levels below them or less, and this many
#: characters of text each or fewer, on average (a title, a teaser, a
#: price: not the parts of an article's body).
ENTRY_REACH = 4
ENTRY_CHARS = 400
#: A table's rows may be a page's own list's (``own_rows``): a forum's topic
#: table, mostly links, is no data table (``_data_tables``), and its rows,
#: alike in shape from one topic list to the next, matched as template.
_TABLE_WRAPS = frozenset(("thead", "tbody", "tfoot"))
_CELLS = frozenset(("td", "th"))
#: Rows alike by their tag alone; other siblings are rows where they share a class.
_ROW_TAGS = frozenset(("li", "article", "tr"))
#: Levels above a match where the page's headline may hold it, and the
#: most text a headline holds (``own_headline``).
HEADLINE_REACH = 3
HEADLINE_CHARS = 300
#: What parts a ``<title>``'s page name from its site's ("Page | Site").
_TITLE_PARTS = _title._SEPARATORS
#: A second copy on a page of a subtree its template holds is the page's
#: own with this much text or more (``second_copies``).
COPY_CHARS = 40
#: A structure-only match holding the headline holds this much text or
#: less (the headline's header: a byline, buttons, a share bar).
SHAPE_HEADLINE_CHARS = 600
#: A row's field (``row_fields``): this many characters of text or fewer (a
#: company, a place, a brand; not a teaser).
FIELD_CHARS = 80
#: ... standing in this share of the rows or more, with this many values or
#: more between them, and a value for this share of them or more.
FIELD_ROWS = 0.8
FIELD_VALUES = 3
FIELD_SPREAD = 0.3


def _like(parent: etree._Element, tag: object, cls: str | None) -> list[etree._Element]:
    """``parent``'s children of ``tag`` and class ``cls``: a list's rows."""
    return [c for c in parent if c.tag == tag and c.get("class") == cls]


def _kinds(cache: dict, parent: etree._Element) -> Counter:
    """How many of ``parent``'s children there are of each (tag, class),
    counted once a parent (``cache``)."""
    counts = cache.get(parent)
    if counts is None:
        counts = cache[parent] = Counter((c.tag, c.get("class")) for c in parent)
    return counts


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
    ``_data_tables.outside_data_tables``' business. (Most pages' matches are
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
        siblings = _like(parent, tag, cls)
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
        if parent is None or not isinstance(node.tag, str) or node.tag in _TABLE_WRAPS:
            return
        kind = (node.tag, node.get("class"))
        if node.tag in _CELLS:  # up to its row
            node = parent
            continue
        if parent in lists and lists[parent][0] == kind:
            lists[parent][1].add(i)
            return
        if new and (kind[1] or node.tag in _ROW_TAGS) and len(_like(parent, *kind)) >= ENTRY_REPEATS:
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
    own, where few of the site's pages share the match (``rare``: not a
    sidebar's list of tags): a whole row (a recipe's card, which its
    neighbours' "You may also like" boxes repeat: a new user's category
    pages lost 7 of their 12), a part matched by shape alone (a row's text
    is its own), its title (its first link: a title a neighbour's box links
    to) or what is in it, a part without links (a card's teaser); not a
    link that is not the title (a post's signature). A part each row has
    ("Replies") is template."""
    shapes = signed.shapes
    out = set()
    for i in found:
        if not rare(signed.signatures[i]):
            continue  # a match most of the site's pages have: a widget's list, not this page's
        el = signed.element(i)
        if el in rows:  # a whole row: its shape, or a card other pages' boxes repeat
            out.add(i)
            continue
        row = next((a for a in el.iterancestors() if a in rows), None)
        if row is None:
            continue
        title = _title_of(row)
        if i in shapes or title in (el, *el.iterdescendants("a")) or not any(True for _ in el.iter("a")) \
                or (title is not None and any(a is title for a in el.iterancestors())):
            out.add(i)
    # A title differs from row to row; a link every row has ("Reply") is template.
    counts = Counter(signed.signatures[i] for i in out)
    return {i for i in out if i in shapes or counts[signed.signatures[i]] == 1}


def _title_of(row: etree._Element) -> etree._Element | None:
    """A row's first link with words: its entry's title."""
    return next((a for a in row.iter("a") if "".join(a.itertext()).strip()), None)


def row_fields(signed: SignedTree, entries: list[tuple[int, etree._Element]], left: int,
               share: float) -> set[etree._Element]:
    """Of shared subtrees (``entries``: index, element), the short values
    that stand in one place of the rows of the page's own list, where that place holds
    different values from row to row: a job card's company and location, a
    product tile's brand. Each value is on some of the site's other pages
    (a company with jobs on three result pages), so it matched, and every
    card of a new user's job board lost its company in both modes. The rows
    are ``ENTRY_REPEATS`` or more siblings of one tag and class, most not
    shared and with text of their own, their list holding more than
    ``share`` of the ``left`` text (not a sidebar's box). A place holding
    a few values many times ("In stock", "On order", "Rated 5.0 out of 5"),
    or that some rows have (a "Top rated" badge), is template, as WCXB's
    gold for shop pages has it; so is a button. A link is a value where
    its place varies so (a topic's author: a new user's board lost every
    row's "by liam_dough8", a member's link other pages repeat; dev and
    WCXB pages summed within 0.015 either way)."""
    shared = {el for _, el in entries}
    kinds: dict[etree._Element, Counter] = {}
    slots: dict[tuple, list[etree._Element]] = defaultdict(list)
    chars = signed.chars  # (the signed text's length: walking each subtree again was 9 % of a page's time)
    for i, el in entries:
        if not 0 < chars[i] <= FIELD_CHARS or any(True for _ in el.iter("button")):
            continue
        node = el
        for _ in range(ENTRY_REACH + 1):
            parent = node.getparent()
            if parent is None or not isinstance(node.tag, str) or node.tag in _TABLE_WRAPS or parent in shared:
                break
            kind = (node.tag, node.get("class"))
            if node is not el and (kind[1] or node.tag in _ROW_TAGS):
                if _kinds(kinds, parent)[kind] >= ENTRY_REPEATS:
                    slots[(parent, kind, _path(el, node))].append(el)
                    break
            node = parent
    fields: set[etree._Element] = set()
    owned: dict[tuple, bool] = {}
    for (parent, kind, steps), found in slots.items():
        rows = _like(parent, *kind)
        values = Counter(" ".join("".join(v.itertext()).split()).lower()
                         for r in rows if (v := _follow(r, steps)) is not None)
        filled = sum(values.values())
        if len(values) < max(FIELD_VALUES, FIELD_SPREAD * filled) or filled < FIELD_ROWS * len(rows):
            continue  # a status ("In stock"), a rating, or a badge some rows have ("Top rated")
        if (parent, kind) not in owned:
            owned[(parent, kind)] = _own_list(parent, rows, shared, left, share)
        if owned[(parent, kind)]:
            fields.update(found)
    return fields


def _path(el: etree._Element, row: etree._Element) -> tuple:
    """Where ``el`` stands below ``row``: (tag, class, index among its like
    siblings) a level, from the row down (``_follow``)."""
    steps = []
    while el is not row:
        parent = el.getparent()
        cls = el.get("class")
        steps.append((el.tag, cls, _like(parent, el.tag, cls).index(el)))
        el = parent
    return tuple(reversed(steps))


def _follow(row: etree._Element, path: tuple) -> etree._Element | None:
    """The element at ``path`` (tag, class, index among its like siblings)
    below ``row``, or None where this row has none."""
    node = row
    for tag, cls, index in path:
        same = _like(node, tag, cls)
        if index >= len(same):
            return None
        node = same[index]
    return node


def _own_list(parent: etree._Element, rows: list[etree._Element], shared: set, left: int, share: float) -> bool:
    """Whether ``rows`` are a list of the page's own (``row_fields``)."""
    if text_chars(parent) <= share * left or _readers(parent, rows[0].get("class")):
        return False
    own = 0
    for row in rows:
        if row in shared:
            continue
        inside = sum(text_chars(d) for d in row.iterdescendants() if d in shared)
        own += text_chars(row) > inside
    return 2 * own > len(rows)


def own_headline(signed: SignedTree, found: list[int], rare: Callable[[str], bool]) -> set[int]:
    """The entries of ``found`` that are the page's headline: all the text
    of an ``<h1>`` the site does not share (``HEADLINE_REACH`` levels down
    at most), or an ``<h1>`` few of the site's pages share (``rare``: a
    copy of the page under another URL). A question's title links to the
    question, and the "Related" boxes of the questions beside it link it by
    the same words: boilerplate mode took a new user's questions' headlines
    for template. A site's name in an ``<h1>`` on every page is matched
    with its ``<h1>``, and not rare."""
    out = set()
    chars = signed.chars
    shapes = signed.shapes
    for i in found:
        if i in shapes and chars[i] <= SHAPE_HEADLINE_CHARS:
            # A structure-only match: the page's header (its <h1>, a byline,
            # "Print" and share buttons) has the same tags on every post,
            # and a question's <h1> is one link (``_shape_headline``).
            if _shape_headline(signed, i, rare):
                out.add(i)
            continue
        if chars[i] > HEADLINE_CHARS:
            continue  # (most entries: a menu, a footer)
        el = signed.element(i)
        if el.tag == "h1":
            if rare(signed.signatures[i]):
                out.add(i)
            continue
        node: etree._Element | None = el.getparent()
        for _ in range(HEADLINE_REACH):
            if node is None or not isinstance(node.tag, str) or node.tag in ("body", "html"):
                break
            if node.tag == "h1":
                if text_chars(node) == text_chars(el):
                    out.add(i)
                break
            node = node.getparent()
    return out


def _shape_headline(signed: SignedTree, i: int, rare: Callable[[str], bool]) -> bool:
    """Whether structure-only entry ``i`` holds an ``<h1>`` (or is one)
    whose words few of the site's pages share: the entries inside the
    ``<h1>`` signed by their text are all ``rare`` (a site's name in an
    ``<h1>`` on every page is not). A post's header of a headline, a
    byline and share buttons had matched by its tags alone, and boilerplate
    and content mode lost every post's headline, author and date."""
    el = signed.element(i)
    h1 = el if el.tag == "h1" else next(el.iter("h1"), None)
    if h1 is None:
        return False
    starts, shapes, signatures = signed.starts, signed.shapes, signed.signatures
    j = i
    if h1 is not el:
        j = next((k for k in range(starts[i], i) if signed.element(k) is h1), -1)
        if j < 0:
            return False  # an <h1> without text: not signed
    own = [k for k in range(starts[j], j + 1) if k not in shapes]
    return bool(own) and (all(rare(signatures[k]) for k in own) or _opens_title(h1))


def _opens_title(h1: etree._Element) -> bool:
    """Whether an ``<h1>`` is the first part of the page's ``<title>``
    ("Install topic 4 - Quill docs"): the page's name, even where the
    site's sidebar links every page by it (a docs site's headline, linked
    to itself beside an "Ask" button). A site's name in its header's
    ``<h1>`` ends the title."""
    title = h1.getroottree().getroot().findtext(".//title") or ""
    first = _TITLE_PARTS.split(title.strip(), maxsplit=1)[0]
    name = " ".join("".join(h1.itertext()).split()).casefold()
    return bool(name) and name == " ".join(first.split()).casefold() and first.strip() != title.strip()


def second_copies(signed: SignedTree, found: list[int]) -> list[int]:
    """The entries of ``found`` (outermost matches) that repeat, on this
    page, a subtree inside another match: a docs section's index lists its
    pages as the sidebar's tree does, every page has that tree, and the
    index lost its own list. Only a copy of text (not a shape), of
    ``COPY_CHARS`` or more."""
    if len(found) < 2:
        return []
    signatures, starts, chars, shapes = signed.signatures, signed.starts, signed.chars, signed.shapes
    inner: set[str] = set()
    for k in found:
        inner.update(signatures[starts[k]:k])
    out = []
    for i in found:
        if signatures[i] in inner and i not in shapes and chars[i] >= COPY_CHARS:
            el = signed.element(i)
            if el.tag in ("ul", "ol", "dl") and _under_headline(el):
                out.append(i)
    return out


def _under_headline(el: etree._Element) -> bool:
    """Whether ``el`` follows an ``<h1>`` in the h1's own section (its
    parent or grandparent, below ``<body>``): a section index's list, not a
    second copy of a menu (a mobile one) elsewhere on the page."""
    ancestors = set(el.iterancestors())
    for h1 in el.getroottree().iter("h1"):
        node = h1
        for _ in range(2):
            child, node = node, node.getparent()
            if node is None or node.tag in ("body", "html"):
                break
            if node in ancestors:
                holder = next(a for a in [el, *el.iterancestors()] if a.getparent() is node)
                if node.index(child) < node.index(holder):
                    return True
                break
    return False


def row_titles(entries: list[tuple[int, etree._Element]]) -> set[etree._Element]:
    """Of shared subtrees (``entries``: index, element), the links that title
    a row of a list (its first link, alone or in a heading of its own) with
    the page's own words after them in the row: "<li><a>Episode 39: What
    batteries taught Greta</a> · November 19, 2024</li>", whose title the
    "More episodes" boxes of other pages link by the same words (a new
    user's archive kept "· November 19, 2024"). A row is one of
    ``ENTRY_REPEATS`` or more siblings of its tag and class; a menu's
    entries are matched whole, their rows with them."""
    shared = {el for _, el in entries}
    kinds: dict[etree._Element, Counter] = {}
    out = set()
    for _, el in entries:
        if el.tag != "a":
            continue
        top = el  # up through a heading around the link alone
        while (parent := top.getparent()) is not None and parent not in shared and len(parent) == 1 \
                and not (parent.text or "").strip() and not (top.tail or "").strip() and parent.tag in _TITLE_HOLDERS:
            top = parent
        row = top.getparent()
        if row is None or row in shared or _title_of(row) is not el:
            continue
        after = [top.tail or ""] + ["".join(c.itertext()) + (c.tail or "") for c in top.itersiblings()
                                    if c not in shared]
        if not any(_WORD.search(t) for t in after):
            continue
        up = row.getparent()
        if up is None:
            continue
        if _kinds(kinds, up)[(row.tag, row.get("class"))] >= ENTRY_REPEATS:
            out.add(el)
    return out
