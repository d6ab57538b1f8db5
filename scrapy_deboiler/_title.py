"""The page's headline, for ``clean_title``.

A page states its headline up to three times: the ``<h1>`` a reader sees,
``og:title`` for sharing and ``<title>`` for the browser's tab, the last two
often with the site's name beside it ("Headline | Example News"). None is
reliable alone: on some sites the ``<h1>`` is the logo or a slogan, and
``<title>`` carries the site's name and sections. So they vouch for each
other: an ``<h1>`` made mostly of the words of ``<title>`` or ``og:title``
is the headline; without one, ``<title>`` with the site's name cut.

No Scrapy here: ``clean_page`` calls ``page_title`` on the parsed page,
before anything is cut out of its tree.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from ._hidden import _class_hides, _is_hidden

# None when not built or switched off (_headings_py finds the same)
from ._compiled import speedups as _speedups

__all__ = ["page_title", "site_of_title"]

#: Separators between a title's parts ("Headline | Section | Site").
_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|::|·|•|»|«|/|~|:)\s+|\s*(?:\|{1,2}|::|»|«|·|•)\s*")
#: Every separator holds one of these: a title without any has one part
#: (one fast search instead of trying ``_SEPARATORS`` at each position).
_SEPARATOR_CHARS = re.compile(r"[|\-–—:·•»«/~]")
#: The separators that end a headline in ``<title>`` ("Headline | Topic
#: words | Site"): a hyphen does not, it is often the headline's own
#: ("Instant Pot - Pressure Cookers").
_HEADLINE_END = re.compile(r"\s+(?:\||–|—|::|·|•|»|/)\s+|\s*\|\s*")
#: Marks a cut title whose site name came first (a control character: the
#: loader takes those out of pages).
_SITE_FIRST = "\x01"
#: A site's name in brackets at the end of a title ("Welcome [LWN.net]").
_BRACKETED = re.compile(r"\s*[\[(]([^\[\]()]+)[\])]\s*$")
#: Elements whose text no reader sees.
_UNSEEN = frozenset(["script", "style", "noscript", "template", "svg", "button"])
#: Elements that end a line: the words on either side are two words.
_BREAKS = frozenset("br p div li dt dd h1 h2 h3 h4 h5 h6 tr td th section header article".split())
#: The two sets above for the compiled walk (bits as in _speedups.pyx).
_SEEN_BITS = {t.encode(): (1 if t in _UNSEEN else 0) | (2 if t in _BREAKS else 0) for t in _UNSEEN | _BREAKS}
#: Marks beside a heading that link to it ("Title¶" on documentation
#: sites), and separators left at either end.
_STRIP = " \t\n\r\xa0¶§🔗|–—·•:"
#: Meta names of the site's name.
_SITE_METAS = ("og:site_name", "application-name", "apple-mobile-web-app-title")
_METAS = frozenset(("og:title", "twitter:title", *_SITE_METAS))
#: A headline longer than this (characters) is running text, not a title.
_MAX_CHARS = 300
#: The share of an ``<h1>``'s words that must be in ``<title>`` or
#: ``og:title`` for it to be the headline. On WCXB dev's headings that are
#: neither title exactly: >= 0.8 of their words in the title, the heading
#: was the gold title 159 times and the cut title 58; 0.5-0.8: 71 and 39;
#: below 0.5: 36 and 78. Any value from 0.3 to 0.5 scored alike.
_COVER = 0.5
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    """Whitespace collapsed to single spaces."""
    return " ".join(text.split())


@lru_cache(maxsize=4096)
def _key(text: str) -> str:
    """Letters and digits only, lower case: "Walmart.com" and "walmart com"
    agree, and so do "WEEKEND CODING" and "Weekend Coding"."""
    return "".join(_WORD.findall(text.lower())).replace("_", "")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _seen_text(el: etree._Element) -> str:
    """The text of ``el`` a reader sees: no scripts, no hidden parts; a
    line break or a block inside it parts words ("Data Analytics<br>Agency")."""
    parts: list[str] = []
    walk = etree.iterwalk(el, events=("start", "end"))
    for event, node in walk:
        tag = node.tag
        if event == "start":
            if node is not el and (not isinstance(tag, str) or tag in _UNSEEN or _is_hidden(node)):
                walk.skip_subtree()  # its "end" still comes, with its tail
                continue
            if tag in _BREAKS:
                parts.append(" ")
            if node.text:
                parts.append(node.text)
        elif node is not el:
            if tag in _BREAKS:
                parts.append(" ")
            if node.tail:
                parts.append(node.tail)
    return _norm("".join(parts))


def _host_names(url: str) -> list[str]:
    """Keys the site's name may have in its host: "news.example.co.uk"
    gives "newsexamplecouk", "examplecouk", "couk"... and "example", "news"."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return list(_host_keys(host))


@lru_cache(maxsize=1024)
def _host_keys(host: str) -> tuple[str, ...]:
    """``_host_names`` of a host: a site's pages share it."""
    labels = [_key(x) for x in host.split(".") if x and x != "www"]
    labels = [x for x in labels if x]
    keys = []
    if labels:
        keys.append("".join(labels))
        keys.extend("".join(labels[i:]) for i in range(1, len(labels) - 1))
        keys.extend(x for x in labels[:-1] if len(x) > 3 or len(labels) <= 2)
    return tuple(keys)


def _is_site(part: str, names: list[str]) -> bool:
    """Whether ``part`` of a title names the site (``names`` are keys):
    the name itself, the name and a word or two ("Walmart.com", "Example
    News"), or a good part of it ("DianaHR" on getdianahr.com)."""
    k = _key(part)
    if not k:
        return True  # marks only
    for n in names:
        if not n:
            continue
        if k == n or (len(n) >= 4 and (k.startswith(n) or k.endswith(n)) and len(k) <= len(n) + 12) \
                or (len(k) >= 5 and k in n) or (len(k) >= 4 and n.startswith(k)):
            return True
    return False


#: A ``<title>`` (cut) that names a home page ("Startseite | Keramikwerk
#: Hansen") says which page it is, not what it says.
_HOME_WORDS = frozenset("home homepage startseite accueil inicio início welcome willkommen bienvenue "
                        "bienvenido benvenuti".split()) | {"home page", "front page"}
#: Parts of a title that name a part of a site, not the site ("How to
#: prune roses - Blog" on blog.example.com), or its home page.
_SECTION_KEYS = frozenset("blog news shop store docs help support forum forums community learn en".split()) | {
    w.replace(" ", "") for w in _HOME_WORDS}


def site_of_title(title: str, url: str) -> str | None:
    """The site's name as ``<title>`` ends (or opens) with it, where the
    host names it ("Ten steps to a floor | Tarkett" on tarkett.com): for
    pages that state no name (no ``og:site_name``, no JSON-LD WebSite),
    28 % of WCXB dev's."""
    if not title or not _SEPARATOR_CHARS.search(title):
        return None
    names = _host_names(url)
    parts = [p for p in (x.strip(_STRIP) for x in _SEPARATORS.split(title)) if p]
    if len(parts) < 2 or not names:
        return None
    for part in (parts[-1], parts[0]):
        k = _key(part)
        if k and k not in _SECTION_KEYS and len(part) <= 60 and _is_site(part, names):
            return _norm(part)
    return None


def _cut_site(title: str, names: list[str]) -> str:
    """``title`` without the parts at its ends that name the site. Where
    the site's name led ("Site » Blog » Headline"), the rest is marked by
    a leading ``_SITE_FIRST``: the headline is then its last part."""
    if not title:
        return ""
    spans = []  # (start, end, start of the next part)
    pos = 0
    for m in _SEPARATORS.finditer(title) if _SEPARATOR_CHARS.search(title) else ():
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(title)))
    lo, hi = 0, len(spans)
    while hi - lo > 1 and _is_site(title[slice(*spans[hi - 1])], names):
        hi -= 1
    while hi - lo > 1 and _is_site(title[slice(*spans[lo])], names):
        lo += 1
    cut = _norm(title[spans[lo][0]:spans[hi - 1][1]])
    # A normalised title ends in a bracket or holds none there (a search
    # tried every position of every title).
    br = _BRACKETED.search(cut) if cut.endswith((")", "]")) else None
    if br and br.start() > 0 and _is_site(br.group(1), names):
        cut = cut[:br.start()].rstrip()
    return _SITE_FIRST + cut if lo > 0 and hi == len(spans) else cut


def _headline_of(title: str) -> str:
    """The first part of a title ("Headline | Topic words"), or the last
    where the site's name led: where a cut title still has parts, the first
    was the gold title in 116 of WCXB dev's 202 three-part titles, all but
    the last in 20."""
    if title.startswith(_SITE_FIRST):
        return _norm(_HEADLINE_END.split(title[1:])[-1]).strip(_STRIP)
    return _norm(_HEADLINE_END.split(title, 1)[0]).strip(_STRIP) if title else ""


def _plain(cut: str) -> str:
    """A cut title without its mark."""
    return cut[1:] if cut.startswith(_SITE_FIRST) else cut


def _in_skip(el: etree._Element, skip: set | frozenset) -> bool:
    """Whether ``el`` or an ancestor is in ``skip``."""
    node: etree._Element | None = el
    while node is not None:
        if node in skip:
            return True
        node = node.getparent()
    return False


def _hidden_in(el: etree._Element) -> bool:
    """Whether ``el`` or an ancestor is hidden (``_hidden._is_hidden``)."""
    node: etree._Element | None = el
    while node is not None:
        if _is_hidden(node):
            return True
        node = node.getparent()
    return False


def _in_svg(el: etree._Element) -> bool:
    return any(a.tag == "svg" for a in el.iterancestors())


def _headings(root: etree._Element, skip: set | frozenset, tag: bytes = b"h1") -> list[tuple[str, bool]]:
    """(``_seen_text``, in ``skip``) of each ``<h1>`` (or ``tag``) of the
    page that neither it nor an ancestor hides, in document order. The
    compiled walk when built (lxml's ``iter("h1")`` over the page, and a
    proxy for each ancestor of each ``<h1>``, were most of ``page_title``),
    else ``_headings_py``, which defines the result."""
    if _speedups is not None:
        return [(_norm(text), inside) for text, inside in _speedups.headings(
            root, tag, skip, _class_hides, _SEEN_BITS)]
    return _headings_py(root, skip, tag.decode())


def _headings_py(root: etree._Element, skip: set | frozenset, tag: str = "h1") -> list[tuple[str, bool]]:
    """``_headings`` in Python: the reference for the compiled walk."""
    return [(_seen_text(el), bool(skip) and _in_skip(el, skip)) for el in root.iter(tag) if not _hidden_in(el)]


def _initials(text: str, names: list[str]) -> bool:
    """Whether a site's name key is the initials of ``text``'s words, with
    or without its small words ("Occupational Safety and Health
    Administration" on osha.gov)."""
    words = _words(text)
    every = "".join(w[0] for w in words)
    big = "".join(w[0] for w in words if len(w) > 3)
    return any(len(n) >= 2 and n in (every, big) for n in names)


def _title_ends(title: str) -> set[str]:
    """Keys of ``title`` up to each of its separators and from each: the
    headline wherever the site's name and sections sit around it."""
    ends = set()
    for m in _SEPARATORS.finditer(title):
        ends.add(_key(title[:m.start()]))
        ends.add(_key(title[m.end():]))
    return ends - {""}


def _head(root: etree._Element) -> tuple[str, dict[str, str]]:
    """``<title>`` and the metas of ``_METAS`` under ``root``. The
    ``<head>`` alone is 0.04 ms a page, the whole page 0.6 ms."""
    title = ""
    metas: dict[str, str] = {}
    found = _speedups.head_tags(root) if _speedups is not None else _head_tags_py(root)
    for is_meta, value, text in found:
        if is_meta:
            name = value.strip().lower()
            if name in _METAS and name not in metas:
                content = _norm(text)
                if content:
                    metas[name] = content
        elif not title and not value:  # an <svg>'s <title> is a tooltip
            title = _norm(text)
    return title, metas


def _head_tags_py(root: etree._Element) -> list[tuple[bool, Any, str]]:
    """Each ``<title>`` and ``<meta>`` under ``root`` for ``_head``: a meta
    as (True, its property or else name, its content), a title as (False,
    whether it is in an ``<svg>``, its text). The reference for the
    compiled walk (``_speedups.head_tags``: no element proxy a meta).
    (The middle member, a str for a meta and a bool for a title, is Any.)"""
    return [(True, el.get("property") or el.get("name") or "", el.get("content") or "") if el.tag == "meta"
            else (False, _in_svg(el), "".join(el.itertext())) for el in root.iter("title", "meta")]


def _names_a_section(text: str, head: str) -> bool:
    """Whether a cut ``<title>`` is a section's or the home page's label
    and the page's first ``<h1>`` its headline: a home label, or one word
    that the longer ``<h1>`` holds ("Blog" and "Aus der Werkstatt – Blog";
    "Networking" and "Networking in Compose"; two, "Klatch Coffee", were
    the gold title more often than the ``<h1>`` that held them), or the
    ``<h1>``'s initials ("FAQ": a new user's FAQ page was "FAQ")."""
    words, own = _words(text), _words(head)
    if not words or not own:
        return False
    if " ".join(words) in _HOME_WORDS:
        return True
    if len(words) == 1 and len(own) > 1 and words[0] in own:
        return True
    # An acronym of the <h1>: "FAQ" over "Frequently asked questions".
    return len(words) == 1 and 2 < len(own) == len(words[0]) and "".join(w[0] for w in own) == words[0]


def page_title(root: etree._Element, url: str = "", skip: set | frozenset = frozenset()) -> str:
    """The page's headline, "" when it states none. ``skip``: subtrees
    that are the site's template (a site model's boilerplate), whose
    ``<h1>`` names the site rather than the page.

    In order: an ``<h1>`` that is ``<title>`` or ``og:title`` (with or
    without the site's name); the first ``<h1>`` made mostly of their
    words; ``<title>`` without the site's name (``og:site_name``,
    ``application-name``, the host) and its first part, or ``og:title``
    where it is ``<title>`` without more decorations; the first ``<h1>``.
    """
    head = root.find("head")
    title, metas = _head(head if head is not None else root)
    if head is not None and not title:  # a page whose <title> the parser put in the body
        title, metas = _head(root)
    og = metas.get("og:title") or metas.get("twitter:title") or ""
    names = [_key(metas[n]) for n in _SITE_METAS if n in metas]
    names += _host_names(url)
    found: list[tuple[str, bool]] = []  # (text, in the site's template)
    og_cut = _cut_site(og, names)
    og_keys = {_key(og), _key(_plain(og_cut))} - {""}
    for seen, in_skip in _headings(root, skip):
        text = seen.strip(_STRIP)
        if text.endswith(" #"):  # a link to the heading, not "C#"
            text = text[:-2].rstrip(_STRIP)
        if text and len(text) <= _MAX_CHARS:
            # An <h1> in the template is the site's name, unless og:title
            # says it is the page's (a template matched by its shape alone:
            # a question's header with its tags and buttons).
            template = in_skip and _key(text) not in og_keys
            found.append((text, template))
    # An <h1> in the template is the same on every page: the site's name
    # ("The Rust Programming Language"), which <title> repeats.
    more = [_key(text) for text, template in found if template]
    if more:
        names += more
        og_cut = _cut_site(og, names)
    title_cut = og_cut if title == og else _cut_site(title, names)  # each cut once
    heads = [text for text, template in found if not template and not _is_site(text, names)]
    keys = {_key(_plain(t)) for t in (title_cut, og_cut, title, og) if t}
    for h in heads:
        if _key(h) in keys:
            if _key(h) == _key(title) and _key(_plain(title_cut)) != _key(title):
                return _plain(title_cut)  # a copy of <title>, the site's name and all
            return h
    words = set(_words(title)) | set(_words(og))
    for h in heads:
        own = _words(h)
        if own and sum(w in words for w in own) >= _COVER * len(own):
            return h
    if og_cut and title_cut and _key(og_cut) != _key(title_cut) and _key(og_cut) in _key(title_cut):
        # og:title is <title> without decorations the cut left
        # ("PostgreSQL: Documentation: 18: Chapter 11. Indexes")
        title_cut = og_cut
    if not heads and title and _SEPARATOR_CHARS.search(title):
        # No <h1>: an <h2> that is <title> up to or from a separator is the
        # headline ("Topic" under "Topic - Some Forum", whatever the host).
        ends = _title_ends(title)
        for text, template in _headings(root, skip, b"h2"):
            text = text.strip(_STRIP)
            if not template and len(text) <= _MAX_CHARS and len(_words(text)) >= 2 and _key(text) in ends \
                    and not _is_site(text, names) and not _initials(text, names):
                return text
    for text in (title_cut, og_cut):
        text = _headline_of(text)
        if text and len(text) <= _MAX_CHARS:
            if heads and _names_a_section(text, heads[0]):
                return heads[0]
            return text
    return heads[0] if heads else ""
