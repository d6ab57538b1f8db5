"""React's streamed server rendering, put where the browser puts it.

A page rendered by React's streaming server (Next.js's app router, Remix
...) sends what is ready first and the rest later in the same response:
each late part comes at the end of the body as ``<div hidden id="S:n">``,
and a script moves it into its place, a ``<template id="P:n">`` or the
fallback ("Loading ...") of a ``<template id="B:n">`` that ends at the
comment ``<!--/$-->``. A reader sees the article where it belongs; a
parser without scripts sees it hidden at the end, and content mode, which
leaves hidden elements out, kept the page's header (WCXB dev: 33 pages,
among them articles of 2,000 words extracted as a sale banner). The
scripts name a part and its place with the same number (``$RC("B:4",
"S:4")``, ``$RS("S:5", "P:5")``: all 274 on those pages), so the parts are
moved by their ids, as the scripts would move them, in document order
(a part may hold the place of a later one). The scripts themselves are
not read: some pages come without them. The parser drops comments, so the
boundaries' comments are made marker elements before it runs
(``mark_boundaries``) and removed once the parts are placed. A boundary
without its closing comment (pages saved without comments) gets its part
before its fallback, which stays.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["mark_boundaries", "place_streamed"]

#: The attribute of the elements that stand for React's boundary comments.
_MARK = "data-deboiler-boundary"
_BOUNDARY_COMMENT = re.compile(rb"<!--(\$\??|\$!|/\$)-->")


def mark_boundaries(data: bytes) -> bytes:
    """``data`` with React's boundary comments (``<!--$?-->`` ...
    ``<!--/$-->``) as empty marker elements, which the parser keeps."""
    return _BOUNDARY_COMMENT.sub(lambda m: b'<template ' + _MARK.encode() + b'="' + m.group(1) + b'"></template>',
                                 data)


def place_streamed(root: etree._Element) -> bool:
    """Move each streamed part (``<div hidden id="S:n">``) to its place,
    as React's scripts do, and remove ``mark_boundaries``' markers;
    whether any part was moved. A part whose place is missing, or inside
    the part itself, stays where it is."""
    parts = [el for el in root.iter("div")
             if el.get("hidden") is not None and (el.get("id") or "").startswith("S:")]
    places: dict[str, etree._Element] = {}
    for el in root.iter("template"):
        name = el.get("id") or ""
        if name[:2] in ("B:", "P:"):
            places.setdefault(name, el)
    moved = False
    for part in parts:
        if not _placeable(part, None, root):  # inside a fallback dropped already
            continue
        number = (part.get("id") or "")[2:]
        place = places.get("P:" + number)
        if place is not None and _placeable(place, part, root):
            _insert_before(place, part)  # $RS: the part replaces its placeholder
            _remove(place)
        else:
            place = places.get("B:" + number)
            if place is None or not _placeable(place, part, root):
                continue
            end = _boundary_end(place)
            if end is not None:
                _drop_fallback(place, end)  # $RC: the part replaces the boundary's fallback
                _insert_before(end, part)
            else:
                _insert_before(place, part)
                _remove(place)
        _remove(part)
        moved = True
    for el in [el for el in root.iter("template") if el.get(_MARK) is not None]:
        _remove(el)
    return moved


def _placeable(place: etree._Element, part: etree._Element | None, root: etree._Element) -> bool:
    """Whether ``place`` is in ``root``'s tree (not in a fallback dropped
    already) and outside ``part``."""
    el: etree._Element = place
    while True:
        if el is part:
            return False
        parent = el.getparent()
        if parent is None:  # the document's root, or the top of a dropped fallback
            return el is root or any(el is top for top in root.itersiblings())
        el = parent


def _boundary_end(start: etree._Element) -> etree._Element | None:
    """The marker of the ``<!--/$-->`` comment that closes the boundary
    ``start`` opens (nested boundaries counted, as React's script counts
    them), or None."""
    depth = 0
    for node in start.itersiblings():
        data = node.get(_MARK) if node.tag == "template" else None
        if data is not None:
            if data == "/$":
                if depth == 0:
                    return node
                depth -= 1
            elif data in ("$", "$?", "$!"):
                depth += 1
    return None


def _drop_fallback(start: etree._Element, end: etree._Element) -> None:
    """Remove ``start`` and what follows it up to ``end`` (the text between
    them too: in lxml a node's following text is its tail)."""
    parent = start.getparent()
    assert parent is not None
    node: etree._Element | None = start
    while node is not None and node is not end:
        following = node.getnext()
        parent.remove(node)
        node = following


def _insert_before(anchor: etree._Element, part: etree._Element) -> None:
    """Move ``part``'s text and children before ``anchor``."""
    parent = anchor.getparent()
    assert parent is not None
    if part.text:
        _text_before(anchor, part.text)
    at = parent.index(anchor)
    for child in list(part):
        parent.insert(at, child)  # moves it, with its tail
        at += 1


def _remove(el: etree._Element) -> None:
    """Remove ``el``; its tail (the text after it) stays where it was.
    (A part inside its own boundary's fallback went with the fallback.)"""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        _text_before(el, el.tail)
    parent.remove(el)


def _text_before(el: etree._Element, text: str) -> None:
    """Add ``text`` just before ``el`` (its previous sibling's tail, or
    its parent's text)."""
    previous = el.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + text
    else:
        parent = el.getparent()
        assert parent is not None
        parent.text = (parent.text or "") + text
