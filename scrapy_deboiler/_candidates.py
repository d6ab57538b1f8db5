"""Every candidate a page offers for its author and dates, and its plain
metadata (``page_candidates``): its structured data and its own elements
(``_bylines``: bylines, ``<time>``, a date under the headline), outside its
template, readers' comments and boxes of other pages' items."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from lxml import etree

from ._block import _TableBlock
from ._bylines import _MODIFIED_LABEL, _attr, _joined, place_elements, read_elements
from ._content import page_blocks, title_text
from ._dates import find_days, iso_day, url_day
from ._features import headline_index
from ._language import normalize_tag
from ._meta_text import _first_last, _is_url, clean_author
from ._meta_types import Candidate, PageCandidates
from ._structured import _META_FIELD, _read_ld, _site_names
from ._title import _is_site

__all__ = ["PageRead", "page_candidates", "page_summary", "read_page"]

#: The page's <head> parts.
_HEAD_TAGS = ("html", "meta", "link", "script", "title")


def _head_parts(root: etree._Element) -> Iterator[etree._Element]:
    """The document's ``<html>``, ``<meta>``, ``<link>``, ``<script>`` and
    ``<title>`` elements in document order, those of the top-level elements beside
    ``root`` too (a second ``<html>`` the parser makes of what follows
    ``</html>``): what the XPath ``//meta | //link | //script | //html |
    //title`` finds, in half its time (one walk in C against a union)."""
    for top in (*reversed(list(root.itersiblings(preceding=True))), root, *root.itersiblings()):
        if isinstance(top.tag, str):
            yield from top.iter(*_HEAD_TAGS)


@dataclass
class PageRead:
    """What a page offers whatever its template (``read_page``): its
    structured data, read into a ``PageCandidates`` without its elements,
    and its elements' records (``read_elements``). A page signed for its
    site's fit and then cleaned is read once (kept as ``Page.meta_read``)."""

    head: PageCandidates
    records: list[tuple]


def read_page(root: etree._Element, url: str = "") -> PageRead:
    """The page's ``PageRead``: its ``<head>``'s metas and links, its
    JSON-LD, and its own elements."""
    page = PageCandidates(url=url)
    plain = page.plain
    metas: dict[str, list[str]] = defaultdict(list)
    scripts: list[str] = []
    for el in _head_parts(root):
        tag = el.tag
        if tag == "meta":
            content = el.get("content")
            if content is None:
                continue
            name = (el.get("property") or el.get("name") or el.get("itemprop") or el.get("http-equiv") or "")
            name = name.strip().lower()
            if name in _META_FIELD and content.strip():
                metas[name].append(content.strip())
        elif tag == "link":
            rel = _attr(el, "rel").lower().split()
            href = _attr(el, "href")
            if href and "canonical" in rel and "canonical_url" not in plain:
                plain["canonical_url"] = href
            elif href and "image_src" in rel:
                metas["image_src"].append(href)
        elif tag == "script":
            if _attr(el, "type").lower() == "application/ld+json" and el.text:
                scripts.append(el.text)
        elif tag == "title":
            if "title" not in plain and el.text and not any(a.tag == "svg" for a in el.iterancestors()):
                plain["title"] = el.text  # an <svg>'s <title> is a tooltip
        elif tag == "html":
            lang = el.get("lang") or el.get("{http://www.w3.org/XML/1998/namespace}lang")
            if lang and lang.strip():
                plain.setdefault("declared_language", lang.strip())
    declared = normalize_tag(plain.get("declared_language") or (metas.get("content-language") or [""])[0])
    page.month_first = declared is not None and declared.lower() in ("en", "en-us")
    names = _site_names(url, metas)
    for name, values in metas.items():
        f = _META_FIELD.get(name)
        if f in ("published", "modified"):
            for v in values:
                day = iso_day(v)
                if day:
                    getattr(page, f).append(Candidate(day, "meta", "meta:" + name))
        elif f == "author":
            for v in values[:1] if name != "citation_author" else values[:1]:
                if not _is_url(v):
                    who = clean_author(_first_last(v) if name.startswith("citation") else v)
                    if who:
                        source = "site" if _is_site(who, names) else "meta"
                        page.author.append(Candidate(who, source, "meta:" + name))
        elif f == "language":
            plain.setdefault("meta_language", values[0])
        elif f:
            plain.setdefault(f, values[0])
    if "image_src" in metas:
        plain.setdefault("image", metas["image_src"][0])
    _read_ld(page, scripts, names)
    return PageRead(page, read_elements(root, names, page.month_first))


def page_candidates(root: etree._Element, url: str = "", template: set | frozenset = frozenset(),
                    text: str | None = None, read_shown: bool = True,
                    blocks: list | None = None, read: PageRead | None = None,
                    learned: Mapping[str, Collection[str]] | None = None) -> PageCandidates:
    """Everything the page offers for each field (``PageCandidates``).
    ``template``: subtrees the site model takes for template; nothing in
    them is a candidate. ``text``: the page's clean text, if the caller has
    it (else its visible text outside the template is read). ``read_shown``:
    False leaves the page's visible text unread (what it shows, the date
    under its headline): enough for ``summary`` (``page_summary``).
    ``blocks``: its text blocks outside the template (``page_blocks`` with
    ``hide``), where the caller has them: content mode's own. ``read``: the
    page's ``read_page``, where it was read already (``Page.meta_read``).
    ``learned``: the places of the site's values read inside the template
    too (``MetadataHints.inside``; ``_bylines.place_elements``)."""
    if read is None:
        read = read_page(root, url)
    head = read.head
    page = PageCandidates(url=url, author=list(head.author), published=list(head.published),
                          modified=list(head.modified), plain=dict(head.plain), month_first=head.month_first)
    # The page's own elements, outside its template
    headline = place_elements(page, read.records, template, learned)
    u = url_day(url)
    if not read_shown:
        if u:
            page.published.append(Candidate(u, "url", "url"))
        return page
    if blocks is None:
        blocks = page_blocks(root, template, hide=True)
    shown = "\n".join(b.text for b in blocks)
    page.text = text if text is not None else shown
    page.shown = shown
    at = next((i for i, b in enumerate(blocks) if b.element is headline), -1) if headline is not None else -1
    if at < 0:
        at = headline_index(blocks, title_text(root))
    if at >= 0:
        near = _near_headline(blocks, at, page.month_first)
        if near:
            page.published.append(Candidate(near[0], "near", "near-updated" if near[1] else "near"))
            if near[2]:
                page.modified.append(Candidate(near[2], "near", "near"))
            elif near[1]:  # "Last updated on ...": the page's last change, and its date
                page.modified.append(Candidate(near[0], "near", "near-updated"))
    if u:
        page.published.append(Candidate(u, "url", "url"))
    return page


def page_summary(root: etree._Element, url: str = "",
                 read: PageRead | None = None) -> dict[str, list[list[str]]]:
    """What ``learn_hints`` needs of a page (``PageCandidates.summary``),
    read as the page is signed for its site's fit, before there is a model
    (so with no template: the template's places are never chosen, as the
    clean reads no candidate inside it)."""
    return page_candidates(root, url, read_shown=False, read=read).summary()


#: The blocks after the headline (before it: ``NEAR_BEFORE``) read for a
#: date the page shows beside it, and at most this much of their text.
NEAR_AFTER = 12
NEAR_BEFORE = 3
NEAR_CHARS = 1500
#: A line of at most this many words: a date inside a paragraph ("refundable
#: until August 15, 2024") is what the text says, not when it was written.
NEAR_WORDS = 15


_SUBHEADS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
#: Headings of one level just after the headline that make it a list.
LIST_HEADINGS = 3
#: ... or this many, each a link.
LINKED_LIST_HEADINGS = 2


def _not_joined(text: str, days: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``days`` but those a label says a member joined on (a post's profile)."""
    return [d for d in days if not _joined(text[:d[0]])][:2]


#: A date in a block of the same place as this many others or more, each
#: with a date, with fewer words than ``ENTRY_WORDS`` a block between them,
#: is an entry's of a list (a house for sale's "Listed Mar 14, 2024" on a
#: search page), not the page's; a thread's posts hold more words, and a
#: box of the page's facts ("Posted on", "Updated at", "Reading time") one
#: or two dates.
ENTRY_BLOCKS = 3
ENTRY_WORDS = 20


def _entry_key(b: object) -> tuple | None:
    el = getattr(b, "element", None)
    if el is None:
        return None
    up = el.getparent()
    return el.tag, el.get("class"), None if up is None else up.tag, None if up is None else up.get("class")


def _not_entries(blocks: list, chosen: list, text: str, days: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``days`` but those in a list's entries (``ENTRY_BLOCKS``), from
    ``chosen`` blocks joined into ``text``."""
    ends, at = [], 0
    for b in chosen:
        at += len(b.text) + 1
        ends.append(at)
    keys = [_entry_key(b) for b in blocks]
    out = []
    for pos, day in days:
        k = next((j for j, end in enumerate(ends) if pos < end), len(chosen) - 1)
        key = _entry_key(chosen[k])
        same = [i for i, other in enumerate(keys) if other == key] if key is not None else []
        if len(same) > ENTRY_BLOCKS and sum(1 for i in same if find_days(blocks[i].text, limit=1)) > ENTRY_BLOCKS:
            words = sum(b.words for b in blocks[same[0]:same[-1] + 1])
            if words < ENTRY_WORDS * len(same):
                continue
        out.append((pos, day))
    return out


def _near_headline(blocks: list, at: int, month_first: bool) -> tuple[str, bool, str | None] | None:
    """The first date written just after the page's headline, ``blocks[at]``
    (else just before it), where no element says it is a date: "Dec 17,
    2025" under the title of a blog without markup, the first post of a
    thread; and whether a label before it says it is a last change
    ("Updated on"); and the last change where the line gives both
    ("Published March 12, 2025 · Updated April 3, 2025"). The headline is the page's ``<h1>``; on a page whose
    ``<h1>`` is hidden or holds no words, the first ``<h1>``-``<h3>`` mostly
    made of the ``<title>``'s words (``headline_index``, content mode's):
    themes that title a post with an ``<h2>``, or keep the site's logo in
    the ``<h1>``, write its date beside that heading (WCXB dev: 3 more
    pages' dates right, 4 more pages without a gold date given one, 15.1
    to 15.5 %). Not past the first of a run of ``LIST_HEADINGS`` headings
    of one level (``LINKED_LIST_HEADINGS`` that are links): a listing's
    first entry dated its category page."""
    after = blocks[at + 1:at + 1 + NEAR_AFTER]
    # A date under the first of a run of headings is that entry's (a
    # listing's first, under the category's <h1>), not the headline's.
    tags = [b.tag if type(b) is _TableBlock else b.element.tag for b in after]
    cut = next((k for k, t in enumerate(tags) if t in _SUBHEADS), len(after))
    if cut < len(after):
        run = [b for b, t in zip(after, tags) if t == tags[cut]]
        # Headings that are links each name another page: two make a list
        # (a category's second page of two recipe cards).
        linked = all(10 * b.link_chars >= 9 * len(b.text) for b in run)
        if len(run) < (LINKED_LIST_HEADINGS if linked else LIST_HEADINGS):
            cut = len(after)
    chosen = [b for b in after[:cut] if b.words <= NEAR_WORDS]
    text = "\n".join(b.text for b in chosen)[:NEAR_CHARS]
    days = _not_joined(text, find_days(text, month_first, limit=3))
    if days:
        days = _not_entries(blocks, chosen, text, days)
    if not days:
        text = "\n".join(b.text for b in blocks[max(0, at - NEAR_BEFORE):at] if b.words <= NEAR_WORDS)[-NEAR_CHARS:]
        days = _not_joined(text, find_days(text, month_first, limit=3))
    if not days:
        return None
    pos, day = days[0]
    # The line's second date, and whether a label before it says it is a change.
    pos2, day2 = days[1] if len(days) > 1 and "\n" not in text[pos:days[1][0]] else (-1, None)
    changed2 = day2 is not None and bool(_MODIFIED_LABEL.search(text[max(pos, pos2 - 30):pos2]))
    if not _MODIFIED_LABEL.search(text[max(0, pos - 30):pos].rsplit("\n", 1)[-1]):
        return day, False, day2 if changed2 and day2 != day else None
    if day2 is not None and not changed2:
        # "Updated April 3, 2025 · Published March 12, 2025": the line's
        # other date, not labelled a change, is the publication.
        return day2, False, day
    return day, True, None


