"""Data tables among a page's matches (``_clean.dropped_entries``): a
table's header row and label column are the same on every page of a site,
so they matched as template; a data table is kept or removed as a whole."""

from __future__ import annotations

from lxml import etree

from ._signatures import SignedTree
from ._text import chars, layout_table, text_chars

__all__ = ["outside_data_tables"]

#: A cell holding more text than this (characters, whitespace left out) is
#: running text: its table lays out a page, old-style, without the block
#: tags ``_text.layout_table`` looks for.
_LONG_CELL = 200


def _data_table(table: etree._Element, found: list[etree._Element]) -> bool:
    """Whether ``table`` is a grid of data whose shared parts (``found``,
    the entries inside it) are its header row and label column: not a
    layout table (block tags or a cell of running text inside), two or
    more rows of two or more cells, not mostly links, not a month's
    calendar, and with a row of its own text or a row of cells that does
    not match whole (a combination of its own: a restaurant's "Monday" and
    "12:00 – 21:30" are each on other places' pages, and a directory lost
    the opening hours of 11 of 30 places). A table whose rows all match
    (a calendar, a table of links) is template even when its caption
    changes from page to page."""
    if layout_table(table, image_rows=True):  # an infobox's picture and caption are no layout
        return False
    grid = days = 0
    rows = list(table.iter("tr"))
    for row in rows:
        cells = [c for c in row if c.tag in ("td", "th")]
        grid += len(cells) >= 2
        for cell in cells:
            text = "".join(cell.itertext())
            if chars(text) > _LONG_CELL:
                return False
            text = text.strip()
            days += text.isdigit() and len(text) <= 2
    if grid < 2 or days >= 28:
        return False
    if 2 * sum(text_chars(a) for a in table.iter("a")) > text_chars(table):
        return False
    inside = set(found)
    for row in rows:
        if _in_any(row, inside, table):
            continue
        own = text_chars(row) - sum(text_chars(el) for el in row.iterdescendants() if el in inside)
        if own > 0 or sum(c.tag in ("td", "th") for c in row) >= 2:
            return True
    return False


def _in_any(el: etree._Element, elements: set, stop: etree._Element) -> bool:
    """Whether ``el`` or an ancestor below ``stop`` is one of ``elements``
    (a row inside a shared ``tbody``)."""
    while el is not None and el is not stop:
        if el in elements:
            return True
        el = el.getparent()
    return False


def outside_data_tables(signed: SignedTree, found: list[int]) -> list[int]:
    """``found`` without the entries inside a data table (``_data_table``).
    A table's header row and label column are the same on every page of a
    site, so they matched as template, and removing them left numbers
    without their names ("2100 20.0%" for "North 2100 20.0%"). A data table
    is kept or removed as a whole."""
    if not found:
        return found
    tables: dict[etree._Element, list[int]] = {}
    free = []
    for i, table in zip(found, signed.tables(found)):
        if table is None:
            free.append(i)
        else:
            tables.setdefault(table, []).append(i)
    if not tables:
        return found
    for table, entries in tables.items():
        if not _data_table(table, [signed.element(i) for i in entries]):
            free.extend(entries)
    return sorted(free, reverse=True)  # outermost's order: last first
