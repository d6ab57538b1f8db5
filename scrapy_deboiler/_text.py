"""Readable text from a tree: block elements on their own lines, inline
elements joined as the page joins them.

Written here rather than using html-text because it walks iteratively (pages
nest thousands of levels deep; html-text recurses) and in one pass over an
already cleaned tree, with no second cleaning step.
"""

from __future__ import annotations

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


def tree_text(root: etree._Element) -> str:
    """Visible text of ``root``, one block a line, whitespace collapsed."""
    # Bottom-up with a stack, like sign_tree: an element's children are the
    # last len(el) entries (first child on top), each the child's text
    # followed by its tail.
    done: list[str] = []
    for el in reversed(list(root.iter())):
        tag = el.tag
        n = len(el)
        if n:
            body = "".join(reversed(done[-n:]))
            del done[-n:]
        else:
            body = ""
        if not isinstance(tag, str) or tag in SKIP_TAGS:
            done.append(el.tail or "")
            continue
        text = (el.text or "") + body
        if tag in BLOCK_TAGS:
            if tag == "pre":
                text = text.replace("\n", _BREAK)
            text = _BREAK + text + _BREAK
        elif tag in _CELL_TAGS:
            text = " " + text + " "
        tail = el.tail
        done.append(text + tail if tail else text)
    lines = ("".join(done)).split(_BREAK)
    return "\n".join(s for s in (" ".join(line.split()) for line in lines) if s)
