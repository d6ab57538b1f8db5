"""When a subtree the site shares is part of the page's own text rather
than template (``_clean.dropped_entries``): a text-level element inside a
sentence, a label before its own value, a heading over its own section."""

from __future__ import annotations

import re

from lxml import etree

from ._text import SUBHEADINGS

__all__ = ["BOX_TITLE_WORDS", "LABEL_TAGS", "PHRASE_TAGS", "box_title", "list_entries", "mid_sentence", "phrase",
           "section_labels"]

#: Text-level tags (HTML's phrasing content). A shared one whose parent the
#: page does not share is a word of the page's own sentence ("by <span>Paulo
#: Coelho</span> on July 21"), not template: removing it left holes in the
#: text. Content mode keeps them and lets the block model judge the block
#: whole: ROUGE-LSum F1 +0.003, shingle F1 +0.007 out of fold (without
#: ``a``: +0.0015 / +0.004). Boilerplate mode removes them as deboiler
#: does (keeping them all there cost 0.005 ROUGE-LSum F1, 0.0003 without
#: ``a``), but for those inside a sentence (``mid_sentence``): dev 5+
#: in-sample ROUGE-LSum F1 0.8387 to 0.8385, shingle F1 0.8574 to 0.8586.
PHRASE_TAGS = frozenset(
    "a abbr acronym b bdi bdo big cite code data del dfn em font i ins kbd mark nobr q "
    "s samp small span strike strong sub sup time tt u var wbr".split()
)


def phrase(el: etree._Element) -> bool:
    """Whether ``el`` and all it holds are text-level tags."""
    for node in el.iter():
        if isinstance(node.tag, str) and node.tag not in PHRASE_TAGS:
            return False
    return True


_WORD = re.compile(r"\w")
#: A value a label may stand over: a word, or symbols ("££", "★★★★").
_VALUE = re.compile(r"[\w$\u00a2-\u00a5\u20a0-\u20cf\u2605\u2606\u2b50]")


def mid_sentence(el: etree._Element) -> bool:
    """Whether a text-level element stands inside a sentence: words before
    it in its parent and words (or the sentence's punctuation) after it
    ("Start with the <a>Quickstart</a>, then ..."), or a label before its
    own words ("<span>Prep:</span> 20 minutes"). Boilerplate mode keeps
    those: removing them left "Start with the , then" and "20 minutes"."""
    if not phrase(el):
        return False
    # The sentence is around the outermost text-level element that holds
    # nothing but it ("by <strong><a>lucia_dev</a></strong> » Sun"): a fit
    # may share the <a> alone.
    parent = el.getparent()
    while (parent is not None and parent.tag in PHRASE_TAGS and not (parent.text or "").strip()
           and len(parent) == 1 and not (el.tail or "").strip()):
        el, parent = parent, parent.getparent()
    if _glued(el):
        return True
    tail = (el.tail or "").strip()
    if not tail or not (_WORD.search(tail) or tail[0] in ",.;:!?)"):
        return False
    if _WORD.search(tail) and "".join(el.itertext()).rstrip().endswith(":"):
        return True  # a label before its value: "<span>Prep:</span> 20 minutes"
    prev = el.getprevious()
    before = (prev.tail or "") + ("".join(prev.itertext()) if phrase(prev) else "") if prev is not None \
        else (el.getparent().text or "") if el.getparent() is not None else ""
    return bool(_WORD.search(before))


#: Characters that part the items of a menu, a breadcrumb or a list of tags
#: written side by side.
_SEPARATORS = frozenset("»›>|/·•–—,;:")


def _glued(el: etree._Element) -> bool:
    """Whether a text-level element is part of a token with what stands
    right beside it, no space between: an API signature's
    "fn<span>(</span><em>source</em>", a price's "<span>£</span>30,000".
    Removing it left "fn," and "30,000" (a new user's docs and job board)."""
    text = "".join(el.itertext())
    if not text.strip():
        return False
    prev, parent = el.getprevious(), el.getparent()
    if prev is not None:
        before = prev.tail or ("".join(prev.itertext()) if phrase(prev) else "")
    else:
        before = (parent.text or "") if parent is not None else ""
    after = el.tail or ""
    nxt = el.getnext()
    if not after and nxt is not None and phrase(nxt):
        after = "".join(nxt.itertext())
    return (bool(before) and _joins(before[-1], text[0])) or (bool(after) and _joins(text[-1], after[0]))


def _joins(a: str, b: str) -> bool:
    """Whether two characters side by side are one token's: no space, one
    of them a mark ("(", ".", "£"), neither a list's separator. Letters and
    digits side by side are fields a page lays out apart ("Jeet Banerjee"
    and "09-04-2012", "56" and "comments"), and "business," a tag list's."""
    return not (a.isspace() or b.isspace() or (a.isalnum() and b.isalnum())
                or a in _SEPARATORS or b in _SEPARATORS)


#: Elements that label what follows them: headings and a definition's term.
LABEL_TAGS = SUBHEADINGS | {"dt"}


def section_labels(elements: list[etree._Element], own: set | frozenset = frozenset(),
                   symbols: bool = True) -> set[etree._Element]:
    """Of shared subtrees (``elements``), the headings and terms whose next
    element is the page's own (not shared, or in ``own``, with a word or a
    value's symbols, with ``symbols``: "Price range" over "££" lost its
    label; content mode's blocks are words, and "££" none): "What
    you bring" over each job's list, "Start date" over its day. Every page
    of the site has them, so they were template, and the page's own sections
    and values lost their labels, in both modes. ``own``: shared elements
    kept as the page's (``list_entries``: "Cost" over "Free, registration
    required", a value another event has too)."""
    shared = set(elements) - set(own)
    labels = set()
    for el in elements:
        if el.tag in LABEL_TAGS or box_title(el, shared):
            nxt = el.getnext()
            while nxt is not None and not isinstance(nxt.tag, str):
                nxt = nxt.getnext()
            value = _VALUE if symbols else _WORD
            if nxt is not None and nxt not in shared and any(value.search(t) for t in nxt.itertext()):
                labels.add(el)
    return labels


#: A box's title holds at most this many words ("Note", "Pro tip").
BOX_TITLE_WORDS = 3


def box_title(el: etree._Element, shared: set | frozenset = frozenset()) -> bool:
    """Whether ``el`` titles the callout box it opens: the first element of
    a parent (one the page does not share, of those in ``shared``) whose or
    whose parent's class says callout (``_CALLOUT``), of
    ``BOX_TITLE_WORDS`` words or fewer ("<div class='admonition note'><p
    class='admonition-title'>Note</p>" over the page's own words; every
    docs page has a "Note", and a new user's 60 notes lost their label in
    both modes)."""
    parent = el.getparent()
    if parent is None or parent in shared or parent.tag in ("body", "html") \
            or not _CALLOUT.search(f"{el.get('class') or ''} {parent.get('class') or ''}"):
        return False
    text = "".join(el.itertext())  # (only callouts come here)
    first = next((c for c in parent if isinstance(c.tag, str)), None)
    return first is el and 0 < len(_WORD_RUN.findall(text)) <= BOX_TITLE_WORDS


_WORD_RUN = re.compile(r"\w+")
#: Class words of a callout box (Sphinx's and MkDocs' "admonition",
#: GitHub's "markdown-alert", Docusaurus' and Bootstrap's "alert", "callout"):
#: a short first line there is its title. Any short first line of a box the
#: page does not share was too many: "Share", "Tags:" (boilerplate mode on
#: the dev sites of 5+ pages, ROUGE-LSum 0.8378 to 0.8359).
_CALLOUT = re.compile(r"admonition|callout|alert", re.IGNORECASE)


#: Entries of a list or a definition list.
_ENTRY_TAGS = frozenset(("li", "dd"))


def list_entries(elements: list[etree._Element], every_page: set | frozenset = frozenset()) -> set[etree._Element]:
    """Of shared subtrees (``elements``), the entries of a list of two or
    more that the page does not share whole: "2 baths" among a house's
    facts, on three neighbouring pages; a job's benefits, each on many
    pages, the list on none. A value repeats across a site's pages, and
    left a hole in each list it was in. Not an entry that links or acts
    ("News" in a menu whose other entries change, "Reply to this comment"):
    those are navigation; nor one on about every page of the site
    (``every_page``: a footer's licence beside its "last edited" line)
    unless the list is mostly the page's own."""
    shared = set(elements)
    entries = set()
    for el in elements:
        parent = el.getparent()
        if el.tag in _ENTRY_TAGS and parent is not None and parent not in shared \
                and not any(True for _ in el.iter("a", "button")):  # a value, not a menu's link or an action
            own = mine = 0
            for sib in parent:
                if sib.tag == el.tag:
                    if sib in shared:
                        mine += 1
                    else:
                        own += 1
            # A list the site's pages do not share whole, of values: the
            # page's own choice of them (a job's benefits, four of a board's
            # seven phrases), however many other pages hold each.
            if own > mine or (own + mine >= 2 and el not in every_page):
                entries.add(el)
    return entries
