"""Content mode's ``clean_html``: the kept blocks in the page's own structure.

List items stay in their lists, rows in their tables, links keep their
targets, emphasis and code stay; nothing is written that the page did not
have (but ``<html><body>`` around, and ``<head><title>`` when the page has a
title). The text is exactly the kept blocks' text (``clean_text``): the walk
gives an element's text to the block that owns it as ``_content.page_blocks``
does, leaving out boilerplate subtrees, what a browser does not show and
blocks that were not kept.

Written as a string in one iterative walk over the page's tree (pages nest
thousands of levels deep), which it does not change: the Page may be
cleaned again, and Markdown (``_markdown.content_tree``) prunes the same
tree afterwards. Only the kept blocks, their ancestors and those ancestors'
children are visited.
"""

from __future__ import annotations

import re
from html import escape
from urllib.parse import urljoin, urlsplit

from lxml import etree

from ._text import BLOCK_TAGS, SKIP_TAGS

# None when not built or switched off (content_html_py writes the same)
from ._compiled import speedups as _speedups

__all__ = ["ATTRIBUTES", "INLINE_TAGS", "WRAPPER_TAGS", "content_html", "content_html_py"]

#: Text-level elements written inside kept content (others, such as
#: ``span`` or ``font``, give their text without their tag). Table cells
#: are text of their row's block.
INLINE_TAGS = frozenset(
    "a abbr b bdi bdo big br cite code data del dfn em i img ins kbd mark q s samp small strike "
    "strong sub sup td th time tt u var wbr".split()
)
#: Elements without text of their own written around kept blocks: what
#: gives the blocks their meaning (an item in its list, a row in its table,
#: a paragraph in its quote or list item, a caption in its figure). Generic
#: containers (``div``, ``section``, ``article``, ``main`` ...) are left out.
WRAPPER_TAGS = INLINE_TAGS | frozenset(
    "ul ol menu dir li dl dt dd table caption thead tbody tfoot tr blockquote figure figcaption "
    "pre p h1 h2 h3 h4 h5 h6 details".split()
)
#: Kept blocks are written with their own tag, except these: ``html`` and
#: ``body`` are the output's own, and a browser drops ``frameset`` inside a
#: body.
_UNWRITTEN = frozenset(("html", "body", "frameset"))
_VOID = frozenset(("br", "wbr", "img"))
#: Inline elements dropped when they hold no text nor image (an empty
#: ``<a href>`` or ``<b></b>``); cells stay, or the columns would shift.
_DROP_EMPTY = INLINE_TAGS - _VOID - {"td", "th"}
#: Closed ``details`` and ``dialog`` hide their content in a browser: the
#: kept text inside is shown.
_OPENED = frozenset(("details", "dialog"))
#: Attributes written; True: a URL (made absolute). ``class`` and ``style``
#: are the page's styling, which the clean page does not have (a framework
#: class such as ``hidden`` or a ``display: none`` would hide kept text
#: where the page's CSS is loaded); ``on*`` handlers are scripts, and
#: clean_html must be safe to open; ``id`` could clash with the
#: embedding page's.
ATTRIBUTES = {
    "href": True, "src": True, "cite": True,
    "alt": False, "title": False, "colspan": False, "rowspan": False, "headers": False,
    "scope": False, "abbr": False, "datetime": False, "lang": False, "dir": False,
    "start": False, "reversed": False, "type": False, "value": False,
}
_UNSAFE_URL = re.compile(r"\s*(javascript|vbscript|data):", re.I)
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_SPACE = " \t\n\r\f"  # HTML's white space (not U+00A0)
_WORD = re.compile(r"\w")
_SKIPPED = (None, -1, False, False, 0, None, 0)
#: Table parts are written only inside the written part they belong in (a
#: stray cell, which lxml keeps, is dropped by a browser's parser).
_TABLE_PARENTS = {"td": ("tr",), "th": ("tr",), "tr": ("table", "thead", "tbody", "tfoot"),
                  "thead": ("table",), "tbody": ("table",), "tfoot": ("table",), "caption": ("table",)}
# Elements open around, as bits: a browser's parser closes an open <p>
# at the start of these (or of another <p>), an open <li> at an <li> and
# <dt>/<dd> at a <dt> or <dd> (across a <div>), and an <a> at an <a>.
# Taking out the page's containers can put them so (an <li> in a <div> in
# an <li>): such an element is not written (its text is).
_P, _LI, _DD, _A = 1, 2, 4, 8
_CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer "
    "header hgroup main menu nav ol p section summary ul h1 h2 h3 h4 h5 h6 pre form table hr li dd dt".split())
#: What a browser's parser takes inside each table part; anything else
#: (text too) it moves out of the table. A table holding such (the page's
#: markup, or a container taken out) is not written as a table.
_TABLE_CHILDREN = {"table": frozenset(("caption", "colgroup", "thead", "tbody", "tfoot", "tr")),
                   "thead": frozenset(("tr",)), "tbody": frozenset(("tr",)), "tfoot": frozenset(("tr",)),
                   "tr": frozenset(("td", "th"))}
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_SCOPE = frozenset(("table", "td", "th", "caption"))  # end the scope of <p> and <a>
_NOT_SPECIAL = frozenset(("p", "div", "address", "a")) | INLINE_TAGS


class _Urls:
    """Link targets made absolute against the page's URL (and its
    ``<base href>``). ``urljoin`` costs 10-13 us a call: targets that start
    with a scheme, ``//``, ``/``, ``?`` or ``#`` are joined by hand, and
    each target once a page. Without a page URL relative targets stay as
    they are."""

    def __init__(self, root: etree._Element, url: str) -> None:
        self.root = root
        self.url = url
        self.base: str | None = None
        self.seen: dict[str, str] = {}

    def _base(self) -> str:
        base = self.url
        el = self.root.find("head/base")
        if el is not None and el.get("href"):
            href = el.get("href").strip()
            base = urljoin(base, href) if base else href
        parts = urlsplit(base)
        self.origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
        self.scheme = parts.scheme
        self.no_query = base.split("#", 1)[0].split("?", 1)[0]
        self.no_fragment = base.split("#", 1)[0]
        self.base = base
        return base

    def __call__(self, value: str) -> str | None:
        got = self.seen.get(value)
        if got is not None:
            return got
        href = value.strip()
        if _UNSAFE_URL.match(href):
            return None
        base = self.base if self.base is not None else self._base()
        if not base or _SCHEME.match(href):
            got = href
        elif href.startswith("//"):
            got = f"{self.scheme}:{href}" if self.scheme else href
        elif href.startswith("/") and self.origin:
            got = self.origin + href
        elif href.startswith("#"):
            got = self.no_fragment + href
        elif href.startswith("?"):
            got = self.no_query + href
        else:
            got = urljoin(base, href)
        self.seen[value] = got
        return got


def absolute_links(root: etree._Element, url: str) -> _Urls | None:
    """Link targets made absolute against ``url`` and the ``<base href>``
    of ``root`` as it is now (read at once: Markdown's ``content_tree``
    prunes the ``<head>``), or None without a URL."""
    if not url:
        return None
    urls = _Urls(root, url)
    urls._base()
    return urls


def _trim(text: str) -> str:
    """``text`` with white space at either end cut to one space (source
    indentation). Runs inside are left to the browser: collapsing them
    with a regular expression cost 0.3 ms a page of 8,000 characters."""
    if text[0] in _SPACE:
        text = " " + text.lstrip(_SPACE)
    if text[-1] in _SPACE:
        text = text.rstrip(_SPACE) + " "
    return text


#: Start tags of elements without attributes (most of them: 0.1 ms a page).
_PLAIN = {t: f"<{t}>" for t in WRAPPER_TAGS | BLOCK_TAGS if t not in ("a", "img") and t not in _OPENED}


def _start_tag(items: list, tag: str, urls: _Urls) -> str | None:
    """``<tag attr="...">`` with the ``ATTRIBUTES`` among ``items`` (the
    element's); None for a link without a usable target or an image
    without source or text."""
    attrs = []
    for name, value in items:
        url = ATTRIBUTES.get(name)
        if url is None:
            continue
        if url:
            value = urls(value)
            if value is None:
                continue
        attrs.append(f' {name}="{escape(value)}"')
    if tag == "a" and not any(a.startswith(" href=") for a in attrs):
        return None
    if tag == "img" and not any(a.startswith(" src=") or (a.startswith(" alt=") and a != ' alt=""')
                                for a in attrs):
        return None
    if tag in _OPENED:
        attrs.append(" open")
    return f"<{tag}{''.join(attrs)}>"


def _hidden_left_out(kept: list[etree._Element], skip: set | frozenset, hidden) -> bool:
    """Whether the kept blocks were read without what a browser hides.
    ``judge_blocks`` reads hidden elements only when nothing else remains:
    then every block lies in a hidden element or has no visible word, and
    otherwise none does. One block (not a ``<pre>``, whose text always
    holds its hidden parts) tells which."""
    el = next((e for e in kept if e.tag != "pre"), None)
    if el is None:
        return True  # <pre>s only: the same output either way
    node = el
    while node is not None:
        if node.tag not in ("html", "body") and hidden(node):
            return False
        node = node.getparent()
    walker = etree.iterwalk(el, events=("start", "end"))
    for event, node in walker:
        if event == "start":
            if node is el:
                text = node.text
            elif (not isinstance(node.tag, str) or node.tag in SKIP_TAGS or node.tag in BLOCK_TAGS
                  or node in skip or hidden(node)):
                walker.skip_subtree()
                continue
            else:
                text = node.text
        elif node is el:
            continue
        else:
            text = node.tail
        if text and _WORD.search(text):
            return True
    return False


_END = {t: f"</{t}>" for t in WRAPPER_TAGS | BLOCK_TAGS}
_DROP_EMPTY_END = frozenset(_END[t] for t in _DROP_EMPTY)
#: Tags written only after the checks above (tables, lists, paragraphs ...).
_CHECKED = _CLOSES_P | _HEADINGS | set(_TABLE_PARENTS) | {"a"}
#: (bits kept, bits set) of ``_P`` ... inside a written element.
_MASKS = {}
for _t in WRAPPER_TAGS | BLOCK_TAGS:
    _keep = ~0
    if _t in _SCOPE:
        _keep &= ~(_P | _A)
    if _t not in _NOT_SPECIAL:
        _keep &= ~(_LI | _DD)
    _set = {"p": _P, "li": _LI, "dt": _DD, "dd": _DD, "a": _A}.get(_t, 0)
    if _keep != ~0 or _set:
        _MASKS[_t] = (_keep, _set)
#: The bits of ``_P`` ... under which an element is not written (a browser
#: would close the open one first).
_BLOCKED_BY = {t: (_P if t in _CLOSES_P else 0) | (_LI if t == "li" else 0) | (_DD if t in ("dt", "dd") else 0)
               | (_A if t == "a" else 0) for t in _CLOSES_P | {"a"}}
del _t, _keep, _set


# The sets above as one number a tag, for the compiled walk
# (``_speedups.content_body``, whose enum names the same bits): flags in
# bits 0-18; the open-element bits (``_P`` ...) it clears, sets and is
# blocked by in 20-23, 24-27, 28-31; what it is as the innermost written
# element (``around``: one of ``_AROUND``, or a heading) in 32-34; the
# ``around`` values a table part needs in 35-41 and those a heading
# refuses in 42-48; which table child it is in 49-51 and, for a table
# part, the children it takes in 52-59.
_AROUND = sorted({p for parents in _TABLE_PARENTS.values() for p in parents})
_AROUND_HEADING = len(_AROUND) + 1
_TABLE_CHILD = sorted({c for children in _TABLE_CHILDREN.values() for c in children})
assert _P | _LI | _DD | _A < 16 and _AROUND_HEADING < 7 and len(_TABLE_CHILD) <= 8


def _around(tag: str) -> int:
    return _AROUND.index(tag) + 1 if tag in _AROUND else _AROUND_HEADING if tag in _HEADINGS else 0


def _tag_bits(tag: str) -> int:
    flags = [tag in BLOCK_TAGS, tag in SKIP_TAGS, tag in WRAPPER_TAGS, tag in INLINE_TAGS, tag in _UNWRITTEN,
             tag in _VOID, tag in _DROP_EMPTY, tag in _OPENED, tag in _PLAIN, tag in _HEADINGS, tag == "a",
             tag == "img", tag == "picture", tag == "figure", tag == "pre", tag == "table", tag == "br",
             tag in ("html", "body"), tag in _TABLE_CHILD]
    bits = sum(1 << i for i, f in enumerate(flags) if f)
    keep, add = _MASKS.get(tag, (~0, 0))
    bits |= (~keep & 15) << 20 | add << 24 | _BLOCKED_BY.get(tag, 0) << 28 | _around(tag) << 32
    if tag in _TABLE_PARENTS:
        bits |= sum(1 << _around(p) for p in _TABLE_PARENTS[tag]) << 35
    if tag in _HEADINGS:
        bits |= 1 << _AROUND_HEADING << 42
    if tag in _TABLE_CHILD:
        bits |= _TABLE_CHILD.index(tag) << 49
    if tag in _TABLE_CHILDREN:
        bits |= sum(1 << _TABLE_CHILD.index(c) for c in _TABLE_CHILDREN[tag]) << 52
    return bits


_TAG_BITS = {t.encode(): _tag_bits(t) for t in BLOCK_TAGS | SKIP_TAGS | WRAPPER_TAGS | _CLOSES_P | _HEADINGS
             | set(_TABLE_PARENTS) | set(_TABLE_CHILD) | {"picture", "html", "body"}}
_ATTRIBUTE_URLS = {name.encode(): url for name, url in ATTRIBUTES.items()}


def _broken_tables(kept: list[etree._Element], holds: set) -> set:
    """Tables that would hold, written, what a browser moves out of them:
    a kept block or a container of one where the table part it is in
    takes none (``_TABLE_CHILDREN``), or text or another element beside
    a kept table part's rows or cells."""
    broken = set()
    for el in [*kept, *holds]:
        parent = el.getparent()
        inside = _TABLE_CHILDREN.get(parent.tag) if parent is not None else None
        bad = inside is not None and el.tag not in inside
        if not bad and el.tag in _TABLE_CHILDREN and el not in holds:  # a kept table part: its own text
            allowed = _TABLE_CHILDREN[el.tag]
            bad = bool(el.text and el.text.strip()) or any(
                c.tag not in allowed or (c.tail and c.tail.strip()) for c in el)
            parent = el
        if bad:
            while parent is not None and parent.tag != "table":
                parent = parent.getparent()
            if parent is not None:
                broken.add(parent)
    return broken


def content_html(root: etree._Element, kept: list[etree._Element], skip: set | frozenset = frozenset(),
                 hidden=None, url: str = "") -> str:
    """The HTML of the ``kept`` block elements (``select_content``'s, in
    block order) in the structure of ``root``'s tree, leaving out the
    subtrees in ``skip`` and, inside kept blocks, those ``hidden(el)``
    hides when the blocks were read without them. Links, image sources and
    quotes' sources are made absolute against ``url``.

    The compiled walk (``_speedups.content_body``) when built and
    ``hidden`` is content mode's own test (or None): the Python walk cost
    a quarter of content mode on pages without a site model.
    ``content_html_py`` defines the result; the tests compare the two."""
    if _speedups is not None:
        is_hidden, class_hides = _HIDES or _hides()
        if hidden is None or hidden is is_hidden:
            body = _speedups.content_body(root, kept, skip, None if hidden is None else class_hides,
                                          _Urls(root, url), _TAG_BITS, _ATTRIBUTE_URLS)
            return _document(root, body, _speedups.child_text(root, b"head", b"title"))
    return content_html_py(root, kept, skip, hidden, url)


_HIDES: tuple | None = None


def _hides() -> tuple:
    """``_hidden._is_hidden`` and its class test, the hiding the compiled
    walk knows."""
    global _HIDES
    from ._hidden import _class_hides, _is_hidden

    _HIDES = (_is_hidden, _class_hides)
    return _HIDES


def content_html_py(root: etree._Element, kept: list[etree._Element], skip: set | frozenset = frozenset(),
                    hidden=None, url: str = "") -> str:
    """``content_html`` in Python: the reference for the compiled walk."""
    kept_set = set(kept)
    holds: set = set()
    for el in kept:
        parent = el.getparent()
        while parent is not None and parent not in holds:  # shared ancestors once: no n x depth
            holds.add(parent)
            parent = parent.getparent()
    broken = _broken_tables(kept, holds)
    if hidden is not None and not _hidden_left_out(kept, skip, hidden):
        hidden = None
    urls = _Urls(root, url)
    out: list[str] = []
    last = 0  # len(out) after the last text or image written
    # Frames: (end tag or None, owner, raw, shown only, start index, tag
    # of the innermost element written around, elements open around as
    # _P ... bits).
    # owner: 1 inside a kept block's own content, 0 not, 2 images only (a
    # figure's images around its kept caption), -1 a skipped element.
    # raw: inside a <pre> (white space as it is). shown only: leave out
    # what a browser hides (not inside a kept <pre>: its text is pre_text's).
    frames: list[tuple] = [(None, 0, False, False, 0, None, 0)]
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        if event == "start":
            _, owner, raw, shown_only, _, around, opened = frames[-1]
            tag = el.tag
            items = None
            if el in kept_set:
                owner = 1
                shown_only = hidden is not None and tag != "pre"
                write = tag in BLOCK_TAGS and tag not in _UNWRITTEN
            elif el in holds:
                if tag in BLOCK_TAGS:
                    owner = 2 if tag == "figure" else 0
                write = tag in WRAPPER_TAGS
            elif owner == 1:
                if (tag in BLOCK_TAGS and tag != "br") or tag in SKIP_TAGS or el in skip:
                    walker.skip_subtree()
                    frames.append(_SKIPPED)
                    continue
                items = el.items()
                if items and shown_only and hidden(el):  # hidden needs an attribute
                    walker.skip_subtree()
                    frames.append(_SKIPPED)
                    continue
                write = tag in INLINE_TAGS
            elif owner == 2 and tag in ("img", "a", "picture") and el not in skip and not (
                    hidden is not None and hidden(el)):
                write = tag != "picture"
            else:
                walker.skip_subtree()
                frames.append(_SKIPPED)
                continue
            start = len(out)
            end = None
            if write and tag in _CHECKED and (
                    (opened and opened & _BLOCKED_BY.get(tag, 0))
                    or (tag in _TABLE_PARENTS and around not in _TABLE_PARENTS[tag])
                    or (tag == "table" and el in broken) or (tag in _HEADINGS and around in _HEADINGS)):
                write = False
            if write:
                if items is None:
                    items = el.items()
                opening = None if items else _PLAIN.get(tag)
                if opening is None:
                    opening = _start_tag(items, tag, urls)
                if opening is not None:
                    out.append(opening)
                    if tag in _VOID:
                        last = len(out)
                    else:
                        end = _END[tag]
                        around = tag
                        masks = _MASKS.get(tag)
                        if masks is not None:
                            opened = (opened & masks[0]) | masks[1]
            if tag == "pre":
                raw = True
            frames.append((end, owner, raw, shown_only, start, around, opened))
            if owner != 1:
                continue
            text = el.text  # the element's own text, written below
        else:
            if event == "end":
                end, _, _, _, start, _, _ = frames.pop()
                if end is not None:
                    if last <= start and end in _DROP_EMPTY_END:  # nothing shown inside
                        spaced = len(out) > start + 1
                        del out[start:]
                        if spaced:
                            out.append(" ")
                    else:
                        out.append(end)
            frame = frames[-1]
            if frame[1] != 1:
                continue
            text, raw = el.tail, frame[2]  # the text after it, in its parent's block
        if text:
            if raw:
                out.append(escape(text, False))
                if not text.isspace():
                    last = len(out)
            elif text.isspace():
                out.append(" ")
            else:
                out.append(escape(_trim(text), False))
                last = len(out)
    title = root.find("head/title")
    return _document(root, "".join(out), title.text if title is not None else None)


def _document(root: etree._Element, body: str, title: str | None) -> str:
    """The written ``body`` in ``<html><body>``, with the page's language
    and direction, and its ``<title>`` (the text of ``head/title``) in a
    ``<head>``."""
    head = ""
    if title and title.strip():
        head = f"<head><title>{escape(' '.join(title.split()), False)}</title></head>"
    attrs = "".join(f' {name}="{escape(root.get(name))}"' for name in ("lang", "dir")
                    if root.tag == "html" and root.get(name))
    return f"<html{attrs}>{head}<body>{body}</body></html>"
