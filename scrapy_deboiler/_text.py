"""Readable text from a tree: block elements on their own lines, inline
elements joined as the page joins them.

Written here rather than using html-text because it walks iteratively (pages
nest thousands of levels deep; html-text recurses) and in one pass over an
already cleaned tree, with no second cleaning step.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["BLOCK_TAGS", "SKIP_TAGS", "tree_text"]

#: Never shown as text by a browser.
SKIP_TAGS = frozenset(
    "head script style template noscript title svg math select datalist iframe "
    "object embed canvas".split()
)
#: Start a new line before and after.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body br caption center dd details dialog
    dir div dl dt fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5
    h6 header hgroup hr html legend li main menu nav ol p pre section summary
    table tbody tfoot thead tr ul""".split()
)
#: Separated by a space within their line.
_CELL_TAGS = frozenset(("td", "th"))

_BREAK = "\x00"  # cannot occur in lxml text
_WS = re.compile(r"\s+")


def tree_text(root: etree._Element) -> str:
    """Visible text of ``root``, one block a line, whitespace collapsed."""
    parts: list[str] = []
    walker = etree.iterwalk(root, events=("start", "end"))
    pre = 0
    for event, el in walker:
        tag = el.tag
        if not isinstance(tag, str):
            if event == "end" and el.tail:
                parts.append(el.tail)
            continue
        if event == "start":
            if tag in SKIP_TAGS:
                walker.skip_subtree()
                continue
            if tag in BLOCK_TAGS:
                parts.append(_BREAK)
            elif tag in _CELL_TAGS:
                parts.append(" ")
            if tag == "pre":
                pre += 1
            text = el.text
            if text:
                parts.append(text.replace("\n", _BREAK) if pre else text)
        else:
            if tag in BLOCK_TAGS:
                parts.append(_BREAK)
                if tag == "pre":
                    pre -= 1
            elif tag in _CELL_TAGS:
                parts.append(" ")
            tail = el.tail
            if tail:
                parts.append(tail.replace("\n", _BREAK) if pre else tail)
    lines = _WS.sub(" ", "".join(parts)).split(_BREAK)
    return "\n".join(s for s in (line.strip() for line in lines) if s)
