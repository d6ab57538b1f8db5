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
"""

from __future__ import annotations

import json
import math
import os
from array import array
from operator import attrgetter, mul
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from lxml import etree

from ._content_html import content_html
from ._text import BLOCK_TAGS, SKIP_TAGS, layout_table, pre_text

# None when not built or switched off (the Python walk gives the same scores)
from ._compiled import speedups as _speedups

__all__ = ["Block", "ContentModel", "ContentModelError", "MODEL_FORMAT", "MODEL_VERSION", "PAGE_COLUMNS",
           "block_features", "block_tree", "block_tree_py", "body_flags", "container_cut", "container_cut_py",
           "default_model", "headline_index", "page_columns", "page_threshold", "stage2_rows", "STAGE2_FEATURES",
           "decide", "judge_blocks", "keep", "model_path", "page_blocks", "place_keys", "select_content",
           "noscript_words_py", "show_noscript", "smooth", "title_text", "visible_blocks"]

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
_HINT_BIT = {h: 1 << i for i, h in enumerate(HINTS)}
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
#: Elements inside a <pre> that are blocks of their own (judged apart; a
#: <br>'s text after it stays in the <pre>'s block).
_NESTED_BLOCKS = BLOCK_TAGS - {"br"}


@dataclass
class Block:
    """The text one block-level element holds directly (nested blocks are
    blocks of their own)."""

    element: etree._Element
    depth: int
    hints: int  # bit set over HINTS, from the element and its ancestors
    near: bool = False  # inside a subtree that neighbouring pages share
    parts: list[str] = field(default_factory=list)
    link_chars: int = 0
    text: str = ""
    words: int = 0
    place: object = None  # where it sits (place_keys); set by judge_blocks


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


def _finish(b: Block) -> None:
    """A block's text and word count from the text parts it gathered."""
    b.text = " ".join(" ".join(b.parts).split())
    b.words = len(_TOKEN.findall(b.text.lower()))
    b.parts = []


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
    # near-boilerplate subtree); the first is the root's parent, None marks a
    # skipped element.
    stack: list[tuple | None] = [(None, False, 0, -1, False)]
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
                stack.append(None)
                continue
            block, in_link, hints, depth, is_near = stack[-1]
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
            if block is None or tag in BLOCK_TAGS:
                block = Block(el, depth, hints, is_near)
            if tag == "a":
                in_link = True
            stack.append((block, in_link, hints, depth, is_near))
            text = el.text
        else:
            if event == "end":
                stack.pop()
            text = el.tail
            if not text:
                continue
            frame = stack[-1]
            if frame is None or frame[0] is None:
                continue
            block, in_link = frame[0], frame[1]
        if text and not text.isspace():
            if not block.parts:
                order.append(block)
            block.parts.append(text)
            if in_link:
                block.link_chars += len(text.strip())
    for b in order:
        _finish(b)
    return [b for b in order if b.words]


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
            toks = set(_TOKEN.findall(b.text.lower()))
            overlap[k] = len(title_tokens.intersection(toks)) / max(1, len(toks))
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


#: What a content model file says it is (``format``, ``version``); its
#: ``features`` must be ``FEATURE_COUNT``, the row layout this code builds.
MODEL_FORMAT = "scrapy-deboiler-content-model"
MODEL_VERSION = 3


class ContentModelError(Exception):
    """The content model is missing, unreadable, corrupt or made for another
    version: a setup error, raised before any page is cleaned."""


def model_path() -> str:
    """The content model shipped in the package."""
    return os.path.join(os.path.dirname(__file__), "content_model.json")


class ContentModel:
    """The block scorer: a gradient-boosted tree ensemble (``kind: trees``)
    or two logistic regressions (``kind: linear``, the second seeing its
    neighbours' first scores), as ``benchmarks/train_content.py`` writes.

    A trees model may hold a second ensemble, ``single``, trained on pages
    of sites without a site model only: a page without a site model
    (``single=True``) gets ``weight`` of its score and the shared trees the
    rest. Why: the shared trees learn mostly from pages cleaned with a site
    model, where what is left of a template is little; alone on its page, a
    teaser list or a ticker is not. Out of fold, weight 0.5: Scrapinghub's
    single pages ROUGE-LSum F1 / shingle F1 0.951 / 0.955 -> 0.952 / 0.957,
    CleanEval, dragnet and L3S-GN1 pages of one-page sites 0.908 / 0.916 ->
    0.912 / 0.919; pages with a site model are scored as before
    (docs/measurements.md, "Single pages and small sites")."""

    def __init__(self, data: dict) -> None:
        self.threshold = float(data["threshold"])
        self.kind = data.get("kind", "linear")
        self.single: _Trees | None = None
        self.single_weight = 0.0
        self.stage2: _Trees | None = None
        self.stage2_low = LISTING_THRESHOLD
        if data.get("stage2") is not None:
            stage2 = data["stage2"]
            if int(stage2["features"]) != STAGE2_FEATURES:
                raise ValueError("content model: stage 2 reads another feature set")
            self.stage2 = _Trees(stage2["trees"], STAGE2_FEATURES)
            self.stage2_low = float(stage2["low"])
        if self.kind == "trees":
            self.trees = _Trees(data["trees"])
            if data.get("single") is not None:
                self.single = _Trees(data["single"]["trees"])
                self.single_weight = float(data["single"]["weight"])
                if not 0.0 <= self.single_weight <= 1.0:
                    raise ValueError("content model: single-page weight out of [0, 1]")
        else:
            self.first = self._fold(data["first"])
            self.second = self._fold(data["second"])

    @staticmethod
    def _fold(layer: dict) -> tuple[float, list[float]]:
        """Standardisation folded into the weights: z = bias + w . x."""
        w = [wi / s for wi, s in zip(layer["weights"], layer["std"])]
        return -sum(wi * m for wi, m in zip(w, layer["mean"])), w

    @classmethod
    def load(cls, path: str | None = None) -> "ContentModel":
        """Read and check a model file; any problem is a ``ContentModelError``
        naming the file (a setup error, not one page's)."""
        path = path or model_path()
        try:
            with open(path, "rb") as f:
                data = json.loads(f.read())
        except FileNotFoundError:
            raise ContentModelError(f"content model {path} is missing; reinstall scrapy-deboiler") from None
        except (OSError, ValueError) as e:
            raise ContentModelError(f"content model {path} is unreadable: {e}") from None
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ContentModelError(f"content model {path} is not a {MODEL_FORMAT} file")
        if data.get("version") != MODEL_VERSION or data.get("features") != FEATURE_COUNT:
            raise ContentModelError(
                f"content model {path} is from another version of scrapy-deboiler (format version "
                f"{data.get('version')!r} with {data.get('features')!r} features; this version reads "
                f"version {MODEL_VERSION} with {FEATURE_COUNT})")
        try:
            return cls(data)
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise ContentModelError(f"content model {path} is corrupt: {type(e).__name__}: {e}") from None

    @staticmethod
    def _score(layer: tuple[float, list[float]], rows: list[list[float]]) -> list[float]:
        bias, w = layer
        return [_sigmoid(bias + sum(map(mul, w, row))) for row in rows]

    def scores(self, rows: list[list[float]], single: bool = False) -> list[float]:
        """Content probabilities of the rows; ``single``: a page without a
        site model, which the ``single`` trees also score when there are any."""
        if self.kind == "trees":
            scores = [_sigmoid(z) for z in self.trees.raw(rows)]
            if single and self.single is not None:
                scores = self._blend(scores, [_sigmoid(z) for z in self.single.raw(rows)])
            return scores
        return self._linear(rows)

    def scores_table(self, flat: array, single: bool = False) -> list[float]:
        """``scores`` of rows given as one flat array (``_block_table``)."""
        if self.kind == "trees" and _speedups is not None:
            scores = self.trees.raw_table(flat, probabilities=True)
            if single and self.single is not None:
                scores = self._blend(scores, self.single.raw_table(flat, probabilities=True))
            return scores
        w = FEATURE_COUNT
        return self.scores([flat[i:i + w].tolist() for i in range(0, len(flat), w)], single)

    def stage2_scores(self, rows: list[list[float]]) -> list[float]:
        """Stage 2's content probabilities of ``stage2_rows``."""
        assert self.stage2 is not None
        return [_sigmoid(z) for z in self.stage2.raw(rows)] if rows else []

    def _blend(self, shared: list[float], single: list[float]) -> list[float]:
        """The shared trees' probabilities blended with the single-page
        trees': ``weight`` of the second."""
        w = self.single_weight
        return [(1.0 - w) * s + w * q for s, q in zip(shared, single)]

    def _linear(self, rows: list[list[float]]) -> list[float]:
        first = self._score(self.first, rows)
        return self._score(self.second, second_pass(rows, first))


def _sigmoid(z: float) -> float:
    if z > 30.0:
        z = 30.0
    elif z < -30.0:
        z = -30.0
    return 1 / (1 + math.exp(-z))


class _Trees:
    """A tree ensemble in flat arrays: node i tests ``row[feature[i]] <=
    threshold[i]`` and goes to ``left[i]`` or ``right[i]``; leaves have
    ``left[i] == -1`` and add ``value[i]``. ``roots`` are the trees' first
    nodes; the raw score is ``base`` plus one leaf value per tree."""

    def __init__(self, data: dict, width: int = FEATURE_COUNT) -> None:
        self.base = float(data["base"])
        self.feature = array("i", data["feature"])
        self.threshold = array("d", data["threshold"])
        self.left = array("i", data["left"])
        self.right = array("i", data["right"])
        self.value = array("d", data["value"])
        self.roots = array("i", data["roots"])
        # The compiled walk trusts these indexes: check them once here.
        n = len(self.value)
        if not (len(self.feature) == len(self.threshold) == len(self.left) == len(self.right) == n
                and all(0 <= f < width for f in self.feature)
                and all(0 <= r < n for r in self.roots)
                and all(-1 <= c < n for c in self.left) and all(-1 <= c < n for c in self.right)
                and all((a < 0) == (b < 0) for a, b in zip(self.left, self.right))):
            raise ValueError("content model: inconsistent tree arrays")

    def raw(self, rows: list[list[float]]) -> list[float]:
        if _speedups is not None:
            return _speedups.score_trees(rows, self.feature, self.threshold, self.left, self.right,
                                         self.value, self.roots, self.base)
        return self.raw_py(rows)

    def raw_table(self, flat: array, probabilities: bool = False) -> list[float]:
        """``raw`` of rows given as one flat array (compiled walks only);
        ``probabilities``: through ``_sigmoid``, computed alike in C."""
        return _speedups.score_table(flat, FEATURE_COUNT, self.feature, self.threshold, self.left,
                                     self.right, self.value, self.roots, self.base, probabilities)

    def raw_py(self, rows: list[list[float]]) -> list[float]:
        feature, threshold, left, right, value = self.feature, self.threshold, self.left, self.right, self.value
        out = []
        for row in rows:
            total = self.base
            for node in self.roots:
                while left[node] >= 0:
                    node = left[node] if row[feature[node]] <= threshold[node] else right[node]
                total += value[node]
            out.append(total)
        return out


#: How much of a block's score comes from the blocks in the same place on
#: the page (0.5-0.75 all gave the same F1 out of fold; see smooth).
SMOOTHING = 0.6
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
        return _speedups.block_tree([b._address for b in blocks])
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


def keep(scores: list[float], threshold: float) -> list[bool]:
    """Blocks scoring over the threshold; when none does, the best block
    and those within half its score, so a page never comes out empty."""
    kept = [s > threshold for s in scores]
    if scores and not any(kept):
        best = max(scores)
        kept = [s >= best / 2 for s in scores]
    return kept


#: Stage 2 (``stage2_rows``): the ancestor levels it reads (1: the block's
#: element's parent), and its width.
STAGE2_LEVELS = (1, 2, 3, 5, 6)
STAGE2_FEATURES = 8 + 3 * len(STAGE2_LEVELS) + 4 + 9


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
    parents before children."""
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
    runs: dict = {}
    for k, key in enumerate(keys):
        runs.setdefault(key, []).append(k)
    run_mean = {key: sum(scores[k] for k in idx) / len(idx) for key, idx in runs.items()}
    run_share = {key: sum(words[k] for k in idx) / total for key, idx in runs.items()}
    sure = sum(x for x, s in zip(words, scores) if s > 0.5)
    sure_prose = sum(x for x, s in zip(words, scores) if s > 0.5 and x >= PROSE_WORDS)
    page = [math.log1p(n), math.log1p(total), sum(x for x in words if x >= PROSE_WORDS) / total,
            sure / total, sum(x for x, s in zip(words, scores) if s > 0.25) / total,
            sum(s * x for s, x in zip(scores, words)) / total, sure_prose / (sure or 1),
            float(head >= 0), float(single)]
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
        rows.append(row + page)
    return rows


def decide(model: ContentModel, scores: list[float], words: list[int], link_density: list[float],
           tree: tuple[list[int], list[int]] | None, head: int, keys: list,
           single: bool) -> tuple[list[float], list[bool]]:
    """The final scores and kept flags of a page's blocks from the first
    stage's (smoothed, and cut on a page alone): with a stage-2 model, its
    scores over ``stage2_rows``, kept from the model's threshold, or from
    its ``low`` one where ``page_threshold`` would lower it; else the first
    stage's, kept from ``page_threshold``. ``judge_blocks`` and
    benchmarks/train_content.py both decide here, so training measures what
    runs. ``tree``: ``block_tree`` (needed only with stage 2)."""
    threshold = page_threshold(words, model.threshold, scores)
    if model.stage2 is None or not scores:
        return scores, keep(scores, threshold)
    assert tree is not None
    final = model.stage2_scores(stage2_rows(scores, words, link_density, *tree, head, keys, single))
    if threshold < model.threshold:
        threshold = model.stage2_low
    return final, keep(final, threshold)


_DEFAULT: ContentModel | None = None


def default_model() -> ContentModel:
    """The shipped model, read once. Callers that start work (the CLI, the
    pipeline) call it first so a broken install fails at once, loudly,
    instead of marking every page ``error``."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ContentModel.load()
    return _DEFAULT


#: Class names that hide an element in common CSS frameworks and CMSs
#: (Bootstrap's ``hidden``, ``invisible``, ``sr-only``, ``d-none``;
#: WordPress's ``screen-reader-text``; Drupal's ``element-invisible`` ...).
HIDING_CLASSES = frozenset(
    "hidden hide invisible is-hidden u-hidden hidden-text sr-only visually-hidden "
    "screen-reader-text element-invisible offscreen d-none".split()
)
_SHOWN = frozenset("block flex inline grid table contents".split())


@lru_cache(maxsize=4096)
def _class_hides(cls: str) -> bool:
    """Whether a class attribute names a ``HIDING_CLASSES`` class (whole
    names: ``hidden-xs`` hides on phones only). ``d-none`` alone does not
    count when a Bootstrap breakpoint shows the element again
    (``d-none d-md-block``)."""
    tokens = cls.lower().split()
    found = HIDING_CLASSES.intersection(tokens)
    if found == {"d-none"}:
        return not any(t.startswith("d-") and t.rsplit("-", 1)[-1] in _SHOWN for t in tokens)
    return bool(found)


def _is_hidden(el: etree._Element) -> bool:
    """Whether a browser hides ``el``: a ``hidden`` attribute,
    ``aria-hidden="true"``, an inline style with ``display:none`` or
    ``visibility:hidden``, or a hiding class (``_class_hides``): schema.org
    copies of the article, closed menus and dialogs, screen-reader text.
    Readers never see them, so content mode leaves them out. ROUGE-LSum F1
    out of fold, multi-page sites / single pages: attributes and styles
    +0.002 / +0.007 (``hidden`` and ``display`` alone: +0.001 / +0.008);
    classes then +0.003 / +0.005 (without ``d-none``: +0.004 / 0; with
    ``d-none`` even where a breakpoint shows it: +0.003 / +0.001)."""
    if el.get("hidden") is not None:
        return True
    value = el.get("aria-hidden")
    if value and value.strip().lower() == "true":
        return True
    value = el.get("style")
    if value:
        value = "".join(value.split()).lower()
        if "display:none" in value or "visibility:hidden" in value:
            return True
    value = el.get("class")
    return bool(value) and _class_hides(value)


def visible_blocks(root: etree._Element, skip: set | frozenset = frozenset(),
                   near: set | frozenset = frozenset()) -> list[Block]:
    """``page_blocks`` without what a browser does not show (``_is_hidden``),
    unless nothing else would remain: what ``judge_blocks`` scores. A page
    whose ``<noscript>`` holds more text than the rest (``show_noscript``)
    is read with it."""
    blocks = page_blocks(root, skip, near, hide=True) or page_blocks(root, skip, near)
    if show_noscript(root, sum(b.words for b in blocks)):
        blocks = page_blocks(root, skip, near, hide=True) or page_blocks(root, skip, near)
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
    table = _block_table(root, skip, near, title, hide=True)
    if table is not None and not table[0]:
        table = _block_table(root, skip, near, title)
    if table is not None and show_noscript(root, sum(map(_WORDS_OF, table[0]))):  # summed in C
        table = _block_table(root, skip, near, title, hide=True)
        if not table[0]:
            table = _block_table(root, skip, near, title)
    if table is not None:
        blocks, flat = table
        scores = model.scores_table(flat, single)
    else:
        blocks = visible_blocks(root, skip, near)
        keys = place_keys(blocks, root)
        scores = model.scores(block_features(blocks, title, keys), single)
        for b, key in zip(blocks, keys):
            b.place = key
    keys = [b.place for b in blocks]
    scores = smooth(scores, keys)
    words = [b.words for b in blocks]
    link_density = [b.link_chars / max(1, len(b.text)) for b in blocks]
    tree = block_tree(blocks) if single or model.stage2 is not None else None
    if single:
        scores = container_cut(scores, words, link_density, *tree)
    head = headline_index(blocks, title) if model.stage2 is not None else -1
    scores, kept = decide(model, scores, words, link_density, tree, head, keys, single)
    return blocks, scores, whole_tables(blocks, kept)


def whole_tables(blocks: list[Block], kept: list[bool]) -> list[bool]:
    """A data table in the kept text is kept whole. Its rows are blocks of
    their own, short and often numbers, which the model scores low one by
    one: a trial's article tables kept 7 of 27, header rows lost. A table
    (not a layout table, rows not mostly links) whose rows are a third or
    more kept, or that sits between kept blocks (other such tables beside
    it do not count as a gap), keeps every block in it."""
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
        if len(rows) < 2 or all(kept[j] for j in span) or layout_table(table):
            continue
        chars = sum(len(blocks[j].text) for j in span)
        if sum(blocks[j].link_chars for j in span) * 2 > chars:
            continue  # a table of links: navigation
        spans.append((span, rows))
    in_tables = {j for span, _ in spans for j in span}
    for span, rows in spans:
        before, after = span.start - 1, span.stop
        while before in in_tables:
            before -= 1
        while after in in_tables:
            after += 1
        around = before >= 0 and kept[before] and after < len(blocks) and kept[after]
        if around or 3 * sum(kept[j] for j in rows) >= len(rows):
            for j in span:
                kept[j] = True
    return kept


def _block_table(root: etree._Element, skip: set | frozenset, near: set | frozenset,
                 title: str, hide: bool = False) -> tuple[list[Block], array] | None:
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
    for a, depth, hints, is_near, text, link_chars, words, place, tag in raw[0]:
        b = new(_TableBlock)
        b.__dict__ = {"_root": root, "_address": a, "tag": tag, "depth": depth, "hints": hints,
                      "near": is_near, "parts": [], "link_chars": link_chars, "text": text,
                      "words": words, "place": place}
        blocks.append(b)
    return blocks, raw[1]


class _TableBlock(Block):
    """A Block of the compiled table. Its element proxy is made when first
    asked for (making one for each block cost 0.6 ms on a page of 400
    paragraphs, and content mode needs none: ``tag`` comes with the
    table)."""

    def __getattr__(self, name: str):
        if name == "element":
            d = self.__dict__
            el = d["element"] = _speedups.element_at(d["_root"], d["_address"])
            return el
        raise AttributeError(name)


#: Class and id hints of a byline or a dateline (or of its ancestors).
_BYLINE_BITS = _HINT_BIT["byline"] | _HINT_BIT["author"] | _HINT_BIT["date"] | _HINT_BIT["meta"]
#: The longest byline or dateline, in words, and how far after the headline
#: one is looked for, in blocks.
BYLINE_WORDS = 12
BYLINE_REACH = 3
#: Image captions' tags. (Not captions told by their class: on WCXB dev
#: that took the names of a collection's products, word F1 -0.008 there.)
_CAPTION_TAGS = frozenset(("figcaption",))


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


def body_flags(blocks: list[Block], kept: list[bool], title: str) -> list[bool]:
    """``kept`` less what is not the body, as Scrapinghub's ``articleBody``
    and WCXB's ``main_content`` define it: the headline, a short byline or
    dateline just after it (told by its class hints: no word lists), and
    image captions (``figcaption``). A page whose kept blocks are all of
    these keeps them: the page had no body apart from them, and an empty
    text says nothing. (``body_only``; measured in the README, "Quality".)"""
    head = headline_index(blocks, title)
    out = list(kept)
    for k, b in enumerate(blocks):
        if not out[k]:
            continue
        tag = b.tag if type(b) is _TableBlock else b.element.tag
        if k == head:
            out[k] = False
        elif 0 < k - head <= BYLINE_REACH and head >= 0 and b.words <= BYLINE_WORDS and b.hints & _BYLINE_BITS:
            out[k] = False
        elif tag in _CAPTION_TAGS:
            out[k] = False
    return out if any(out) else list(kept)


def select_content(root: etree._Element, model: ContentModel | None = None,
                   skip: set | frozenset = frozenset(),
                   near: set | frozenset = frozenset(), kept_out: list | None = None,
                   single: bool = False, body_only: bool = False, url: str = "") -> tuple[str, str, str]:
    """(text, html, comments) of the blocks the model keeps, in document
    order, leaving out the subtrees in ``skip``; ``single`` as in
    ``judge_blocks``. ``comments``: the blocks
    not kept inside an element whose class or id says comment. The kept
    blocks' elements are added to ``kept_out`` (for Markdown). The HTML
    keeps the page's structure around the kept text (``content_html``;
    links made absolute against ``url``)."""
    blocks, _, flags = judge_blocks(root, model, skip, near, single)
    if body_only:
        flags = body_flags(blocks, flags, title_text(root))
    kept = [b for b, k in zip(blocks, flags) if k]
    elements = [b.element for b in kept]
    if kept_out is not None:
        kept_out.extend(elements)
    comment_bit = _HINT_BIT["comment"]
    comments = "\n".join(b.text for b, k in zip(blocks, flags) if not k and b.hints & comment_bit)
    tags = [b.tag if type(b) is _TableBlock else b.element.tag for b in kept]
    # Block texts are collapsed to one line (what the model reads); a kept
    # <pre> (code) is written with its own line breaks and indentation.
    text = "\n".join(pre_text(b.element, _NESTED_BLOCKS, skip) if tag == "pre" else b.text
                     for b, tag in zip(kept, tags))
    return text, content_html(root, elements, skip, _is_hidden, url), comments
