"""From block scores to the blocks kept: smoothing by place, the page's
threshold (an article's, or a listing's), the second stage, whole tables,
and what ``body_only`` leaves out (the headline, a byline, captions)."""

from __future__ import annotations

import math
from array import array
from typing import TYPE_CHECKING

from lxml import etree

from ._block import Block, _TableBlock
from ._compiled import speedups as _speedups
from ._dates import find_days
from ._features import _HINT_BIT, PROSE_WORDS, headline_index
from ._listing import LISTING_ALONE, LISTING_FITTED, keep_listing
from ._text import HEADING_TAGS, SUBHEADINGS, layout_table

if TYPE_CHECKING:
    from ._content_model import ContentModel

__all__ = ["BYLINE_REACH", "BYLINE_WORDS", "LISTING_THRESHOLD", "PROSE_SHARE", "SMOOTHING", "STAGE2_FEATURES",
           "STAGE2_LEVELS", "SURE_PROSE_SHARE", "SURE_PROSE_WORDS", "body_flags", "decide", "drop_repeats", "keep",
           "page_threshold", "smooth", "stage2_rows", "stage2_table", "table_spans", "keep_tables", "whole_tables"]

#: How much of a block's score comes from the blocks in the same place on
#: the page (0.5-0.75 all gave the same F1 out of fold; see smooth).
SMOOTHING = 0.6


def smooth(scores: list[float], keys: list[str], alpha: float = SMOOTHING) -> list[float]:
    """Blend each score with the mean score of the blocks in the same place
    (``place_keys``): comments, teasers and article paragraphs each come as
    runs of blocks under one template, and one decision per run beats many
    (ROUGE-LSum F1 +0.004 out of fold)."""
    groups: dict[str, list[float]] = {}
    for k, s in zip(keys, scores):
        groups.setdefault(k, []).append(s)
    mean = {k: sum(v) / len(v) for k, v in groups.items()}
    return [(1 - alpha) * s + alpha * mean[k] for k, s in zip(keys, scores)]


#: A page whose prose blocks (30+ words) hold less than this share of its
#: words is not an article (a listing, a shop's collection, a forum of
#: short posts, a table of contents): its blocks are kept from
#: ``LISTING_THRESHOLD`` instead of the model's threshold. Entries of such a
#: page score low one by one, as the same teasers and short lines do beside
#: an article; but there, they are what the reader came for. Out of fold
#: (word F1), WCXB dev 0.820 -> 0.834 (listing 0.500 -> 0.580, collection
#: 0.560 -> 0.630, forum 0.699 -> 0.712), the dev pages of multi-page sites
#: 0.946 -> 0.945, pages without a site model 0.918 -> 0.919. Chosen among
#: 0.2, 0.35, 0.5 (0.5: WCXB 0.837 but multi-page sites 0.944) and
#: thresholds 0.25, 0.35 (docs/measurements.md, "Every kind of page").
PROSE_SHARE = 0.35


LISTING_THRESHOLD = 0.25


#: An article of short paragraphs beside long teaser lists has little prose
#: too, yet what the model is sure of (blocks over its threshold) is prose:
#: at least ``SURE_PROSE_SHARE`` of those blocks' words in blocks of 30+
#: words, and at least ``SURE_PROSE_WORDS`` such words. Such a page keeps the
#: model's threshold (``page_threshold``): a listing's entries are short, so
#: what the model is sure of there is the headline and a line or two.
SURE_PROSE_SHARE = 0.7


SURE_PROSE_WORDS = 200


def page_threshold(words: list[int], threshold: float, scores: list[float] | None = None) -> float:
    """The keep threshold of a page of blocks of ``words`` words: the
    model's, or ``LISTING_THRESHOLD`` on a page with little prose, unless
    the blocks that ``scores`` keep at the model's threshold are an
    article's prose (``SURE_PROSE_SHARE``). Out of fold, the exception:
    Scrapinghub's single pages, body only, ROUGE-LSum F1 0.939 -> 0.943
    (shingle 0.946 -> 0.948); CleanEval, dragnet and L3S-GN1 one-page sites
    0.912 either way (shingle 0.919 -> 0.920); WCXB dev word F1 0.832 -> 0.833; dev
    pages of multi-page sites unchanged (0.938 / 0.948)."""
    total = sum(words)
    if not total or sum(n for n in words if n >= PROSE_WORDS) >= PROSE_SHARE * total:
        return threshold
    if scores is not None:
        sure = prose = 0
        for n, s in zip(words, scores):
            if s > threshold:
                sure += n
                if n >= PROSE_WORDS:
                    prose += n
        if prose >= SURE_PROSE_WORDS and prose >= SURE_PROSE_SHARE * sure:
            return threshold
    return min(threshold, LISTING_THRESHOLD)


#: A page without a site model whose kept blocks hold fewer words than
#: this, while it has prose (blocks of ``PROSE_WORDS`` or more), kept a
#: sliver of itself: a thread's vote counts ("5", "2") over its posts, which
#: the model scored under its threshold (WCXB dev: 21 pages, 12 of them
#: forum threads, came out as a few words beside a gold text of over 100).
#: Its blocks within ``RESCUE_SHARE`` of its best prose block's score are
#: kept too. Not with a site model: what is left there once the template is
#: gone is the page's own, however short (a photo's caption; the dev pages
#: of sites: 6 of 8 such pages worse with it, their gold 4 to 14 words).
SLIVER_KEPT_WORDS = 20
RESCUE_SHARE = 0.75


def keep(scores: list[float], threshold: float, words: list[int] | None = None) -> list[bool]:
    """Blocks scoring over the threshold; when none does, the best block
    and those within half its score, so a page never comes out empty.
    ``words``: the blocks' words, to rescue a page that kept a sliver
    (``SLIVER_KEPT_WORDS``)."""
    kept = [s > threshold for s in scores]
    if scores and not any(kept):
        best = max(scores)
        kept = [s >= best / 2 for s in scores]
    if words is not None and sum(n for n, k in zip(words, kept) if k) < SLIVER_KEPT_WORDS:
        prose = [s for s, n in zip(scores, words) if n >= PROSE_WORDS]
        if prose:
            floor = RESCUE_SHARE * max(prose)
            kept = [k or s >= floor for k, s in zip(kept, scores)]
    return kept


#: Stage 2 (``stage2_rows``): the ancestor levels it reads (1: the block's
#: element's parent), and its width.
STAGE2_LEVELS = (1, 2, 3, 5, 6)


STAGE2_FEATURES = 8 + 3 * len(STAGE2_LEVELS) + 4 + 9 + 3


def stage2_rows(scores: list[float], words: list[int], link_density: list[float], nodes: list[int],
                parents: list[int], head: int, keys: list, single: bool) -> list[list[float]]:
    """Stage 2's features of each block, from the first stage's final scores
    (smoothed, cut to the main container on a page alone): the block's
    score, its run's (``place_keys``) mean score and word share, the score
    (word-weighted), word share and block count of its ancestors at
    ``STAGE2_LEVELS``, of the element it shares with the headline, and the
    page's summaries. Why: the first stage scores a block from what it is;
    whether it is content depends as much on what the model thought of the
    blocks around it (a listing's entries, a forum's posts, a docs page's
    short lines are content when their container is). ``nodes``/``parents``:
    ``block_tree``; ``head``: ``headline_index``. One walk per element,
    parents before children. Sums of floats are written as loops: Python
    3.12's ``sum`` rounds differently (compensated), and the rows must be
    the same doubles on every version and in ``_speedups.stage2_table``,
    which ``decide`` uses when it is built."""
    n = len(scores)
    if not n:
        return []
    count = len(parents)
    mass = [0.0] * count
    held = [0.0] * count
    blocks_in = [0] * count
    for s, x, node in zip(scores, words, nodes):
        mass[node] += s * x
        held[node] += x
        blocks_in[node] += 1
    for e in range(count - 1, 0, -1):  # children come after their parents
        up = parents[e]
        if up >= 0:
            mass[up] += mass[e]
            held[up] += held[e]
            blocks_in[up] += blocks_in[e]
    depth = [0] * count
    for e in range(count):
        depth[e] = depth[parents[e]] + 1 if parents[e] >= 0 else 0
    total = sum(words) or 1
    # meet[e]: the nearest of e and its ancestors that holds the headline (-1: none)
    on_head = [False] * count
    if head >= 0:
        e = nodes[head]
        while e >= 0:
            on_head[e] = True
            e = parents[e]
    meet = [-1] * count
    for e in range(count):
        meet[e] = e if on_head[e] else (meet[parents[e]] if parents[e] >= 0 else -1)
    # The article: the smallest element holding the headline and most of
    # the page's sure prose. A run of teasers beside it is not inside it; a
    # listing's entries have no such article around or beside them.
    prose_in = [0.0] * count
    for s, x, node in zip(scores, words, nodes):
        if s > 0.5 and x >= PROSE_WORDS:
            prose_in[node] += x
    for e in range(count - 1, 0, -1):
        if parents[e] >= 0:
            prose_in[parents[e]] += prose_in[e]
    all_prose = sum(prose_in[e] for e in range(count) if parents[e] < 0)
    article = -1
    if head >= 0 and all_prose >= SURE_PROSE_WORDS:
        e = nodes[head]
        while e >= 0 and prose_in[e] < SURE_PROSE_SHARE * all_prose:
            e = parents[e]
        article = e
    inside = [False] * count
    for e in range(count):
        inside[e] = e == article or (parents[e] >= 0 and inside[parents[e]])
    article_share = held[article] / total if article >= 0 else 0.0
    runs: dict = {}
    for k, key in enumerate(keys):
        runs.setdefault(key, []).append(k)
    run_mean = {}
    for key, idx in runs.items():
        summed = 0.0
        for k in idx:
            summed += scores[k]
        run_mean[key] = summed / len(idx)
    run_share = {key: sum(words[k] for k in idx) / total for key, idx in runs.items()}
    sure = sum(x for x, s in zip(words, scores) if s > 0.5)
    sure_prose = sum(x for x, s in zip(words, scores) if s > 0.5 and x >= PROSE_WORDS)
    weighted = 0.0
    for s, x in zip(scores, words):
        weighted += s * x
    page = [math.log1p(n), math.log1p(total), sum(x for x in words if x >= PROSE_WORDS) / total,
            sure / total, sum(x for x, s in zip(words, scores) if s > 0.25) / total,
            weighted / total, sure_prose / (sure or 1), float(head >= 0), float(single)]
    rows = []
    for i in range(n):
        node = nodes[i]
        row = [scores[i], run_mean[keys[i]], run_share[keys[i]], math.log1p(len(runs[keys[i]])),
               math.log1p(words[i]), min(1.0, link_density[i]), i / n, float(i == head)]
        e = node
        for level in range(1, STAGE2_LEVELS[-1] + 1):
            if parents[e] >= 0:
                e = parents[e]
            if level in STAGE2_LEVELS:
                row += [mass[e] / max(1.0, held[e]), held[e] / total, math.log1p(blocks_in[e])]
        if head >= 0:
            e = meet[node]
            if e >= 0:
                row += [mass[e] / max(1.0, held[e]), held[e] / total, float(depth[node] - depth[e]), float(i > head)]
            else:
                row += [0.0, 1.0, 30.0, float(i > head)]
        else:
            row += [0.0, 1.0, 30.0, 0.0]
        row += [float(article >= 0 and not inside[node]), article_share, float(article >= 0)]
        rows.append(row + page)
    return rows


def stage2_table(scores: list[float], words: list[int], link_density: list[float], nodes: list[int],
                 parents: list[int], head: int, keys: list, single: bool) -> array:
    """``stage2_rows`` as one flat array, compiled (``_speedups`` built):
    0.07 ms a page against 2 ms for the Python rows, a quarter of a page's
    clean."""
    assert _speedups is not None
    return _speedups.stage2_table(scores, words, link_density, nodes, parents, head, keys, single, STAGE2_LEVELS,
                                  PROSE_WORDS, float(SURE_PROSE_WORDS), SURE_PROSE_SHARE, STAGE2_FEATURES)


def decide(model: ContentModel, scores: list[float], words: list[int], link_density: list[float],
           tree: tuple[list[int], list[int]] | None, head: int, keys: list,
           single: bool, comments: list[bool] | None = None) -> tuple[list[float], list[bool]]:
    """The final scores and kept flags of a page's blocks from the first
    stage's (smoothed, and cut on a page alone): with a stage-2 model, its
    scores over ``stage2_rows``, kept from the model's threshold, or from
    its ``low`` one where ``page_threshold`` would lower it (reading stage
    2's scores: the first stage is sure of a teaser column's excerpts,
    stage 2 is not, and the article keeps its threshold); else the first
    stage's, kept from ``page_threshold``; on a page alone, without the
    teasers of other pages beside its article (``drop_teasers``).
    ``judge_blocks`` and benchmarks/train_content.py both decide here, so
    training measures what runs. ``tree``: ``block_tree`` (needed with
    stage 2 and on a page alone); ``head``: ``headline_index`` (-1: none);
    ``comments``: which blocks are in readers' comments (``keep_listing``)."""
    if model.stage2 is None or not scores:
        kept = keep(scores, page_threshold(words, model.threshold, scores), words if single else None)
        if single and tree is not None:
            kept = drop_teasers(scores, words, kept, *tree, head, keys)
        if tree is not None:
            kept = keep_listing(words, kept, *tree, keys, comments, link_density, head,
                                LISTING_ALONE if single else LISTING_FITTED)
        return scores, kept
    assert tree is not None
    if _speedups is not None:
        final = model.stage2_table_scores(stage2_table(scores, words, link_density, *tree, head, keys, single))
    else:
        final = model.stage2_scores(stage2_rows(scores, words, link_density, *tree, head, keys, single))
    threshold = page_threshold(words, model.threshold, final)
    if threshold < model.threshold:
        threshold = model.stage2_low
    kept = keep(final, threshold, words if single else None)
    if single:
        kept = drop_teasers(final, words, kept, *tree, head, keys)
    return final, keep_listing(words, kept, *tree, keys, comments, link_density, head,
                               LISTING_ALONE if single else LISTING_FITTED)


#: A page alone that is an article: its headline and at least
#: ``SURE_PROSE_WORDS`` of its surest prose (kept blocks of ``PROSE_WORDS``
#: or more scoring within ``SUREST_SPREAD`` of the best of them) in one
#: element. A run of ``TEASER_RUN`` or more kept blocks of one place
#: (``place_keys``) outside that element and all on one side of it, every
#: one scoring ``TEASER_GAP`` or more under the median of that prose, is a
#: box of other pages' teasers (``drop_teasers``).
SUREST_SPREAD = 0.1
TEASER_GAP = 0.15
TEASER_RUN = 3


def drop_teasers(scores: list[float], words: list[int], kept: list[bool], nodes: list[int], parents: list[int],
                 head: int, keys: list) -> list[bool]:
    """``kept`` without the teasers of other pages beside an article on a
    page alone: a news site's "More from" box of titles and excerpts of
    40-80 words reads like prose block by block (0.67-0.79 against the
    article's 0.93-0.98), and where its words outnumber the article's the
    main container holds both (``container_cut``). Its entries are one run,
    on one side of the article, each clearly under the article's prose; a
    listing has no such article, and a page's own text split across a
    layout table's cells sits on both sides of the cell holding most of it.
    Out of fold (``benchmarks/train_content.py``): see docs/measurements.md.
    ``nodes``/``parents``: ``block_tree``; ``head``: ``headline_index``."""
    n = len(scores)
    if head < 0 or not n:
        return kept
    prose = [i for i in range(n) if kept[i] and words[i] >= PROSE_WORDS]
    if not prose:
        return kept
    top = max(scores[i] for i in prose)
    surest = [i for i in prose if scores[i] >= top - SUREST_SPREAD]
    total = sum(words[i] for i in surest)
    if total < SURE_PROSE_WORDS:
        return kept
    count = len(parents)
    held = [0] * count
    for i in surest:
        held[nodes[i]] += words[i]
    for e in range(count - 1, 0, -1):  # children come after their parents
        if parents[e] >= 0:
            held[parents[e]] += held[e]
    article = nodes[head]
    while article >= 0 and held[article] < SURE_PROSE_SHARE * total:
        article = parents[article]
    if article < 0:
        return kept
    inside = [False] * count
    for e in range(count):
        inside[e] = e == article or (parents[e] >= 0 and inside[parents[e]])
    within = [i for i in range(n) if inside[nodes[i]]]
    first, last = within[0], within[-1]
    ranked = sorted(scores[i] for i in surest)
    floor = ranked[len(ranked) // 2] - TEASER_GAP
    runs: dict = {}
    for i in range(n):
        if kept[i] and not inside[nodes[i]]:
            runs.setdefault(keys[i], []).append(i)
    out = kept
    for run in runs.values():
        if len(run) >= TEASER_RUN and (run[-1] < first or run[0] > last) and all(scores[i] < floor for i in run):
            if out is kept:
                out = list(kept)
            for i in run:
                out[i] = False
    return out


def whole_tables(blocks: list[Block], kept: list[bool], tags: list[str]) -> list[bool]:
    """A data table in the kept text is kept whole. Its rows are blocks of
    their own, short and often numbers, which the model scores low one by
    one: a trial's article tables kept 7 of 27, header rows lost. A table
    (not a layout table, most rows not links alone) whose rows are a third or
    more kept, or that sits between kept blocks (other such tables beside
    it do not count as a gap) or right under a kept heading, keeps every
    block in it."""
    return keep_tables(table_spans(blocks, kept), kept, tags)


def table_spans(blocks: list[Block], kept: list[bool] | None = None) -> list[tuple[range, list[int]]]:
    """The data tables among the blocks, each as the span of blocks from its
    first row to its last and the indices of its rows (``whole_tables``).
    With ``kept``, a table already kept whole is left out. Apart from
    ``keep_tables`` so that training can find the spans once a page."""
    tables: dict[etree._Element, list[int]] = {}
    for i, b in enumerate(blocks):
        if (b.tag if type(b) is _TableBlock else b.element.tag) != "tr":
            continue
        t = b.element.getparent()
        while t is not None and t.tag != "table":
            t = t.getparent()
        if t is not None:
            tables.setdefault(t, []).append(i)
    spans = []
    for table, rows in tables.items():
        lo, hi = rows[0], rows[-1]
        span = range(lo, hi + 1)
        if len(rows) < 2 or (kept is not None and all(kept[j] for j in span)) or layout_table(table):
            continue
        if 2 * sum(10 * blocks[j].link_chars >= 9 * len(blocks[j].text) for j in rows) > len(rows):
            continue  # a table of links: navigation (a schedule's rows link their talks, with a time beside)
        spans.append((span, rows))
    return spans


_TABLE_HEADINGS = SUBHEADINGS | {"caption"}


def keep_tables(spans: list[tuple[range, list[int]]], kept: list[bool], tags: list[str] | None = None) -> list[bool]:
    """``whole_tables``' decision over the spans ``table_spans`` found
    (those already kept whole are no gap between kept blocks); with
    ``tags``, a table right under a kept heading is kept too (a page's
    "Viewings" over its table, the page's last part)."""
    spans = [(span, rows) for span, rows in spans if not all(kept[j] for j in span)]
    in_tables = {j for span, _ in spans for j in span}
    for span, rows in spans:
        before, after = span.start - 1, span.stop
        while before in in_tables:
            before -= 1
        while after in in_tables:
            after += 1
        around = before >= 0 and kept[before] and after < len(kept) and kept[after]
        led = tags is not None and before >= 0 and kept[before] and tags[before] in _TABLE_HEADINGS
        if around or led or 3 * sum(kept[j] for j in rows) >= len(rows):
            for j in span:
                kept[j] = True
    return kept


#: A kept block of at least this many words whose text a kept block before
#: it already gave is left out (``drop_repeats``).
REPEAT_WORDS = 5
#: Blocks whose text may rightly repeat: code and table rows.
_REPEATABLE = frozenset(("pre", "tr"))


def drop_repeats(texts: list[str], words: list[int], places: list, tags: list[str],
                 kept: list[bool]) -> list[bool]:
    """Each kept text once. Shops write a product's description twice (a
    phone's layout and a desktop's, one hidden by a style sheet we do not
    read), forums quote the post a reply answers, tabs and carousels copy
    their slides: WCXB's gold holds such text once or not at all, and a
    corpus wants it once. A block (its ``texts``, ``words``, ``places``:
    ``place_keys``, ``tags``) is left out when a kept block before it in
    another place gave the same text: the entries of one list keep the line
    they share (each card's "Ships in two days"); code lines and table
    rows may repeat."""
    seen: dict[str, object] = {}
    out = list(kept)
    for i, text in enumerate(texts):
        if not kept[i] or words[i] < REPEAT_WORDS or tags[i] in _REPEATABLE:
            continue
        key = " ".join(text.lower().split())
        first = seen.setdefault(key, places[i])
        if first != places[i]:
            out[i] = False
    return out


#: Class and id hints of a byline or a dateline (or of its ancestors).
_BYLINE_BITS = _HINT_BIT["byline"] | _HINT_BIT["author"] | _HINT_BIT["date"] | _HINT_BIT["meta"]


#: The longest byline or dateline, in words, and how far after the headline
#: one is looked for, in blocks.
BYLINE_WORDS = 12


BYLINE_REACH = 3
#: A dateline told by its date: at most this many words, this many blocks
#: after the headline, this many on the page (Scrapinghub, in-sample:
#: ROUGE-LSum 0.959 -> 0.961; WCXB equal).
DATELINE_WORDS = 20
DATELINE_REACH = 5
DATELINES = 2


#: Image captions' tags. (Not captions told by their class: on WCXB dev
#: that took the names of a collection's products, word F1 -0.008 there.)
_CAPTION_TAGS = frozenset(("figcaption",))



def body_flags(blocks: list[Block], kept: list[bool], title: str) -> list[bool]:
    """``kept`` less what is not the body, as Scrapinghub's ``articleBody``
    and WCXB's ``main_content`` define it: the headline, a short byline or
    dateline just after it (told by its class hints: no word lists; or by
    the date it writes, where the page has one or two such lines, not a
    thread's or a listing's many; a byline too: a thread's first post kept
    its text and lost its author, 30 threads of a new user's forum), and
    image captions (``figcaption``). A page whose kept blocks are all of
    these keeps them: the page had no body apart from them, and an empty
    text says nothing. (``body_only``;
    measured in the README, "Quality".)"""
    head = headline_index(blocks, title)
    out = list(kept)
    # Short dated blocks: an article's dateline, unless the page has many
    # (a thread's posts, a listing's entries, a schedule's days).
    dated = [k for k, b in enumerate(blocks) if kept[k] and k > head >= 0 and b.words <= DATELINE_WORDS
             and (b.tag if type(b) is _TableBlock else b.element.tag) not in HEADING_TAGS
             and not b.text.rstrip().endswith(":") and find_days(b.text, limit=1)]
    datelines = set(dated) if len(dated) <= DATELINES else set()
    # Bylines too: a thread's first post's author is one of its posts' heads.
    heads = sum(1 for k, b in enumerate(blocks) if kept[k] and k > head >= 0 and b.words <= BYLINE_WORDS
                and b.hints & _BYLINE_BITS)
    bylines = heads <= DATELINES
    for k, b in enumerate(blocks):
        if not out[k]:
            continue
        tag = b.tag if type(b) is _TableBlock else b.element.tag
        if k == head:
            out[k] = False
        elif bylines and 0 < k - head <= BYLINE_REACH and head >= 0 and b.words <= BYLINE_WORDS \
                and b.hints & _BYLINE_BITS:
            out[k] = False
        elif k - head <= DATELINE_REACH and k in datelines:
            out[k] = False
        elif tag in _CAPTION_TAGS:
            out[k] = False
    return out if any(out) else list(kept)
