"""Content mode: keep a page's main content, block by block.

After the site's boilerplate is gone, what remains still holds whatever
differs between pages: related links, comments, bylines, teasers. Each text
block (the text between block-level tags) is scored from shallow features
(boilerpipe's word count and link density, position relative to the page's
largest blocks, title and headline, how its text is written, class/id hints of
its ancestors, its neighbours and siblings)
by a small gradient-boosted tree ensemble. The trees are plain data
(``content_model.json``) made by ``benchmarks/train_content.py`` with
cross-validation split by site.

This module walks the page into blocks and judges them (``judge_blocks``,
``select_content``); the parts it calls are their own modules: ``_block``
(a block), ``_features`` (its feature row), ``_content_model`` (the scorer),
``_decide`` (scores to kept blocks) and ``_hidden`` (what a browser hides).
Their names are read from here too, as before.
"""

from __future__ import annotations

from array import array
from typing import Any

from lxml import etree

from ._block import Block, _TableBlock
# None when not built or switched off (the Python walk gives the same scores)
from ._compiled import speedups as _speedups
from ._content_html import content_html
from ._content_model import (MODEL_FORMAT, MODEL_VERSION, ContentModel, ContentModelError, default_model,
                             model_path)
from ._decide import (STAGE2_FEATURES, body_flags, decide, drop_repeats, keep, page_threshold, smooth, stage2_rows,
                      whole_tables)
from ._features import (HINTS, PAGE_COLUMNS, TAGS, _HINT_BIT, _TOKEN, _WORDS_OF, _hint_bits, _hint_cache,
                        block_features, headline_index, page_columns, place_keys, post_shape)
from ._hidden import _class_hides, _is_hidden
from ._listing import LISTING_ALONE, LISTING_FITTED, keep_listing, listing_sliver
from ._kept_rows import head_kind, keep_like_rows, keep_post_heads, keep_rows
from ._kept_rules import (drop_bare_quotes, drop_comments, drop_navigation, keep_between, keep_code, keep_data_after,
                          keep_definitions, keep_labelled_sections, keep_labels, keep_lists, keep_sections,
                          keep_table_rows, keep_thread_posts, navigation_kind)
from ._phrases import box_title
from ._text import BLOCK_TAGS, HEADING_TAGS, PERMALINK_MARKS, SKIP_TAGS, permalink, pre_text, runs_on

# The names the training script, the tests and the other modules have
# always read from here (the parts moved to _block, _features,
# _content_model, _decide and _hidden).
from ._content_model import _Trees  # noqa: E402,F401
from ._decide import LISTING_THRESHOLD, PROSE_SHARE  # noqa: E402,F401
from ._features import FEATURE_COUNT, PROSE_WORDS, _HINT, _HINT_WORDS, second_pass  # noqa: E402,F401
from ._hidden import HIDING_CLASSES  # noqa: E402,F401

__all__ = ["Block", "ContentModel", "ContentModelError", "MODEL_FORMAT", "MODEL_VERSION", "PAGE_COLUMNS",
           "block_features", "block_tree", "block_tree_py", "body_flags", "container_cut", "container_cut_py",
           "default_model", "headline_index", "page_columns", "page_threshold", "stage2_rows", "STAGE2_FEATURES",
           "decide", "judge_blocks", "keep", "model_path", "page_blocks", "place_keys", "select_content", "shown_text",
           "noscript_words_py", "show_noscript", "smooth", "title_text", "visible_blocks"]

#: Elements inside a <pre> that are blocks of their own (judged apart; a
#: <br>'s text after it stays in the <pre>'s block).
_NESTED_BLOCKS = BLOCK_TAGS - {"br"}
#: Elements at whose edges a block's words part (``shown_text``): blocks,
#: and inside a block a table's cells and a button.
APART_TAGS = BLOCK_TAGS | {"td", "th", "button"}
#: The frame of a skipped element of ``APART_TAGS``.
_APART_SKIPPED = ("apart",)


def _finish(b: Block) -> None:
    """A block's text and word count from the text parts it gathered: the
    parts joined by spaces (what the model was trained on: "by open() ."),
    kept for ``shown_text``."""
    b.text = " ".join(" ".join(b.parts).split())
    b.words = len(_TOKEN.findall(b.text.lower()))


def shown_text(b: Block) -> str:
    """A block's text as a reader sees it, for ``clean_text``: where the
    page parts its words (whitespace, a nested block's or a cell's edge:
    " " parts) they part, and where two inline texts meet, as
    ``_text.runs_on`` says. ``Block.text``, which the model reads, parts every text node;
    the words are the same."""
    parts = b.parts
    if len(parts) < 2:
        return b.text
    if parts[-1].strip() in PERMALINK_MARKS or parts[0].strip() in PERMALINK_MARKS:
        # A heading's permalink ("Installation¶": Sphinx, MkDocs): no word of the page.
        parts = parts[1:] if parts[0].strip() in PERMALINK_MARKS else parts
        parts = parts[:-1] if parts and parts[-1].strip() in PERMALINK_MARKS else parts
        if not "".join(parts).strip():
            return b.text
    out = [parts[0]]
    for prev, part in zip(parts, parts[1:]):
        if not (part[0].isspace() or prev[-1].isspace() or runs_on(prev, part)):
            out.append(" ")
        out.append(part)
    return " ".join("".join(out).split())


def _apart(parts: list[str]) -> None:
    """A " " part (where words part), once the block has text, and one in a row."""
    if parts and parts[-1] != " ":
        parts.append(" ")


def page_blocks(root: etree._Element, skip: set | frozenset = frozenset(),
                near: set | frozenset = frozenset(), hide: bool = False) -> list[Block]:
    """Text blocks in document order (of their first text), one walk;
    subtrees in ``skip`` (boilerplate) are left out, their tails kept, and
    with ``hide`` those of hidden elements (``_is_hidden``; never ``<html>``
    or ``<body>`` themselves).
    The compiled walk when built (0.74 instead of 0.95 ms a page on the dev
    pages; the per-block Python work that both share is the rest), else
    ``page_blocks_py``, which defines the result."""
    if _speedups is not None:
        raw = _speedups.block_walk(
            root, {_speedups.address_of(e) for e in skip}, {_speedups.address_of(e) for e in near},
            _BLOCK_BYTES, _SKIP_BYTES, _hint_bits, _hint_cache(), _class_hides if hide else None)
        if raw is not None:
            order = []
            for address, depth, hints, is_near, parts, link_chars, _ in raw:
                b = Block(_speedups.element_at(root, address), depth, hints, is_near, parts, link_chars)
                _finish(b)
                if b.words:
                    order.append(b)
            return order
    return page_blocks_py(root, skip, near, hide)


_BLOCK_BYTES = frozenset(t.encode() for t in BLOCK_TAGS)


_SKIP_BYTES = frozenset(t.encode() for t in SKIP_TAGS)


_TAG_BYTES = {t.encode(): i for i, t in enumerate(TAGS)}


def page_blocks_py(root: etree._Element, skip: set | frozenset = frozenset(),
                   near: set | frozenset = frozenset(), hide: bool = False) -> list[Block]:
    """``page_blocks`` in Python: the reference for the compiled walk."""
    order: list[Block] = []
    # Frames: (block it writes to, inside a link, hint bits, depth, inside a
    # near-boilerplate subtree, its edges part words); the first is the
    # root's parent, None (or _APART_SKIPPED) marks a skipped element.
    stack: list[Any] = [(None, False, 0, -1, False, False)]
    hint_cache = _hint_cache()
    # Comments and PIs (only in hand-built trees: the parser drops them) are
    # not entered, but the text after them belongs to their parent's block.
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, el in walker:
        tag = el.tag
        if event == "start":
            if (not isinstance(tag, str) or tag in SKIP_TAGS or el in skip
                    or (hide and tag != "html" and tag != "body" and _is_hidden(el))):
                walker.skip_subtree()
                stack.append(_APART_SKIPPED if tag in APART_TAGS else None)
                continue
            top = stack[-1]
            assert top is not None  # a skipped subtree is not entered
            block, in_link, hints, depth, is_near, _ = top
            depth += 1
            if near and not is_near and el in near:
                is_near = True
            cls = el.get("class")
            ident = el.get("id")
            if cls or ident:
                key = (cls, ident)
                bits = hint_cache.get(key)
                if bits is None:
                    bits = hint_cache[key] = _hint_bits(cls, ident)
                hints |= bits
            apart = tag in BLOCK_TAGS
            if block is None or apart:
                block = Block(el, depth, hints, is_near)
            elif tag in APART_TAGS:
                apart = True
                _apart(block.parts)
            if tag == "a":
                in_link = True
            stack.append((block, in_link, hints, depth, is_near, apart))
            text = el.text
        else:
            left = stack.pop() if event == "end" else None
            frame = stack[-1]
            if frame is None or frame[0] is None:
                continue
            block, in_link = frame[0], frame[1]
            if left is _APART_SKIPPED or (left is not None and left[5]):
                _apart(block.parts)  # words part at a nested block's or a cell's edge
            text = el.tail
        if text:
            # Whitespace is a " " part once the block has text: where words
            # part in ``shown_text``.
            if text.isspace():
                _apart(block.parts)
                continue
            if not block.parts:
                order.append(block)
            block.parts.append(text)
            if in_link:
                block.link_chars += len(text.strip())
    for b in order:
        _finish(b)
    return [b for b in order if b.words]



#: A page without a site model: how much of a block's score survives when it
#: lies outside the main container (``container_cut``). Out of fold, any
#: value from 0 to 0.5 gave the same (the cut is all but hard). With the
#: page columns, 0.8 gave pages without a site model word F1 +0.003 on the
#: dev pages and WCXB dev, but kept a ticker of excerpts above an article
#: (tests/test_content.py): not taken.
OUTSIDE = 0.5


#: How much a block's link density counts against its container:
#: ``(1 - link density) ** LINK_POWER`` (0: 0.949, 1: 0.950, 2: 0.951, 4:
#: 0.949 ROUGE-LSum F1 on Scrapinghub's single pages, out of fold).
LINK_POWER = 2.0


def block_tree(blocks: list[Block]) -> tuple[list[int], list[int]]:
    """The part of the page's tree that holds the blocks, as numbers: each
    block's element (``nodes``) and each numbered element's parent
    (``parents``, -1 for the top), numbered so that a parent comes before
    its children (not ``id()``s, which could be reused). One walk up from
    each block, stopping at the first element already numbered: what
    ``container_cut`` needs, in time linear in the elements. Compiled for
    the compiled table's blocks (``_speedups.block_tree``)."""
    if _speedups is not None and all(type(b) is _TableBlock for b in blocks):
        return _speedups.block_tree([b.__dict__["_address"] for b in blocks])  # _TableBlock's own
    return block_tree_py(blocks)


def block_tree_py(blocks: list[Block]) -> tuple[list[int], list[int]]:
    """``block_tree`` in Python: the reference for the compiled one."""
    number: dict = {}
    parents: list[int] = []
    nodes: list[int] = []
    for b in blocks:
        el = b.element
        new = []
        while el is not None and el not in number:
            new.append(el)
            el = el.getparent()
        up = number[el] if el is not None else -1
        for a in reversed(new):
            number[a] = len(parents)
            parents.append(up)
            up = number[a]
        nodes.append(number[b.element])
    return nodes, parents


def container_cut(scores: list[float], words: list[int], link_density: list[float],
                  nodes: list[int], parents: list[int], outside: float = OUTSIDE) -> list[float]:
    """Scores of a page without a site model, cut to its main container.

    On a page alone, teaser lists, tickers and "more from" boxes with
    excerpts read like article text block by block; what gives them away is
    that they are not where most of the article is. Each element gets the
    content its blocks hold (score times words, less for link text) and the
    element whose content best matches the page's, as an F1 of the two
    (``2 M / (its words + page content)``), is the main container; blocks
    outside it keep ``outside`` of their score. Ties go to the element
    numbered first (of an element and its only child, which hold the same
    blocks, the parent). ``nodes`` and ``parents``: ``block_tree``. Out of
    fold on Scrapinghub's single pages ROUGE-LSum F1 0.933 -> 0.951,
    shingle 0.938 -> 0.955; CleanEval, dragnet and L3S-GN1 pages of one-page
    sites 0.906 -> 0.908, 0.913 -> 0.916 (docs/measurements.md, "Single
    pages and small sites")."""
    if _speedups is not None:
        return _speedups.container_cut(scores, words, link_density, nodes, parents, outside, LINK_POWER)
    return container_cut_py(scores, words, link_density, nodes, parents, outside)


def container_cut_py(scores: list[float], words: list[int], link_density: list[float],
                     nodes: list[int], parents: list[int], outside: float = OUTSIDE) -> list[float]:
    """``container_cut`` in Python: the reference for the compiled one."""
    if len(scores) < 2:
        return scores
    count = len(parents)
    mass = [0.0] * count
    held = [0.0] * count
    total = 0.0
    for s, n, ld, node in zip(scores, words, link_density, nodes):
        m = s * n * (1.0 - ld) ** LINK_POWER
        total += m
        mass[node] += m
        held[node] += n
    if total <= 0.0:
        return scores
    for e in range(count - 1, 0, -1):  # children come after their parents
        up = parents[e]
        if up >= 0:
            mass[up] += mass[e]
            held[up] += held[e]
    best, best_f = -1, -1.0
    for e in range(count):
        f = 2.0 * mass[e] / (held[e] + total)
        if f > best_f:
            best, best_f = e, f
    inside = [False] * count
    for e in range(count):
        inside[e] = e == best or (parents[e] >= 0 and inside[parents[e]])
    return [s if inside[node] else s * outside for s, node in zip(scores, nodes)]


#: A page whose shown blocks hold fewer words than this, and under
#: ``SLIVER_SHARE`` of all its blocks' words, hides its content until a
#: script shows it (an inline ``display:none`` on the product or the article
#: that its script lifts once loaded: a shop's "defer-block", a blog's
#: fade-in): its hidden elements are read as shown. WCXB dev: seven such
#: pages (an article of 2,000 words, a product, collections) gave their
#: header's few words; of the 2,921 dev pages one is read differently (a
#: flipbook whose slides its gold leaves out).
SLIVER_WORDS = 80
SLIVER_SHARE = 0.1


def _reveal(shown: int, whole: int) -> bool:
    """Whether a page with ``shown`` words shown of ``whole`` is read
    with its hidden elements (``SLIVER_WORDS``; none shown: always)."""
    return shown == 0 or (shown < SLIVER_WORDS and shown < SLIVER_SHARE * whole)


def _shown_blocks(root: etree._Element, skip: set | frozenset, near: set | frozenset) -> list[Block]:
    blocks = page_blocks(root, skip, near, hide=True)
    shown = sum(b.words for b in blocks)
    if shown < SLIVER_WORDS:
        whole = page_blocks(root, skip, near)
        if _reveal(shown, sum(b.words for b in whole)):
            return whole
    return blocks


def visible_blocks(root: etree._Element, skip: set | frozenset = frozenset(),
                   near: set | frozenset = frozenset()) -> list[Block]:
    """``page_blocks`` without what a browser does not show (``_is_hidden``),
    unless that leaves a sliver of the page (``_reveal``): what
    ``judge_blocks`` scores. A page whose ``<noscript>`` holds more text
    than the rest (``show_noscript``) is read with it."""
    blocks = _shown_blocks(root, skip, near)
    if show_noscript(root, sum(b.words for b in blocks)):
        blocks = _shown_blocks(root, skip, near)
    return blocks


#: Fewer words than this in a page's ``<noscript>`` are a notice ("You
#: need to enable JavaScript to run this app."), not the page's content.
NOSCRIPT_WORDS = 30


def show_noscript(root: etree._Element, words: int) -> bool:
    """Turn the page's ``<noscript>`` elements into ``<div>``s when they
    hold more words than the ``words`` read without them, and say whether it
    did. Such a page is a script-built shell (Discourse forums send each
    thread's posts in a ``<noscript>`` for readers without scripts, and an
    empty ``<section id="main">`` for the script to fill): what a reader
    without scripts, a crawler, sees is the ``<noscript>``. Other pages'
    ``<noscript>`` ("enable JavaScript", a tracking pixel) stay out. WCXB
    dev: 19 of its 113 forum pages had no text at all before this. The tree
    is changed in place (content mode's walks, its HTML and Markdown then
    all read the same content). A ``<noscript>`` of fewer than
    ``NOSCRIPT_WORDS`` words stays out: a script-only app's notice."""
    held = _speedups.noscript_words(root) if _speedups is not None else noscript_words_py(root)
    if held <= words or held < NOSCRIPT_WORDS:  # none (-1), or a notice
        return False
    for e in list(root.iter("noscript")):
        e.tag = "div"
    return True


def noscript_words_py(root: etree._Element) -> int:
    """The words of the page's ``<noscript>`` elements, -1 when it has none:
    the reference for the compiled count (``_speedups.noscript_words``, a
    walk over libxml2's nodes instead of lxml's ``iter`` over the page)."""
    shells = list(root.iter("noscript"))
    if not shells:
        return -1
    held = 0
    for e in shells:
        held += len(_TOKEN.findall(" ".join(e.itertext())))
    return held


def title_text(root: etree._Element) -> str:
    """The text of the page's first ``<title>`` (``root.findtext(".//title")
    or ""``), what the blocks' title columns read: compiled when built
    (lxml's search cost 0.1 ms a page)."""
    if _speedups is not None:
        return _speedups.first_text(root, b"title")
    return root.findtext(".//title") or ""


def judge_blocks(root: etree._Element, model: ContentModel | None = None,
                 skip: set | frozenset = frozenset(), near: set | frozenset = frozenset(),
                 single: bool = False) -> tuple[list[Block], list[float], list[bool]]:
    """The page's text blocks (``visible_blocks``), their content scores and
    whether each is kept. ``single``: a page without a site model, scored
    also by the model's single-page trees (``ContentModel``) and then cut
    to its main container (``container_cut``)."""
    model = model or default_model()
    title = title_text(root)
    table = _shown_table(root, skip, near, title)
    if table is not None and show_noscript(root, sum(map(_WORDS_OF, table[0]))):  # summed in C
        table = _shown_table(root, skip, near, title)
    if table is not None:
        blocks: list[Block] = list(table[0])
        scores = model.scores_table(table[1], single)
    else:
        blocks = visible_blocks(root, skip, near)
        places = place_keys(blocks, root)
        scores = model.scores(block_features(blocks, title, places), single)
        for b, key in zip(blocks, places):
            b.place = key
    keys: list = [b.place for b in blocks]
    scores = smooth(scores, keys)
    words = [b.words for b in blocks]
    link_density = [b.link_chars / max(1, len(b.text)) for b in blocks]
    tree = block_tree(blocks) if single or model.stage2 is not None else None
    if single:
        assert tree is not None
        scores = container_cut(scores, words, link_density, *tree)
    head = headline_index(blocks, title) if model.stage2 is not None or single else -1
    comments = _in_comments(blocks)
    scores, kept = decide(model, scores, words, link_density, tree, head, keys, single,
                          comments if tree is not None else None)
    tags = [b.tag if type(b) is _TableBlock else b.element.tag for b in blocks]
    listing = LISTING_ALONE if single else LISTING_FITTED
    sliver = tree is None and listing_sliver(words, kept, listing)  # decide's, without its tree
    if tree is None and (sliver or "pre" in tags):
        tree = block_tree(blocks)  # built here only where a rule below asks for it
    if sliver:
        assert tree is not None
        kept = keep_listing(words, kept, *tree, keys, comments, link_density,
                            head if head >= 0 else headline_index(blocks, title), listing)
    kept = whole_tables(blocks, kept, tags)
    if "pre" in tags:
        assert tree is not None
        kept = keep_code(tags, kept, *tree)
    if any(comments):
        kept = drop_comments(words, kept, comments, tags)
        kept = keep_thread_posts(words, kept, comments, lambda i: post_shape(blocks[i].element))
    if tree is None:
        tree = block_tree(blocks)
    kept = keep_like_rows(tags, kept, scores, words, link_density, comments, *tree, keys)
    kept = keep_post_heads(words, kept, *tree, keys, lambda i: head_kind(blocks[i]))
    kept = keep_rows(kept, *tree, keys)
    if "li" in tags:
        kept = keep_lists(tags, kept, *tree)
    if "tr" in tags and not single:
        kept = keep_table_rows(tags, kept, words, *tree)
    if "dt" in tags or "dd" in tags:
        kept = keep_definitions(tags, kept, *tree)
    near_flags = [b.near for b in blocks]
    titles = [n and box_title(b.element) for n, b in zip(near_flags, blocks)] if any(near_flags) else None
    kept = keep_labels(tags, near_flags, kept, titles)
    aside = [c or n for c, n in zip(comments, near_flags)]
    kept = keep_sections(tags, kept, words, link_density, aside)
    if any(near_flags):
        kept = keep_labelled_sections(tags, kept, words, link_density, comments, near_flags)
    kept = keep_between(tags, kept, words, link_density, aside, *tree, titles)
    if titles is not None:  # a callout's title over what keep_between kept
        kept = keep_labels(tags, titles, kept, titles)
    kept = keep_data_after(tags, kept, link_density, comments, near_flags, *tree)
    # Navigation out before repeats: a trail's last step repeats the headline, which must stay.
    kinds: dict[int, int] = {}
    kept = drop_navigation(tags, kept, lambda i: kinds[i] if i in kinds else kinds.setdefault(
        i, navigation_kind(blocks[i])))
    kept = drop_repeats([b.text for b in blocks], words, keys, tags, kept)
    if "blockquote" in tags:
        kept = drop_bare_quotes(tags, words, kept, *tree)
    return blocks, scores, kept


def _in_comments(blocks: list[Block]) -> list[bool]:
    """Which blocks are inside an element whose class or id says comment."""
    bit = _HINT_BIT["comment"]
    return [bool(b.hints & bit) for b in blocks]


def _shown_table(root: etree._Element, skip: set | frozenset, near: set | frozenset,
                 title: str) -> tuple[list[_TableBlock], array] | None:
    """``_block_table`` without hidden elements, as ``_shown_blocks``."""
    table = _block_table(root, skip, near, title, hide=True)
    if table is None:
        return None
    shown = sum(map(_WORDS_OF, table[0]))
    if shown < SLIVER_WORDS:
        whole = _block_table(root, skip, near, title)
        if whole is not None and _reveal(shown, sum(map(_WORDS_OF, whole[0]))):
            return whole
    return table


def _block_table(root: etree._Element, skip: set | frozenset, near: set | frozenset,
                 title: str, hide: bool = False) -> tuple[list[_TableBlock], array] | None:
    """``page_blocks`` and ``block_features`` compiled in one pass: the
    blocks, and their rows as one flat array of FEATURE_COUNT doubles a
    block (0.6 instead of 1.5 ms a page on the dev pages, under the
    profiler; the tests check it against the Python definitions). None
    when not built or for namespaced trees."""
    if _speedups is None:
        return None
    address = _speedups.address_of
    raw = _speedups.block_table(
        root, {address(e) for e in skip}, {address(e) for e in near}, _BLOCK_BYTES, _SKIP_BYTES,
        _hint_bits, _hint_cache(), frozenset(_TOKEN.findall(title.lower())), _TAG_BYTES, len(TAGS),
        len(HINTS), _class_hides if hide else None)
    if raw is None:
        return None
    new = object.__new__
    blocks = []
    for a, depth, hints, is_near, text, link_chars, words, place, tag, parts in raw[0]:
        b = new(_TableBlock)
        b.__dict__ = {"_root": root, "_address": a, "tag": tag, "depth": depth, "hints": hints,
                      "near": is_near, "parts": parts, "link_chars": link_chars, "text": text,
                      "words": words, "place": place}
        blocks.append(b)
    return blocks, raw[1]


def select_content(root: etree._Element, model: ContentModel | None = None,
                   skip: set | frozenset = frozenset(),
                   near: set | frozenset = frozenset(), kept_out: list | None = None,
                   single: bool = False, body_only: bool = False, url: str = "",
                   blocks_out: list | None = None) -> tuple[str, str, str]:
    """(text, html, comments) of the blocks the model keeps, in document
    order, leaving out the subtrees in ``skip``; ``single`` as in
    ``judge_blocks``. ``comments``: the blocks
    not kept inside an element whose class or id says comment. The kept
    blocks' elements are added to ``kept_out`` (for Markdown). The HTML
    keeps the page's structure around the kept text (``content_html``;
    links made absolute against ``url``). ``blocks_out`` gets every block
    (for the page's metadata)."""
    blocks, _, flags = judge_blocks(root, model, skip, near, single)
    if blocks_out is not None:
        blocks_out.extend(blocks)
    if body_only:
        flags = body_flags(blocks, flags, title_text(root))
    kept = [b for b, k in zip(blocks, flags) if k]
    elements = [b.element for b in kept]
    if kept_out is not None:
        kept_out.extend(elements)
    comment_bit = _HINT_BIT["comment"]
    comments = "\n".join(shown_text(b) for b, k in zip(blocks, flags)
                         if not k and b.hints & comment_bit and not navigation_kind(b))  # not "Reply"
    tags = [b.tag if type(b) is _TableBlock else b.element.tag for b in kept]
    # Block texts are collapsed to one line; a kept <pre> (code) is written
    # with its own line breaks and indentation.
    text = "\n".join(pre_text(b.element, _NESTED_BLOCKS, skip) if tag == "pre" else shown_text(b)
                      for b, tag in zip(kept, tags))
    # A heading's permalink ("Installation¶") is left out of the HTML as of the text.
    marks = {a for el, tag in zip(elements, tags) if tag in HEADING_TAGS for a in el.iter("a") if permalink(a)}
    return text, content_html(root, elements, skip | marks if marks else skip, _is_hidden, url), comments
