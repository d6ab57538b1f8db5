"""What the content model reads of a block: its feature row.

The block's own words, links, tag and class/id hints, its place among the
page's blocks and beside the title and headline, then its page's and its
run's columns (``page_columns``). ``_speedups.block_table`` computes the
same rows in one compiled walk; the tests hold the two equal.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from operator import attrgetter

from lxml import etree

from ._block import Block, _TableBlock
# None when not built or switched off (the Python walks give the same)
from ._compiled import speedups as _speedups


__all__ = ["FEATURE_COUNT", "HINTS", "MAX_HINTS", "PAGE_COLUMNS", "PROSE_WORDS", "TAGS", "block_features",
           "headline_index", "page_columns", "place_keys", "post_shape", "second_pass"]

_TOKEN = re.compile(r"\w+")


_WORDS_OF = attrgetter("words")


_DIGIT = re.compile(r"\d")


#: Substrings looked for in the class and id of a block and its ancestors.
HINTS = (
    "comment related share social footer sidebar nav menu ad promo caption byline author "
    "date tag meta widget breadcrumb subscribe newsletter login copyright article content "
    "story body post entry text main title headline"
).split()


_HINT = re.compile("|".join(HINTS))


_HINT_BIT: dict[str, int] = {h: 1 << i for i, h in enumerate(HINTS)}


_HINT_WORDS = tuple(h.encode("ascii") for h in HINTS)


#: Block tags with a feature of their own.
TAGS = ("p h1 h2 h3 h4 h5 h6 li td tr div pre blockquote dd dt table section article "
        "form header footer nav aside ul br body").split()


_TAG_ROWS = {t: [float(t == u) for u in TAGS] for t in TAGS}


_NO_TAG = [0.0] * len(TAGS)


#: Columns of a block's row that describe its page and its run (see
#: ``page_columns``), after the block's own.
PAGE_COLUMNS = 10


#: A block of this many words or more is prose (``page_columns``,
#: ``page_threshold``; ``_speedups._page_columns`` says 30 too).
PROSE_WORDS = 30


#: Length of a block's feature row (see block_features).
FEATURE_COUNT = 27 + len(TAGS) + len(HINTS) + 10 + PAGE_COLUMNS


_HEADLINE = frozenset(("h1", "h2", "h3"))


#: More HINTS than this in one element's class and id describe the page,
#: not the element's part in it (a body class listing feature flags,
#: "f_share_tools_footer_on f_sticky_sidebar_video_on ...", set nearly every
#: hint on every block): such an element adds none. Out of fold, 5 gave
#: single pages ROUGE-LSum F1 0.922 (no cap 0.909; 3: 0.922, 4: 0.921, 7:
#: 0.919) and multi-page sites 0.931 (no cap 0.930).
MAX_HINTS = 5


def _hint_bits(cls: str | None, ident: str | None) -> int:
    """HINTS found in an element's class and id, as bits (callers cache
    them by (class, id): pages repeat a few values many times)."""
    text = f"{cls or ''} {ident or ''}".lower()
    bits = _speedups.literal_hits(text, _HINT_WORDS) if _speedups is not None else -1
    if bits < 0:
        bits = 0
        for m in _HINT.findall(text):
            bits |= _HINT_BIT[m]
    return bits if bin(bits).count("1") <= MAX_HINTS else 0


_HINT_CACHE: dict[tuple, int] = {}


def _hint_cache() -> dict[tuple, int]:
    """Hint bits by (class, id), shared by pages: a site's pages repeat the
    same values (0.1 ms a page saved); emptied when it grows large."""
    if len(_HINT_CACHE) > 20_000:
        _HINT_CACHE.clear()
    return _HINT_CACHE


def block_features(blocks: list[Block], title: str, keys: list | None = None) -> list[list[float]]:
    """The feature vector of every block: its own text, its neighbours',
    its place on the page and in the tree, its tag and class hints, and
    what kind of page and run it is in (``page_columns``; ``keys``: the
    blocks' ``place_keys``, worked out here when not given)."""
    if not blocks:
        return []
    if keys is None:
        keys = place_keys(blocks, blocks[0].element.getroottree().getroot())
    n = len(blocks)
    title_tokens = set(_TOKEN.findall(title.lower()))
    main = _main_container(blocks)
    inside = set(main.iter()) if main is not None else set()
    biggest = max(range(n), key=lambda i: blocks[i].words)
    total_words = sum(b.words for b in blocks)
    max_words = blocks[biggest].words
    overlap = [0.0] * n
    if title_tokens:
        for k, b in enumerate(blocks):
            words_in = set(_TOKEN.findall(b.text.lower()))
            overlap[k] = len(title_tokens.intersection(words_in)) / max(1, len(words_in))
    head = headline_index(blocks, title)
    parents = [b.element.getparent() for b in blocks]
    siblings = Counter(parents)
    same_tag = Counter((p, b.element.tag) for p, b in zip(parents, blocks))
    rows = []
    hint_rows: dict[int, list[float]] = {}
    for k, b in enumerate(blocks):
        prev = blocks[k - 1] if k else None
        nxt = blocks[k + 1] if k + 1 < n else None
        words = math.log1p(b.words)
        ld = b.link_chars / max(1, len(b.text))
        in_main = 1.0 if b.element in inside else 0.0
        dist = (k - biggest) / n
        row = [
            1.0, words, ld, ld * words, k / n, b.depth / 30, b.words / max_words,
            math.log1p(prev.words) if prev else 0.0,
            prev.link_chars / max(1, len(prev.text)) if prev else 1.0,
            math.log1p(nxt.words) if nxt else 0.0,
            nxt.link_chars / max(1, len(nxt.text)) if nxt else 1.0,
            float(b.text[-1:] in '.!?"”'),
            len(_DIGIT.findall(b.text)) / max(1, len(b.text)),
            float(b.words < 4), in_main, dist, abs(dist),
            overlap[k], float(dist < 0), in_main * words,
            # a few interactions a linear model cannot form itself
            words * words / 10, in_main * ld, float(k == biggest), b.words / max(1, total_words),
            float(prev is not None and parents[k - 1] is parents[k]),
            float(b.near), float(b.near) * words,
        ]
        row += _TAG_ROWS.get(b.element.tag, _NO_TAG)
        hint_row = hint_rows.get(b.hints)
        if hint_row is None:
            hint_row = hint_rows[b.hints] = [float(b.hints >> j & 1) for j in range(len(HINTS))]
        row += hint_row
        # Where the headline is; how the text is written (no word lists: the
        # commas, word lengths, capitals and full stops of prose versus
        # menus and titles); how many blocks share the parent.
        toks = _TOKEN.findall(b.text)
        cased = [t for t in toks if t[0].isalpha()]
        row += [
            float(head >= 0), (k - head) / n if head >= 0 else 0.0, float(0 <= head < k), float(k == head),
            b.text.count(",") / b.words, sum(map(len, toks)) / max(1, len(toks)),
            sum(1 for t in cased if t[0].isupper()) / max(1, len(cased)), b.text.count(". ") / b.words,
            math.log1p(siblings[parents[k]]), same_tag[parents[k], b.element.tag] / siblings[parents[k]],
        ]
        rows.append(row)
    for row, extra in zip(rows, page_columns(blocks, keys)):
        row += extra
    return rows


def page_columns(blocks: list[Block], keys: list) -> list[list[float]]:
    """What kind of page each block is on and what run it is in: the page's
    blocks, link density, largest block's and prose blocks' (30+ words)
    share of its words, share of list items, words; the block's run (the
    blocks in its place, ``place_keys``): their number, share of the page's
    words, link density, and whether it is the page's largest run. Why: an
    article is one long run of prose, a listing, a shop's collection or a
    forum thread many short entries in one run that holds most of the
    page, and the same short block is the page's content on the second and
    a teaser on the first. WCXB dev out of fold (by site, word F1):
    collection 0.517 -> 0.560, listing 0.470 -> 0.500, all 0.815 -> 0.820;
    the other pages' word F1 0.926 -> 0.929. ``_speedups.block_table``
    computes the same."""
    n = len(blocks)
    words = [b.words for b in blocks]
    total = sum(words)
    chars = sum(len(b.text) for b in blocks)
    links = sum(b.link_chars for b in blocks)
    prose = sum(w for w in words if w >= PROSE_WORDS)
    lists = sum(1 for b in blocks if (b.tag if type(b) is _TableBlock else b.element.tag) == "li")
    runs: dict = {}
    for b, key in zip(blocks, keys):
        run = runs.get(key)
        if run is None:
            run = runs[key] = [0, 0, 0, 0]
        run[0] += 1
        run[1] += b.words
        run[2] += b.link_chars
        run[3] += len(b.text)
    top = None
    for key, run in runs.items():  # the first of the largest, in page order
        if top is None or run[1] > runs[top][1]:
            top = key
    page = [math.log1p(n), links / max(1, chars), max(words) / total, prose / total, lists / n, math.log1p(total)]
    out = []
    for key in keys:
        run = runs[key]
        out.append(page + [math.log1p(run[0]), run[1] / total, run[2] / max(1, run[3]), float(key == top)])
    return out


def second_pass(rows: list[list[float]], first: list[float]) -> list[list[float]]:
    """Second-pass features: the first ones plus the block's and its two
    neighbours' first-pass scores on each side."""
    n = len(first)

    def at(i: int) -> float:
        return first[i] if 0 <= i < n else 0.0

    return [row + [first[k], at(k - 1), at(k + 1), at(k - 2), at(k + 2)] for k, row in enumerate(rows)]


def _main_container(blocks: list[Block]) -> etree._Element | None:
    """The lowest common ancestor of the largest block and the others of at
    least 30 % its size among the top three: where the article lives."""
    if not blocks:
        return None
    top = sorted(blocks, key=lambda b: -b.words)[:3]
    chain = [top[0].element, *top[0].element.iterancestors()]
    common = set(chain)  # elements (proxies kept alive), not ids that could be reused
    for b in top[1:]:
        if b.words >= 0.3 * top[0].words:
            common &= {b.element, *b.element.iterancestors()}
    return next((a for a in chain if a in common), None)


_NOT_IN_PLACE = re.compile(r"[0-9 \t\n\r\v\f]")


def place_keys(blocks: list[Block], root: etree._Element) -> list[str]:
    """Where each block sits below ``root``: the tags and classes (digits and
    whitespace left out) of its parent and the parent's ancestors, e.g.
    ``html./body./div.post/div.entry``. The compiled table hashes the same
    strings as it walks (``_speedups._place_hash``)."""
    memo: dict = {}
    top = root.getparent()
    if top is not None:
        memo[top] = ""

    def key(el) -> str:
        chain = []
        while el is not None and el not in memo:
            chain.append(el)
            el = el.getparent()
        path = memo[el] if el is not None else ""
        for a in reversed(chain):
            path = memo[a] = f"{path}{a.tag}.{_NOT_IN_PLACE.sub('', a.get('class') or '')}/"
        return path

    return [key(b.element.getparent()) if b.element is not root else "" for b in blocks]


#: How many of a block's nearest containers make its post's shape (``post_shape``).
SHAPE_LEVELS = 3


def post_shape(element: etree._Element) -> str:
    """The tags and classes of the ``SHAPE_LEVELS`` elements above
    ``element`` (below ``<html>``), outermost first, each step written as
    ``place_keys`` writes it: a thread's first post and its replies are
    alike here (``div.Item-Body/div.Message userContent``) where their
    places differ above it."""
    steps: list[str] = []
    el = element.getparent()
    while el is not None and len(steps) < SHAPE_LEVELS and el.getparent() is not None:
        steps.append(f"{el.tag}.{_NOT_IN_PLACE.sub('', el.get('class') or '')}")
        el = el.getparent()
    return "/".join(reversed(steps))


def headline_index(blocks: list[Block], title: str) -> int:
    """The headline among ``blocks`` (``block_features``' column, and what
    ``body_only`` leaves out): the first ``h1``-``h3`` mostly made of the
    ``<title>``'s words, else the first ``h1``; -1 when there is none.
    ``_speedups.block_table`` finds the same."""
    title_tokens = set(_TOKEN.findall(title.lower()))
    first_h1 = -1
    for k, b in enumerate(blocks):
        tag = b.tag if type(b) is _TableBlock else b.element.tag
        if tag in _HEADLINE:
            if title_tokens:
                toks = set(_TOKEN.findall(b.text.lower()))
                if len(title_tokens.intersection(toks)) / max(1, len(toks)) >= 0.5:
                    return k
            if tag == "h1" and first_h1 < 0:
                first_h1 = k
    return first_h1
