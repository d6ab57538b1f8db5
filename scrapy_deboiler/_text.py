"""Readable text from a tree: block elements on their own lines, inline
elements joined as the page joins them.

Written here rather than using html-text because it walks iteratively (pages
nest thousands of levels deep; html-text recurses) and in one pass over an
already cleaned tree, with no second cleaning step.
"""

from __future__ import annotations

import re
import unicodedata

from lxml import etree

# None when not built or switched off (the pure-Python walk gives the same result)
from ._compiled import speedups as _speedups

__all__ = ["BLOCK_TAGS", "HEADING_TAGS", "PERMALINK_MARKS", "SKIP_TAGS", "SUBHEADINGS", "chars", "drop", "layout_table",
           "permalink", "pre_text", "runs_on", "text_chars", "tree_text"]

#: Never shown as text by a browser.
SKIP_TAGS = frozenset(
    "head script style template noscript title svg math select datalist iframe "
    "object embed canvas".split()
)
#: Start a new line before and after.
#: Headings; ``SUBHEADINGS`` without the page's ``<h1>``: those that head a
#: section (a label, comments, a table).
HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
SUBHEADINGS = HEADING_TAGS - {"h1"}

BLOCK_TAGS = frozenset(
    """address article aside blockquote body br caption center dd details dialog
    dir div dl dt fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5
    h6 header hgroup hr html legend li main menu nav ol p pre section summary
    table tbody tfoot thead tr ul""".split()
)
#: The text of a heading's permalink, a link of its own ("Installation¶":
#: Sphinx, MkDocs; "#", "§", "🔗"): no word of the page.
PERMALINK_MARKS = frozenset(("\u00b6", "\u00a7", "#", "\U0001f517", "\u2693"))


def permalink(a: etree._Element) -> bool:
    """Whether a link is a heading's permalink: a mark alone, to a fragment."""
    return "#" in (a.get("href") or "") and len(a) == 0 and (a.text or "").strip() in PERMALINK_MARKS
#: Separated by a space within their line.
_CELL_TAGS = frozenset(("td", "th"))

_BREAK = "\x00"  # cannot occur in lxml text
# Inside a <pre>, each line starts with a mark (lxml text holds no C0
# controls either): its spacing is kept. The first line of a <pre> starts
# one; a hard line is a line break of the text itself, kept even when
# blank; a soft one starts after a block element nested in the <pre> and is
# dropped when blank.
_SOFT, _HARD, _FIRST = "\x01", "\x02", "\x03"
_MARKS = (_SOFT, _HARD, _FIRST)
_UNMARKED_BREAK = re.compile("\x00(?![\x01-\x03])")


# Classes of tags for the compiled walk (codes as in _speedups.pyx).
_CLASSES: dict[bytes, int] = {
    **{t.encode(): 1 for t in BLOCK_TAGS},
    **{t.encode(): 2 for t in _CELL_TAGS},
    **{t.encode(): 3 for t in SKIP_TAGS},
    b"pre": 4,
    b"br": 5,
}



def tree_text(root: etree._Element) -> str:
    """Visible text of ``root``, one block a line, whitespace collapsed
    except in ``<pre>``, whose lines and indentation are kept (code)."""
    if _speedups is not None:
        text = _speedups.tree_text(root, _CLASSES, True)
        if text is not None:  # finished in C, unless it holds a <pre>
            return finish_text(text) if _BREAK in text else text
    return finish_text(tree_text_py(root))


def finish_text(marked: str) -> str:
    """One line per block, whitespace collapsed, blank lines dropped; the
    lines of a ``<pre>`` as ``pre_text`` gives them (trailing spaces and
    blank first and last lines dropped)."""
    lines = marked.split(_BREAK)
    if _FIRST not in marked:
        return "\n".join(s for s in (" ".join(line.split()) for line in lines) if s)
    out: list[str] = []
    pre: list[str] = []
    for line in lines:
        if line[:1] in _MARKS:
            if line[0] == _FIRST:  # the <pre> before ends here
                out.extend(_trimmed(pre))
                pre = []
            shown = line[1:].rstrip()
            if shown or line[0] == _HARD:
                pre.append(shown)
            continue
        if pre:
            out.extend(_trimmed(pre))
            pre = []
        s = " ".join(line.split())
        if s:
            out.append(s)
    out.extend(_trimmed(pre))
    return "\n".join(out)


def _trimmed(lines: list[str]) -> list[str]:
    """``lines`` without blank lines at either end (a ``<pre>``'s)."""
    start, end = 0, len(lines)
    while end > start and not lines[end - 1]:
        end -= 1
    while start < end and not lines[start]:
        start += 1
    return lines[start:end]


def tree_text_py(root: etree._Element) -> str:
    """The reference walk: text with NUL where lines break."""
    # Bottom-up with a stack, like sign_tree: an element's children are the
    # last len(el) entries (first child on top), each the child's text
    # followed by its tail.
    done: list[str] = []
    br_in_pre = {br for pre in root.iter("pre") for br in pre.iter("br")}
    for el in reversed(list(root.iter())):
        tag = el.tag
        n = len(el)
        if n:
            body = "".join(reversed(done[-n:]))
            del done[-n:]
        else:
            body = ""
        tail = el.tail if el is not root else None
        if not isinstance(tag, str) or tag in SKIP_TAGS:
            done.append(tail or "")
            continue
        text = (el.text or "") + body
        if tag == "pre":  # its lines marked, those of a <pre> inside it already
            text = _UNMARKED_BREAK.sub(_BREAK + _SOFT, text).replace("\n", _BREAK + _HARD)
            text = _BREAK + _FIRST + text + _BREAK
        elif el in br_in_pre:  # a line break of the <pre>'s text, as pre_text reads it
            text = _BREAK + _HARD + text
        elif tag in BLOCK_TAGS:
            text = _BREAK + text + _BREAK
        elif tag in _CELL_TAGS:
            text = " " + text + " "
        done.append(text + tail if tail else text)
    return "".join(done)


_LAYOUT_TAGS = frozenset("p div h1 h2 h3 h4 h5 h6 ul ol dl table pre blockquote form section article".split())


def layout_table(table: etree._Element, image_rows: bool = False) -> bool:
    """A table that lays out a page (cells holding paragraphs, headings,
    lists or tables) is not data: its content is blocks, not rows.
    ``image_rows``: a row holding an image may hold blocks too (an
    infobox's picture and its caption); a table inside is layout all the
    same."""
    if not image_rows:
        return any(isinstance(el.tag, str) and el.tag in _LAYOUT_TAGS and not _cell_paragraph(el)
                   for el in table.iterdescendants())
    for row in table.iter("tr"):
        blocks = [el.tag for el in row.iterdescendants()
                  if isinstance(el.tag, str) and el.tag in _LAYOUT_TAGS and not _cell_paragraph(el)]
        if "table" in blocks or (blocks and next(row.iter("img"), None) is None):
            return True
    return False


def _cell_paragraph(el: etree._Element) -> bool:
    """Whether ``el`` is a ``<p>`` that is all its cell holds: Sphinx
    (docutils) writes every cell's value so (``<td><p>bool</p></td>``), a
    grid of data all the same, not a page laid out."""
    if el.tag != "p":
        return False
    cell = el.getparent()
    return (cell is not None and cell.tag in ("td", "th") and len(cell) == 1
            and not (cell.text or "").strip() and not (el.tail or "").strip())


def pre_text(pre: etree._Element, leave_out: frozenset[str] = frozenset(),
             skip: set | frozenset = frozenset()) -> str:
    """The text of a ``<pre>`` as it shows: its line breaks and indentation
    kept (code), trailing spaces and blank first and last lines dropped,
    what a browser does not show left out, and so are elements of
    ``leave_out`` (blocks of their own to the caller) and the subtrees in
    ``skip`` (boilerplate); their tails stay."""
    parts: list[str] = []
    walker = etree.iterwalk(pre, events=("start", "end"))
    for event, el in walker:
        shown = isinstance(el.tag, str) and el.tag not in SKIP_TAGS and (
            el is pre or (el.tag not in leave_out and el not in skip))
        if event == "start":
            if not shown:
                walker.skip_subtree()  # its end event still comes: the tail is kept there
            elif el.tag == "br":
                parts.append("\n")
            elif el.text:
                parts.append(el.text)
        elif el is not pre and el.tail:
            parts.append(el.tail)
    lines = [line.rstrip() for line in "".join(parts).replace("\r\n", "\n").split("\n")]
    return "\n".join(_trimmed(lines))


#: Characters libxml2 keeps in parsed text (numeric references such as
#: ``&#26;``) but lxml refuses in text set from Python.
_UNSETTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def drop(el: etree._Element) -> None:
    """Detach ``el`` with its subtree but keep its tail text in place."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            _set(prev, "tail", (prev.tail or "") + tail)
        else:
            _set(parent, "text", (parent.text or "") + tail)
    parent.remove(el)


def _set(el: etree._Element, attr: str, text: str) -> None:
    """Set ``el.text`` or ``el.tail``; control characters that came from the
    page's character references (which a browser does not show) are left
    out rather than fail the page."""
    try:
        setattr(el, attr, text)
    except ValueError:
        setattr(el, attr, _UNSETTABLE.sub("", text))


def chars(text: str) -> int:
    """Characters of ``text``, whitespace left out (tables indent their
    markup with it)."""
    return len(text) - sum(map(text.count, " \t\n\r\xa0"))


def text_chars(el: etree._Element) -> int:
    return chars("".join(el.itertext()))


#: Where two inline texts meet with no space between them, none is added
#: before closing punctuation or after an opening bracket ("by
#: <code>open()</code>." is "by open()."); elsewhere a space is, as
#: html-text's ``guess_punct_space`` does: CSS often shows inline elements
#: as blocks ("<span>Mugs</span><span>$12</span>"), and words run together
#: are lost to search, where a space too many is not. Joining them as they
#: stand cost WCXB dev 0.007 of word F1 on collections, 0.005 on listings.
_CLOSING = re.compile(r"[,:;.!?)\]}%\u201d\u2019\u00bb]")
_OPENING = frozenset("([{\u201c\u2018\u00ab")


def runs_on(prev: str, part: str) -> bool:
    """Whether two inline texts that meet with no space between them are
    written together (content mode's text, Markdown): closing punctuation,
    an opening bracket, or inside a name, a call or an amount, as an API
    page writes a signature in spans ("pkg.mod." and "run", "run" and "(":
    a new user's docs read "pkg.mod. run (source)") and a shop a price
    ("£" and "30,000")."""
    a, b = prev[-1], part[0]
    return (a in _OPENING or bool(_CLOSING.match(part))
            or (a == "." and (b.islower() or b == "_") and not prev[-2:-1].isspace())
            or (b == "(" and (a.isalnum() or a == "_"))
            or (unicodedata.category(a) == "Sc" and b.isdigit()))
