"""Rules over the blocks content mode's model kept: what a kept block
brings with it (the code its paragraph introduces, the rest of its list,
its section's label) and what is not the page's
text (readers' comments under an article, navigation, a quote's line
over nothing). They run after the model: no training depends on them."""

from __future__ import annotations

import re
from typing import Callable

from ._block import Block
from ._features import _HINT_BIT, _hint_bits
from ._phrases import LABEL_TAGS
from ._text import HEADING_TAGS, SUBHEADINGS

__all__ = ["ARTICLE_WORDS", "BETWEEN_WORDS", "CODE_REACH", "CONTROL_WORDS", "DATA_REACH", "DATA_RUN", "FACT_WORDS",
           "HEAD_WORDS", "LIST_ROWS", "POST_WORDS", "QUOTE_LINE_WORDS", "REPLY_WORDS", "TABLE_WORDS",
           "drop_bare_quotes", "drop_comments", "drop_navigation", "in_control", "in_trail", "keep_between",
           "keep_code", "keep_data_after", "keep_definitions", "keep_labelled_sections", "keep_labels", "keep_lists",
           "keep_sections", "keep_table_rows", "keep_thread_posts", "navigation_kind"]


#: How many levels above a code block its container with the kept block
#: before it may be (``keep_code``): a Sphinx page's ``<pre>`` sits in a
#: ``div.highlight`` beside the paragraph that introduces it.
CODE_REACH = 2


def _near_kept(i: int, kept: list[bool], nodes: list[int], parents: list[int], j: int | None = None,
               reach: int = CODE_REACH) -> bool:
    """Whether the block before block ``i`` (or block ``j``) is kept and
    sits in a container at most ``reach`` levels above ``i``'s element."""
    j = i - 1 if j is None else j
    if not 0 <= j < len(kept) or not kept[j]:
        return False
    ups = set()
    up = parents[nodes[i]]
    for _ in range(reach):
        if up < 0:
            break
        ups.add(up)
        up = parents[up]
    a = nodes[j]
    while a >= 0 and a not in ups:
        a = parents[a]
    return a >= 0


#: Tags of the blocks of a page's data: a table's rows, a list's items, a
#: definition list's terms and values (not a cell alone: an old layout
#: table's footer cell after an article).
_DATA_TAGS = frozenset(("tr", "th", "li", "dt", "dd"))
#: A run of dropped blocks after a kept one holds at most this many blocks
#: to be kept with it (``keep_data_after``).
DATA_RUN = 40
#: ... each of them in a container at most this many levels above it that
#: holds the kept block (a table's row: its body, the table, its section).
DATA_REACH = 4


def keep_data_after(tags: list[str], kept: list[bool], link_density: list[float], comments: list[bool],
                    near: list[bool], nodes: list[int], parents: list[int]) -> list[bool]:
    """The run of blocks the model dropped right after a kept block of their
    container (``DATA_REACH``), where most of them are data (``_DATA_TAGS``)
    and none is mostly links, readers' comments, or shared with neighbours
    (``near``) but a heading or data (a value repeats by chance): a house's
    facts table and features list after its description, a product's
    specifications (a new user's listings lost them in content mode,
    scored 0.24 to 0.38 each). A box of related links, a share bar, a tag
    list are links."""
    out = list(kept)
    n = len(kept)
    i = 1
    while i < n:
        if kept[i] or not kept[i - 1]:
            i += 1
            continue
        j = i
        while j < n and not kept[j] and not comments[j] and 2 * link_density[j] < 1 and j - i < DATA_RUN \
                and not (near[j] and tags[j] not in _DATA_TAGS and tags[j] not in HEADING_TAGS) \
                and _near_kept(j, kept, nodes, parents, i - 1, DATA_REACH):
            j += 1
        end = j
        while end > i and tags[end - 1] in HEADING_TAGS:
            end -= 1  # a heading over what comes after the run is not the run's
        run = range(i, end)
        data = sum(tags[k] in _DATA_TAGS for k in run)
        if data >= 2 and 2 * data > len(run):
            for k in run:
                out[k] = True
        i = max(j, i + 1)
    return out


#: A dropped block between two kept ones of its container holds this many
#: words or more to be kept with them (``keep_between``).
BETWEEN_WORDS = 5


def keep_between(tags: list[str], kept: list[bool], words: list[int], link_density: list[float],
                 aside: list[bool], nodes: list[int], parents: list[int],
                 titles: list[bool] | None = None) -> list[bool]:
    """A block of the page's own words that the model dropped between two
    it kept, all in one container (``CODE_REACH``), is kept: a
    documentation page's note between its code and its list lost its text.
    A callout's title before it (``titles``: "Note", ``keep_labels`` keeps
    it after) stands aside. Not one mostly of links, a heading, readers'
    comments or blocks neighbours share (``aside``)."""
    out = list(kept)
    for i in range(1, len(kept) - 1):
        before = i - 2 if titles is not None and i > 1 and titles[i - 1] and not kept[i - 1] else i - 1
        if kept[i] or not kept[before] or not kept[i + 1] or aside[i] or words[i] < BETWEEN_WORDS \
                or 2 * link_density[i] >= 1 or tags[i] in HEADING_TAGS:
            continue
        if _near_kept(i, kept, nodes, parents, before) and _near_kept(i, kept, nodes, parents, i + 1):
            out[i] = True
    return out


def keep_code(tags: list[str], kept: list[bool], nodes: list[int], parents: list[int]) -> list[bool]:
    """A code block (``<pre>``) right after a kept block of its container
    is kept: short commands ("tox -e py312,lint") score low alone, and a
    documentation page lost the code its paragraph introduced."""
    for i in range(1, len(tags)):
        if tags[i] == "pre" and not kept[i] and kept[i - 1]:
            kept[i] = _near_kept(i, kept, nodes, parents)
    return kept


_TERM_TAGS = frozenset(("dt", "dd"))


def keep_lists(tags: list[str], kept: list[bool], nodes: list[int], parents: list[int]) -> list[bool]:
    """A list's items go together: kept whole where the model kept half of
    them, or one of them and the block right before the list (a house's
    four features kept one; the last of three speakers was lost: items are
    short and alike, and a list's last ones score lower)."""
    return _keep_runs(tags, kept, nodes, parents, "li")[0]


def _keep_runs(tags: list[str], kept: list[bool], nodes: list[int], parents: list[int],
               tag: str) -> tuple[list[bool], list[list[int]]]:
    """``keep_lists`` for the blocks of ``tag``, and their runs (the blocks
    of ``tag`` under one parent)."""
    items: dict[int, list[int]] = {}
    for i, t in enumerate(tags):
        if t == tag:
            items.setdefault(parents[nodes[i]], []).append(i)
    for run in items.values():
        n = sum(kept[i] for i in run)
        if n and n < len(run) and (2 * n >= len(run) or _near_kept(run[0], kept, nodes, parents)):
            for i in run:
                kept[i] = True
    return kept, list(items.values())


#: Kept rows of one table whose cells' blocks are kept with them (``keep_table_rows``).
LIST_ROWS = 3
#: Words a page keeps outside a table whose rows' kept blocks keep the rows.
TABLE_WORDS = 15


def keep_table_rows(tags: list[str], kept: list[bool], words: list[int], nodes: list[int],
                    parents: list[int]) -> list[bool]:
    """A table's rows go together as a list's items (``keep_lists``), under
    a site model (the template gone): a board's table of topics, mostly
    links and so no data table (``whole_tables``), kept five rows of six.
    (On pages alone, 19 of the dev pages changed, ROUGE-LSum summed -0.095:
    an events page's table of layout kept its menus' rows.) A row holding a
    kept block counts as kept on a page that kept under ``TABLE_WORDS``
    words outside the table (a forum index kept each board's description
    and not the board's linked name above it; a thread's table of suggested
    topics under its posts, excerpts kept, is no index). Where a table has
    ``LIST_ROWS`` or more kept rows, each keeps the blocks in its cells (a
    topic's "by tanja.k" under its title; not a layout table's one row
    holding an article and its menus: 48 dev pages lost 1.08 of ROUGE-LSum
    with any row)."""
    kept, tables = _keep_runs(tags, kept, nodes, parents, "tr")
    row_of = {nodes[i]: i for run in tables for i in run}
    touched: dict[int, int] = {}  # a row's words kept, in it or in its cells
    for j, (k, w) in enumerate(zip(kept, words)):
        up = nodes[j] if k else -1
        while up >= 0 and up not in row_of:
            up = parents[up]
        if up >= 0:
            touched[row_of[up]] = touched.get(row_of[up], 0) + w
    total = sum(w for w, k in zip(words, kept) if k)
    for run in tables:
        n = sum(i in touched for i in run)
        if n >= LIST_ROWS and 2 * n >= len(run) and total - sum(touched.get(i, 0) for i in run) < TABLE_WORDS:
            for i in run:
                kept[i] = True
    whole = {nodes[i] for run in tables if sum(kept[i] for i in run) >= LIST_ROWS for i in run if kept[i]}
    if whole:
        for i, k in enumerate(kept):
            if not k:
                up = parents[nodes[i]]
                while up >= 0 and up not in whole:
                    up = parents[up]
                kept[i] = up >= 0
    return kept


def keep_definitions(tags: list[str], kept: list[bool], nodes: list[int], parents: list[int]) -> list[bool]:
    """A definition list's terms and values go together: kept whole where
    the model kept one of them or the block right before the list ("Hours"
    kept over a dropped "30 hours a week"; a job's key facts, a glossary's
    entries, short and alike, each scored low alone)."""
    i, n = 0, len(tags)
    while i < n:
        if tags[i] not in _TERM_TAGS:
            i += 1
            continue
        j = i
        while j + 1 < n and tags[j + 1] in _TERM_TAGS and parents[nodes[j + 1]] == parents[nodes[i]]:
            j += 1
        if any(kept[i:j + 1]) or _near_kept(i, kept, nodes, parents):
            kept[i:j + 1] = [True] * (j + 1 - i)
        i = j + 1
    return kept


#: Words a page keeps outside readers' comments, before them, for the
#: comments after them to be left out (``drop_comments``).
ARTICLE_WORDS = 100




def drop_comments(words: list[int], kept: list[bool], comments: list[bool],
                  tags: list[str] | None = None) -> list[bool]:
    """Readers' comments under an article are left out of its text, as
    the docs promise (``comments_field`` gathers them): the model judged
    them as text, and kept an article's three or four comments. Only those
    after the last block kept outside comments, on a page that kept
    ``ARTICLE_WORDS`` there: a forum's posts are its text. A heading right
    above the comments is theirs ("Comentarios (4)") and goes too."""
    own = [i for i, (k, c) in enumerate(zip(kept, comments)) if k and not c]
    if not own or sum(words[i] for i in own) < ARTICLE_WORDS:
        return kept
    last = own[-1]
    out = [k and not (c and i > last) for i, (k, c) in enumerate(zip(kept, comments))]
    if tags is not None and tags[last] in SUBHEADINGS and last + 1 < len(kept) and comments[last + 1] and len(own) > 1:
        out[last] = False
    return out


#: Words of a kept block outside comments whose shape makes a post
#: (``keep_thread_posts``), and of a reply's block kept for it.
POST_WORDS = 5
REPLY_WORDS = 3


def keep_thread_posts(words: list[int], kept: list[bool], comments: list[bool],
                      shape: Callable[[int], str]) -> list[bool]:
    """A thread's replies, where the forum's markup calls them comments
    (Vanilla's ``li.ItemComment``), are its posts: a block inside comments
    of the shape (``post_shape``) of a kept block of ``POST_WORDS`` or more
    outside them is kept. An article's comments sit in markup of their own
    (``div.comment-content`` under ``div.entry-content``'s article), and
    stay out; a thread's first post and its replies share their message's
    markup: a thread alone kept its first post of 370 words and none of its
    four replies (they score low as comments do). Only a shape whose two
    nearest containers have a class: an old news page's article and its
    readers' comments are both paragraphs in three bare ``div``s."""
    own = {shape(i) for i, (k, c, w) in enumerate(zip(kept, comments, words)) if k and not c and w >= POST_WORDS}
    own = {s for s in own if _classed(s)}
    if not own:
        return kept
    return [k or (c and w >= REPLY_WORDS and shape(i) in own)
            for i, (k, c, w) in enumerate(zip(kept, comments, words))]


def _classed(shape: str) -> bool:
    """Whether the two nearest containers of a ``post_shape`` have a class."""
    steps = shape.split("/")
    return len(steps) >= 2 and all(not step.endswith(".") for step in steps[-2:])


#: A quote's own line ("lucia_dev wrote:") of at most this many words.
QUOTE_LINE_WORDS = 8


def drop_bare_quotes(tags: list[str], words: list[int], kept: list[bool], nodes: list[int],
                     parents: list[int]) -> list[bool]:
    """A quote whose quoted text is left out (``drop_repeats``: a forum
    reply quotes the post it answers) goes with its own short line: the
    reply kept "lucia_dev wrote:" over nothing."""
    for i, tag in enumerate(tags):
        if tag != "blockquote" or not kept[i] or words[i] > QUOTE_LINE_WORDS:
            continue
        inner = []
        for j in range(i + 1, len(tags)):
            n = parents[nodes[j]]
            while n >= 0 and n != nodes[i]:
                n = parents[n]
            if n < 0:
                break
            inner.append(j)
        if inner and not any(kept[j] for j in inner):
            kept[i] = False
    return kept


#: A post's author line or dateline holds at most this many words.
HEAD_WORDS = 12


_TRAIL_BIT = _HINT_BIT["breadcrumb"]

#: How many levels above a block the breadcrumb trail that holds it may be.
_TRAIL_REACH = 4

_TRAIL_LABEL = re.compile(r"breadcrumb", re.IGNORECASE)

#: Elements whose class speaks for the whole page (feature flags), not a part.
_PAGE_TAGS = frozenset(("body", "html"))


def in_trail(block: Block) -> bool:
    """Whether a short block is a step of a breadcrumb trail (told by
    markup: ``aria-current="page"``, schema.org's ``BreadcrumbList``, a
    class or label that says breadcrumb). Its last step is the page's own
    title, which the model kept above the headline ("UX Researcher" twice,
    and as a one-item list in ``clean_html``); a trail is never content."""
    if block.words > HEAD_WORDS:
        return False
    el = block.element
    if any(e.get("aria-current") in ("page", "location") for e in (el, *el)):  # the step or its link
        return True
    classes = block.hints & _TRAIL_BIT  # some ancestor's class or id says breadcrumb
    for _ in range(_TRAIL_REACH):
        if el is None or el.tag in _PAGE_TAGS:
            return False
        label, kind = el.get("aria-label"), el.get("itemtype")
        if (label and _TRAIL_LABEL.search(label)) or (kind and _TRAIL_LABEL.search(kind)) or (
                classes and _hint_bits(el.get("class"), el.get("id")) & _TRAIL_BIT):
            return True
        el = el.getparent()
    return False


def keep_labels(tags: list[str], near: list[bool], kept: list[bool], titles: list[bool] | None = None) -> list[bool]:
    """A heading or term the site shares, over the page's own section
    (``_phrases.section_labels``: "What you bring", "Ingredients", "Start
    date"; near-boilerplate to the model), is kept where the block right
    after it is: a section's label goes with it, as a reader sees it. So
    is a callout box's title (``titles``: ``_phrases.box_title``, "Note"
    over a docs page's note)."""
    out = list(kept)
    for i in range(len(kept) - 1):
        if near[i] and not kept[i] and kept[i + 1] and (tags[i] in LABEL_TAGS or (titles is not None and titles[i])):
            out[i] = True
    return out


#: A section of this many blocks or fewer is judged whole (``keep_sections``).
SECTION_BLOCKS = 12


def keep_sections(tags: list[str], kept: list[bool], words: list[int], link_density: list[float],
                  aside: list[bool]) -> list[bool]:
    """A kept subheading whose whole section the model dropped: a short
    section (``SECTION_BLOCKS``) of the page's own words (the template is
    gone already) is kept with it (a service page's opening hours, a
    stub's references: empty headings were left). One mostly of links, or
    holding readers' comments or blocks some neighbours share (``aside``),
    loses its heading instead: an empty "Prerequisites" says nothing."""
    out = list(kept)
    n = len(tags)
    i = 0
    while i < n:
        if not (kept[i] and tags[i] in SUBHEADINGS):
            i += 1
            continue
        j = i + 1  # to the next heading of its level or above: a subsection is its own
        while j < n and not (tags[j] in HEADING_TAGS and tags[j] <= tags[i]):  # "h2" <= "h3"
            j += 1
        run = range(i + 1, j)
        if run and not any(kept[k] for k in run):
            total = sum(words[k] for k in run)
            linked = sum(words[k] * link_density[k] for k in run)
            if len(run) <= SECTION_BLOCKS and 2 * linked < total and not any(aside[k] for k in run):
                for k in run:
                    out[k] = True
            else:
                out[i] = False
        i += 1
    return out


_FACT_TAGS = frozenset(("tr", "dt", "dd", "li"))
#: Words a block of facts holds on average ("Weight 2838 g", "Colour Sand").
FACT_WORDS = 8


def keep_labelled_sections(tags: list[str], kept: list[bool], words: list[int], link_density: list[float],
                           comments: list[bool], near: list[bool]) -> list[bool]:
    """A section under a heading the site shares (``near``: a label
    ``_phrases.section_labels`` spared, "Specifications", "Customer
    reviews"), after the page's kept text, that the model dropped whole: a
    short section (``SECTION_BLOCKS``) mostly of the page's own words, not
    links nor readers' comments, and mostly a table's rows or a list's
    entries of ``FACT_WORDS`` words or fewer on average (facts, not a box
    of headlines and their teasers) is kept with its heading. A shop's
    product pages scored their description high and then everything after
    it low: three of a new user's products lost their specifications. (Any
    section: 27 WCXB pages, 1.26 of their F1 summed, lost: Steam's "What
    Curators Say", a review's verdicts, which the annotators leave out.)
    ``keep_sections`` does this for a heading the model kept."""
    out = list(kept)
    n = len(tags)
    first = next((i for i, k in enumerate(kept) if k), n)
    for i in range(first + 1, n):
        if kept[i] or not near[i] or tags[i] not in SUBHEADINGS:
            continue
        j = i + 1  # to the next heading: a box's after a section is not the section's
        while j < n and tags[j] not in HEADING_TAGS:
            j += 1
        run = range(i + 1, j)
        if not run or len(run) > SECTION_BLOCKS or any(kept[k] or comments[k] or words[k] < 2 for k in run):
            continue  # (not a list of topics to follow, each with its "Follow")
        total = sum(words[k] for k in run)
        linked = sum(words[k] * link_density[k] for k in run)
        shared = sum(words[k] for k in run if near[k])
        facts = sum(tags[k] in _FACT_TAGS for k in run)
        if 2 * linked < total and 2 * shared < total and 2 * facts >= len(run) and total <= FACT_WORDS * len(run):
            for k in (i, *run):
                out[k] = True
    return out


#: A control's words at most: "Apply now", "Jump to Recipe", "Print Recipe".
CONTROL_WORDS = 6

_BUTTON_CLASS = re.compile(r"(?:^|[\s_-])(?:btn|button)(?:$|[\s_-])", re.IGNORECASE)


def _control(el) -> bool:
    """A button, a link styled as one, or a form control's label."""
    tag = el.tag
    if tag in ("button", "label", "select", "option") or el.get("role") == "button":
        return True
    return tag in ("a", "span", "div") and bool(_BUTTON_CLASS.search(el.get("class") or ""))


def in_control(block: Block) -> bool:
    """Whether a short block's words are all a control's: a button ("Apply
    now", "Jump to Recipe"), a link styled as one, a filter's checkbox label
    ("Full-time (128)"). A reader acts on them; they are not what the page
    says, and the model kept some beside the text they sit in."""
    if block.words > CONTROL_WORDS or not block.words:
        return False
    el = block.element
    if _control(el):
        return True
    if (el.text or "").strip():
        return False
    found = False
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if _control(child):
            found = True
        elif "".join(child.itertext()).strip():
            return False
        if (child.tail or "").strip():
            return False
    return found


def _pager(block: Block) -> bool:
    """A short block of links that are mostly page numbers ("1 2 Next").
    (Blocks holding form fields were tried too: WCXB lost a ranking's
    checkbox list of research areas, 0.52 of its page.)"""
    if block.words > HEAD_WORDS:
        return False
    if not _links_alone(block):
        return False
    links = [("".join(a.itertext())).strip() for a in block.element.iter("a")]
    return len(links) >= 2 and 2 * sum(t.isdigit() for t in links) >= len(links)


def _links_alone(block: Block) -> bool:
    """Whether a block's words are links, nine tenths of its characters:
    not a sentence that points somewhere ("See <a href='#req'>the
    requirements</a> first.")."""
    return 10 * block.link_chars >= 9 * len(block.text.replace(" ", ""))


#: ``navigation_kind``'s answers: a trail's step or a control; a table of
#: contents' entry.
NAV, TOC = 1, 2

#: Entries of a table of contents right below a heading that make it theirs.
TOC_RUN = 3

#: An entry of a table of contents holds at most this many words.
TOC_WORDS = 20


def navigation_kind(block: Block) -> int:
    """``NAV`` for a breadcrumb's step (``in_trail``), a control
    (``in_control``) or a pager, ``TOC`` for an entry of the page's table of
    contents (its words, nine tenths of its characters, links to the page's
    own anchors), else 0."""
    if block.words > TOC_WORDS:
        return 0  # every kind is short: no element looked at
    if in_trail(block) or in_control(block) or _pager(block):
        return NAV
    if not _links_alone(block):
        return 0
    hrefs = [a.get("href") or "" for a in block.element.iter("a")]
    return TOC if hrefs and all(h.startswith("#") and len(h) > 1 for h in hrefs) else 0


def drop_navigation(tags: list[str], kept: list[bool], kind: Callable[[int], int]) -> list[bool]:
    """Kept blocks that are navigation, not text: a breadcrumb trail, a
    control, the entries of a table of contents ("1. Why it matters",
    links to the page's own sections, which the text itself then gives)
    and the heading right above ``TOC_RUN`` of them ("Table of
    Contents"). ``kind``: ``navigation_kind`` of a block, asked only of
    kept blocks and of those below a kept heading."""
    out = list(kept)
    n = len(kept)
    for i in range(n):
        if not kept[i]:
            continue
        if kind(i):
            out[i] = False
        elif tags[i] in HEADING_TAGS and i + TOC_RUN < n \
                and all(kind(j) == TOC for j in range(i + 1, i + 1 + TOC_RUN)):
            out[i] = False
    return out
