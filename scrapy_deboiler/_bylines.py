"""A page's own elements as metadata candidates: bylines, ``<time>``s,
microdata, links to authors' pages and the headline, read once a parse
whatever the page's template (``read_elements``), then placed outside the
template (``place_elements``). The compiled walk finds the elements that
may hold an author or a date; Python reads each one's place and text."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from lxml import etree

from ._compiled import speedups as _speedups
from ._content import _is_hidden
from ._hidden import _class_hides
from ._dates import find_days, iso_day
from ._meta_text import _LEAD_START, _norm, clean_author, name_shaped
from ._meta_types import Candidate, PageCandidates
from ._title import _is_site

__all__ = ["CANDIDATE", "HEADING", "HEADLINE", "place_elements", "read_elements"]

#: Kinds of ``read_elements``'s records.
HEADING, HEADLINE, CANDIDATE = 0, 1, 2

_AUTHOR_CLASS = re.compile(r"author(?!i[tz]|ing)|byline|by-line|writer|posted-?by|reporter|contributor|"
                           r"journalist|autor|auteur")
_DATE_CLASS = re.compile(r"date|publish|posted|(?<!read)(?<!reading)(?<!read-)time(?!line|r|zone|s)|updated|"
                         r"modified|datum|fecha")
#: Either: the element is a candidate.
_CANDIDATE_CLASS = re.compile(_AUTHOR_CLASS.pattern + "|" + _DATE_CLASS.pattern)
_MODIFIED_CLASS = re.compile(r"updat|modif|revis|edited|aktualisiert|actualiz|aggiornat|mis-a-jour")
#: Marks in a label before a date that it is a last change ("Updated",
#: "Aktualisiert", "Mis à jour", "Actualizado"...).
_MODIFIED_LABEL = re.compile(r"updat|modif|revis|edited|aktualisiert|geändert|mis à jour|mise à jour|actualiz|"
                             r"aggiornat|bijgewerkt|atualiz|zaktualizow|обновл|更新", re.I)
#: A label before a date that it is when a member joined ("Joined: Mon Jul
#: 24, 2017" in a forum post's profile): a person's date, not the page's.
_JOINED_LABEL = re.compile(r"joined|join date|member since|registered|mitglied seit|registriert|inscrit|"
                           r"miembro desde|registrado|iscritto|lid sinds|geregistreerd|зарегистр", re.I)
#: Links to an author's page.
_AUTHOR_HREF = re.compile(r"/(?:author|authors|autor|autore|auteur|writers?|contributors?|columnists?|"
                          r"journalists?|redakteur|profiles?/author)/[^/?#]", re.I)
#: Words in an ancestor's class or id that mark readers' words ...
_COMMENT_CLASS = re.compile(r"comment|repl(?:y|ies)|response|discussion|disqus|"
                            r"(?:^|\s)(?:customer-|user-|product-)?reviews?(?:[-_](?:item|list|entry|card))?(?:$|\s)")
#: ... and boxes of other pages' items: a date or name there is not the
#: page's own, unless it is the only one there.
_BOX_CLASS = re.compile(r"related|recommend|sidebar|widget|popular|trending|carousel|teaser|newsletter|"
                        r"footer|latest|recent|similar|suggest|more-?(?:stories|posts|articles|news)|"
                        r"read-?more|also|up-?next|next-?post|prev")
_BOX_TAGS = frozenset(("aside", "footer", "nav"))
_UNSEEN = frozenset(("script", "style", "noscript", "template", "svg", "button", "select", "option"))
#: Attributes of an element's place (``_element_key``): its tag and these
#: words of its class, the tags and class words of up to ``KEY_DEPTH``
#: ancestors.
KEY_DEPTH = 4
_KEY_WORD = re.compile(r"^[a-z][a-z_-]{1,30}$")
#: An element's text longer than this is a paragraph, not a byline.
MAX_BYLINE_CHARS = 160
#: A byline's box (``_dates_near``) holds at most this much text.
NEAR_BYLINE_CHARS = 300
_CLASS_HITS: dict[tuple, bool] = {}
_HEADINGS = frozenset(("h1", "h2", "h3"))
_HEADING_TAGS = tuple(sorted(_HEADINGS))


def _class_hit(cls: str | None, ident: str | None) -> bool:
    """Whether a class and id name an author or a date (cached: a site's
    pages repeat a few values many times; emptied when it grows large)."""
    key = (cls, ident)
    hit = _CLASS_HITS.get(key)
    if hit is None:
        if len(_CLASS_HITS) > 20_000:
            _CLASS_HITS.clear()
        hit = _CLASS_HITS[key] = bool(_CANDIDATE_CLASS.search(f"{cls or ''} {ident or ''}".lower()))
    return hit


_CLASS_WORDS_OF: dict[str, str] = {}


def _class_words(el: etree._Element) -> str:
    """An element's class words for its place: ".a.b" (cached by class)."""
    cls = el.get("class")
    if not cls:
        return ""
    found = _CLASS_WORDS_OF.get(cls)
    if found is None:
        if len(_CLASS_WORDS_OF) > 20_000:
            _CLASS_WORDS_OF.clear()
        words = sorted({w for w in cls.lower().split() if _KEY_WORD.match(w)})[:4]
        found = _CLASS_WORDS_OF[cls] = "." + ".".join(words) if words else ""
    return found


def _element_key(el: etree._Element) -> str:
    """Where ``el`` sits: its tag and class words and those of its
    ancestors ("div.entry-meta>span.byline>a"), words with digits left out
    (post ids); the same place on every page of a site."""
    parts = []
    node: etree._Element | None = el
    for _ in range(KEY_DEPTH + 1):
        if node is None or not isinstance(node.tag, str) or node.tag in ("body", "html"):
            break
        parts.append(node.tag + _class_words(node))
        node = node.getparent()
    return ">".join(reversed(parts))


def _seen_text(el: etree._Element, limit: int = MAX_BYLINE_CHARS * 4) -> str:
    """The text of ``el`` a reader sees (no scripts, nothing hidden),
    block and line breaks as line breaks, up to about ``limit`` characters.
    Compiled where it can be (``byline_text``: a third of the time of a
    page's metadata went to this walk in Python)."""
    raw = _speedups.byline_text(el, limit, _class_hides) if _speedups is not None else _seen_raw(el, limit)
    return "\n".join(" ".join(line.split()) for line in raw.split("\n") if line.strip())


def _glued_link(el: etree._Element, txt: str) -> str | None:
    """The text of a byline's first link where the text after it is glued
    to it (``<a>liam_dough8</a><span class="rank">Regular</span>``, shown
    as two boxes, reads "liam_dough8Regular"): the link is the name, the
    rest a badge. None where nothing is glued to it."""
    for a in el.iter("a"):
        name = " ".join("".join(a.itertext()).split())
        if name:
            at = txt.find(name)
            end = at + len(name)
            return name if at >= 0 and end < len(txt) and txt[end].isalnum() and name[-1].isalnum() else None
    return None


def _seen_raw(el: etree._Element, limit: int) -> str:
    """``_seen_text`` before its lines are tidied, in Python."""
    parts: list[str] = []
    size = 0
    walk = etree.iterwalk(el, events=("start", "end"))
    for event, node in walk:
        if event == "start":
            tag = node.tag
            if node is not el and (not isinstance(tag, str) or tag in _UNSEEN or _is_hidden(node)):
                walk.skip_subtree()
                continue
            if tag in ("br", "p", "div", "li"):
                parts.append("\n")
            if node.text:
                parts.append(node.text)
                size += len(node.text)
        elif node is not el:
            if node.tag in ("p", "div", "li"):
                parts.append("\n")
            if node.tail:
                parts.append(node.tail)
                size += len(node.tail)
        if size > limit:
            break
    return "".join(parts)


_BASE = (False, "", "")
_WORDS_KIND: dict[tuple, str] = {}


def _words_kind(cls: str | None, ident: str | None) -> str:
    """"comment" / "box" / "" for an element's class and id (cached as
    ``_class_hit``: an ancestor's are looked at for every candidate below)."""
    if not cls and not ident:
        return ""
    key = (cls, ident)
    kind = _WORDS_KIND.get(key)
    if kind is None:
        if len(_WORDS_KIND) > 20_000:
            _WORDS_KIND.clear()
        words = f"{cls or ''} {ident or ''}".lower()
        kind = _WORDS_KIND[key] = ("comment" if _COMMENT_CLASS.search(words)
                                   else "box" if _BOX_CLASS.search(words) else "")
    return kind


class _Places:
    """Where a page's elements sit: inside readers' comments or a box of
    other items, hidden (the template is ``place_elements``' business).
    Each ancestor is looked at once (``state``), as the candidates of a
    page share most of theirs."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        # element -> (hidden, "comment"/"box"/"" from class words,
        # "box"/"art"/"" for the outermost <aside>/<footer>/<nav> or
        # <article>/<main>), each over the element and all above it
        self.memo: dict = {}

    def state(self, node: etree._Element | None) -> tuple[bool, str, str]:
        chain = []
        while node is not None and node.tag not in ("body", "html") and node not in self.memo:
            chain.append(node)
            node = node.getparent()
        above = _BASE if node is None or node.tag in ("body", "html") else self.memo[node]
        for n in reversed(chain):
            hidden, words_kind, outer = above
            tag = n.tag
            if isinstance(tag, str):
                hidden = hidden or _is_hidden(n)
                if words_kind != "comment":
                    kind = _words_kind(n.get("class"), n.get("id"))
                    if kind == "comment" or (kind and not words_kind):
                        words_kind = kind
                if not outer:
                    outer = "box" if tag in _BOX_TAGS else "art" if tag in ("article", "main") else ""
            above = (hidden, words_kind, outer)
            self.memo[n] = above
        return above

    def of(self, el: etree._Element) -> tuple[str, bool]:
        """("comment" / "box" / "" for inside readers' comments / a box of
        other items (by the class words of an ancestor, or an ``<aside>``,
        ``<footer>`` or ``<nav>`` not inside an ``<article>`` or
        ``<main>``) / neither, hidden). The element's own class does not
        make it an aside ("comment-count")."""
        hidden, words_kind, outer = self.state(el.getparent())
        return words_kind or ("box" if outer == "box" else ""), hidden or _is_hidden(el)


def _attr(el: etree._Element, name: str) -> str:
    v = el.get(name)
    return v.strip() if v else ""


def _author_rel(el: etree._Element) -> bool:
    """Whether a link's ``rel`` says it goes to its author's page (most
    links' ``rel`` is ``nofollow`` or ``noopener``: not candidates)."""
    rel = el.get("rel")
    return bool(rel) and "author" in rel.lower().split()


_LEAD_FIRST = frozenset("bvpdawegsoftyrоа作著저é")


def _author_href(href: str | None) -> bool:
    """Whether a link goes to an author's page (``_AUTHOR_HREF``; a
    substring test first: most links go elsewhere)."""
    if not href:
        return False
    low = href.lower()
    return ("aut" in low or "writ" in low or "contrib" in low or "column" in low or "journ" in low
            or "redak" in low) and bool(_AUTHOR_HREF.search(href))


#: Literal parts of ``_CANDIDATE_CLASS`` and ``_author_href``, ``_LEAD_FIRST``'s
#: ASCII letters: the compiled walk's prefilter (lets through a superset).
_PREFILTER_CLASS = [w.encode() for w in (
    "author", "byline", "by-line", "writer", "posted", "reporter", "contributor", "journalist", "autor",
    "auteur", "date", "publish", "time", "updated", "modified", "datum", "fecha")]
_PREFILTER_HREF = [w.encode() for w in ("aut", "writ", "contrib", "column", "journ", "redak")]
_PREFILTER_REL = [b"author"]
#: Every first word, in ASCII letters, that ``_LEAD_START`` takes (its
#: words in other scripts pass the prefilter as not ASCII).
_PREFILTER_LEAD = {w.encode() for w in (
    "written posted published authored escrito publicado geschrieben scritto by von par por door av af przez "
    "author authors autor autores autorin autora auteur auteurs autore autori forfatter writer byline "
    "redakteur redacteur redactor yazar").split()}


#: A form's controls: their words are choices ("Sort: By Review"), not bylines.
_CONTROLS = frozenset(("option", "button", "label", "select", "textarea", "optgroup"))


def _is_candidate(el: etree._Element) -> bool:
    cls = el.get("class")
    ident = el.get("id")
    tag = el.tag
    if ((cls or ident) and _class_hit(cls, ident)) or tag == "time" or el.get("itemprop") is not None \
            or el.get("datetime") or (tag == "a" and (_author_rel(el) or _author_href(el.get("href")))):
        return True
    if tag in _HEADINGS:
        return True
    t = el.text
    return bool(t and len(t) < MAX_BYLINE_CHARS and t.lstrip()[:1].lower() in _LEAD_FIRST
                and _LEAD_START.match(t))


def _candidate_elements(root: etree._Element) -> list[tuple[int, etree._Element]]:
    """(position, element) of the body's elements that may hold an author
    or a date, and its ``<h1>``s, in document order. A cached test of
    each element's class and id: an XPath of ``contains()`` tests over
    the same words took 30 to 100 times as long in libxml2. The compiled
    walk lets through only the elements that may pass (``_PREFILTER_CLASS``
    ...), so that the test runs on a few; same result."""
    body = root.find("body")
    top = body if body is not None else root
    if _speedups is not None:
        found = _speedups.candidate_walk(top, _PREFILTER_CLASS, _PREFILTER_HREF, _PREFILTER_LEAD, _HEADING_TAGS,
                                         _PREFILTER_REL)
        return [(i, el) for i, el in found if _is_candidate(el)]
    return [(i, el) for i, el in enumerate(top.iter(etree.Element)) if _is_candidate(el)]


def _add(out: list[tuple], order: int, el: etree._Element, places: _Places, f: str, value: str, source: str,
         kind: str) -> None:
    """A candidate of ``el``'s, unless it is hidden; its place read only now
    (most elements read give none: a third of the time of reading a page's
    elements went to placing them first)."""
    aside, hidden = places.of(el)
    if not hidden:
        out.append((CANDIDATE, order, el, f, Candidate(value, source, kind + _element_key(el), order, aside)))


def read_elements(root: etree._Element, names: list[str], month_first: bool) -> list[tuple]:
    """What the page's own elements offer, in document order, whatever its
    template (``place_elements`` then leaves out what is inside it), so
    that a page parsed once is read once (signed for its site's fit, then
    cleaned): records ``(HEADING, order, el, None, None)`` for an ``<h2>``
    or ``<h3>``, ``(HEADLINE, order, el, hidden, has words)`` for an
    ``<h1>``, ``(CANDIDATE, order, el, field, Candidate)`` for a value
    (``el`` the element whose place decides). Hidden elements give none
    (``_add``)."""
    out: list[tuple] = []
    places = _Places()
    for order, el in _candidate_elements(root):
        tag = el.tag
        if tag == "h2" or tag == "h3":
            if not (el.get("class") or el.get("id")) or not _class_hit(el.get("class"), el.get("id")):
                out.append((HEADING, order, el, None, None))
                continue
        if tag == "h1":
            out.append((HEADLINE, order, el, places.of(el)[1], _headline_text(el)))
            if not el.get("class") and not el.get("id"):
                continue
        words = f"{el.get('class') or ''} {el.get('id') or ''}".lower()
        itemprop = _attr(el, "itemprop").lower()
        if itemprop in ("datepublished", "datecreated", "datemodified", "uploaddate"):
            f = "modified" if itemprop == "datemodified" else "published"
            day = iso_day(el.get("content") or el.get("datetime") or _seen_text(el), month_first)
            if day:
                # A <meta itemprop> is structured data, not a date a reader sees.
                source = "md-meta" if tag in ("meta", "link") else "md"
                _add(out, order, el, places, f, day, source, "md:")
            continue
        if itemprop in ("author", "creator"):
            inner = [n for n in el.iter(etree.Element) if _attr(n, "itemprop").lower() == "name"]
            raw = (_attr(inner[0], "content") or _seen_text(inner[0])) if inner else (
                _attr(el, "content") or _seen_text(el))
            who = clean_author(raw)
            if who:
                source = "site" if _is_site(who, names) else "md"
                _add(out, order, el, places, "author", who, source, "md:")
            continue
        if tag == "time" or (el.get("datetime") and tag in ("span", "abbr", "div", "p")):
            day = iso_day(el.get("datetime") or "", month_first) or iso_day(_seen_text(el), month_first)
            before = _label_before(el)
            if day and not _joined(before):
                label = f"{words} {before} {_seen_text(el)[:80]}"  # "<time>Updated on June 18"
                f = "modified" if _MODIFIED_CLASS.search(words) or _MODIFIED_LABEL.search(label) else "published"
                _add(out, order, el, places, f, day, "time", "time:")
            continue
        if tag == "a" and (_author_rel(el) or _author_href(el.get("href"))):
            who = clean_author(_seen_text(el))
            if who:
                _add(out, order, el, places, "author", who, "dom", "a:")
            continue
        txt = None
        if words.strip():
            if _AUTHOR_CLASS.search(words) and tag not in ("img", "picture", "figure", "svg", "meta"):
                txt = _seen_text(el)
                if txt and len(txt) <= MAX_BYLINE_CHARS:
                    who = clean_author(_glued_link(el, txt) or txt)
                    if who:
                        _add(out, order, el, places, "author", who, "dom", "dom:")
                        days = find_days(txt, month_first, limit=1)
                        if days:  # "Post by Sam » Tue May 17, 2024": the byline's own date
                            f = "modified" if _MODIFIED_LABEL.search(txt[:days[0][0]]) else "published"
                            _add(out, order, el, places, f, days[0][1], "dom", "by:")
                        else:
                            _dates_near(out, el, order, places, month_first)
            if _DATE_CLASS.search(words):
                txt = _seen_text(el) if txt is None else txt
                if txt:  # a date box's date opens it ("Posted on April 13, 2023" and its tags)
                    txt = txt[:MAX_BYLINE_CHARS]
                    days = find_days(txt, month_first, limit=2)
                    if days and not _joined(txt[:days[0][0]]):
                        f = ("modified" if _MODIFIED_CLASS.search(words)
                             or _MODIFIED_LABEL.search(txt[:days[0][0]]) else "published")
                        day = days[0][1]
                        _add(out, order, el, places, f, day, "dom", "dom:")
        t = el.text
        if t and len(t) < MAX_BYLINE_CHARS and tag not in _CONTROLS and _LEAD_START.match(t):
            txt = _seen_text(el) if txt is None else txt
            if txt and len(txt) <= MAX_BYLINE_CHARS:
                who = clean_author(txt)
                if who and name_shaped(who):
                    _add(out, order, el, places, "author", who, "text", "text:")
                    _dates_near(out, el, order, places, month_first)
                days = find_days(txt, month_first, limit=1)
                if days:
                    day = days[0][1]
                    _add(out, order, el, places, "published", day, "text", "text:")
    return out


def place_elements(page: PageCandidates, records: list[tuple], template: set | frozenset,
                   learned: Mapping[str, Collection[str]] | None = None) -> etree._Element | None:
    """``read_elements``'s records outside ``template`` into ``page``: its
    candidates, its ``<h2>``/``<h3>`` but those naming the page (``headings``),
    the headline's position (``plain["h1"]``); returns the headline (the
    first ``<h1>`` with words outside the template, a shown one first).

    ``learned``: for each field, the places the site was learned to keep a
    value in (``MetadataHints.inside``): a date there, just under the
    headline (``LEARNED_NEAR``), is the page's even inside the template. A
    thread's "Start date" link sits in a list of links the site's pages
    share by their shape, and two posts of one day share their dateline's
    words. Not a date further down (a product's "Release date" in a box of
    facts, a docs page's "last modified" in its footer). An author there is
    the page's only where the place names other people on other pages (a
    question's asker, in a box of a link and a score the site's posts share
    by their shape; a one-author blog's byline is the same on every page)."""
    inside = _Inside(template)
    learned = learned or {}
    title = _norm(page.plain.get("title", "")).lower()
    h1 = -1
    headline = None
    hidden_h1: tuple[int, etree._Element] | None = None
    for kind, order, el, a, b in records:
        if kind == CANDIDATE:
            if not inside(el) or (b.key in learned.get(a, ()) and (
                    a == "author" or 0 <= h1 < order <= h1 + LEARNED_NEAR)):
                getattr(page, a).append(b)
            elif a == "author":
                page.shared_author.append(b)
        elif kind == HEADING:
            if not inside(el) and not _names_page(el, title):
                page.headings.append(order)
        elif h1 < 0 and b and not inside(el):
            if not a:
                h1, headline = order, el
            elif hidden_h1 is None:
                hidden_h1 = (order, el)
    if headline is None and hidden_h1 is not None:
        h1, headline = hidden_h1
    page.plain["h1"] = str(h1)
    return headline


#: A date at a learned place inside the template is read this close after
#: the headline (elements).
LEARNED_NEAR = 20


#: A heading of this many words or more that the page's <title> holds is
#: the page's own (a thread's first post's), not an item's.
TITLE_HEADING_WORDS = 3


#: A reply's mark before the topic's name in a post's heading ("Re:", German
#: "Aw:", Dutch "Antw:", Nordic "Sv:", Polish "Odp:", "Re[2]:").
_REPLY = re.compile(r"^(?:re|aw|antw|sv|vs|odp|ynt|r)(?:\[\d+\])?\s*:\s*")


def _names_page(el: etree._Element, title: str) -> bool:
    """Whether a heading repeats the page's title: a forum thread's first
    post under the topic's name, or a reply under "Re: " and the name; the
    first post's byline is the thread's."""
    text = _REPLY.sub("", _norm(_seen_text(el, 200)).lower())
    return len(text.split()) >= TITLE_HEADING_WORDS and text in title


class _Inside:
    """Whether an element is in the template: itself or an ancestor below
    ``<body>`` (each ancestor looked at once a page)."""

    __slots__ = ("template", "memo")

    def __init__(self, template: set | frozenset) -> None:
        self.template = template
        self.memo: dict = {}

    def __call__(self, el: etree._Element) -> bool:
        template = self.template
        if not template:
            return False
        if el in template:
            return True
        chain = []
        node = el.getparent()
        memo = self.memo
        while node is not None and node.tag not in ("body", "html") and node not in memo:
            chain.append(node)
            node = node.getparent()
        found = memo[node] if node is not None and node in memo else False
        for n in reversed(chain):
            found = found or n in template
            memo[n] = found
        return found


def _headline_text(el: etree._Element) -> bool:
    """Whether an ``<h1>`` holds a headline: a few words, not a number
    or a logo's empty box."""
    text = _norm(_seen_text(el, 200))
    return len(text) >= 12 or len(text.split()) >= 2


def _label_before(el: etree._Element) -> str:
    """The words just before ``el`` that may label it ("Updated", "Last
    modified:"): the text before it in its parent, else before its parent
    (``<p>Updated: <span><time>``). Not its parent's whole text: in
    "3 March 2024 · Updated 4 March 2024" only the second is the change."""
    node = el
    for _ in range(2):
        prev = node.getprevious()
        parent = node.getparent()
        if prev is not None:
            before = (prev.tail or "") if _has_letters(prev.tail) else _seen_text(prev, 80) + " " + (prev.tail or "")
        else:
            before = (parent.text or "") if parent is not None else ""
        if _has_letters(before) or parent is None or parent.tag in ("body", "html", "article", "main"):
            return before[-LABEL_CHARS:]
        node = parent
    return ""


#: How much of the text before a date may label it.
LABEL_CHARS = 40


def _joined(label: str) -> bool:
    """Whether the words just before a date, on its line, say it is when
    someone joined (``_JOINED_LABEL``)."""
    return bool(_JOINED_LABEL.search(label[-LABEL_CHARS:].rsplit("\n", 1)[-1]))


def _has_letters(text: str | None) -> bool:
    return text is not None and any(c.isalpha() for c in text)


def _dates_near(out: list[tuple], el: etree._Element, order: int, places: _Places, month_first: bool) -> None:
    """A date written beside a byline's name: in the short text of its
    parent or grandparent ("Written by Jane Doe" and "April 8, 2024" in
    two paragraphs of one box)."""
    node = el.getparent()
    for _ in range(2):
        if node is None or node.tag in ("body", "html", "article", "main"):
            return
        text = _seen_text(node, NEAR_BYLINE_CHARS)
        if len(text) > NEAR_BYLINE_CHARS:
            return
        days = find_days(text, month_first, limit=1)
        if days:
            label = text[:days[0][0]]
            if _joined(label):
                return
            f = "modified" if _MODIFIED_LABEL.search(label) else "published"
            aside, hidden = places.of(el)
            if not hidden:
                place = "by:" + _element_key(node)
                out.append((CANDIDATE, order, el, f, Candidate(days[0][1], "dom", place, order, aside)))
            return
        node = node.getparent()
