"""Train content mode's block model on the evaluation pages, with
cross-validation split by site, and write scrapy_deboiler/content_model.json.

    pip install -e ".[train]"     # numpy, scikit-learn
    python benchmarks/train_content.py --data DEV.jsonl.gz [--data WCXB.jsonl.gz ...]
        [--min-site-pages 5 [--min-site-pages 2 ...]] [--model trees|linear] [--folds 5] [--cv-out F]
        [--cv-single F --cv-fitted F]

Several ``--data`` files train one model; each may have its own
``--min-site-pages`` (in the order given; one value for all otherwise). The
folds split by site (``domain``) across all files.

``trees``: gradient-boosted trees (scikit-learn's HistGradientBoosting,
deterministic with a fixed seed) exported as flat arrays that
``_content._Trees`` walks; ``linear``: two logistic regressions (numpy).

Weights: every page counts the same. Labels: a block is content when its words appear in the page's gold text
(as a phrase for blocks under 20 words, 80 % of its tokens for longer ones);
the headline is always content (``load``). ``--cv-out`` also writes each
page's ``body_text``: the kept blocks less ``body_flags`` (``--body-only``).
Pages of sites with 5+ pages are first cleaned with a site model fitted on
them; others are used as single pages (and, in the out-of-fold output, cut
to their main container as clean_page does for a page without a site model).
``trees`` also trains a second ensemble on the single pages alone
(``single`` in the model file), half of the score of a page without a site
model. ``--cv-out`` writes out-of-fold
predictions (no page is scored by a model that saw its site) for
benchmarks/score_annotated.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
from collections import Counter, defaultdict
from functools import partial
from hashlib import blake2b

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from scrapy_deboiler import Page, SiteModel  # noqa: E402
from scrapy_deboiler._clean import boilerplate_of  # noqa: E402
from scrapy_deboiler._content import (  # noqa: E402
    _TOKEN, FEATURE_COUNT, HINTS, MODEL_FORMAT, MODEL_VERSION, STAGE2_FEATURES, TAGS, ContentModel, _Trees,
    block_features, block_tree, body_flags, container_cut, decide, drop_repeats, second_pass, smooth, stage2_rows,
    place_keys, shown_text, visible_blocks)
from scrapy_deboiler._decide import keep_tables, table_spans  # noqa: E402
from scrapy_deboiler._kept_rows import head_kind, keep_like_rows, keep_post_heads, keep_rows  # noqa: E402
from scrapy_deboiler._phrases import box_title  # noqa: E402
from scrapy_deboiler._kept_rules import (  # noqa: E402
    drop_bare_quotes, drop_comments, drop_navigation, keep_between, keep_code, keep_data_after, keep_definitions,
    keep_labelled_sections, keep_labels, keep_lists, keep_sections, keep_table_rows, keep_thread_posts,
    navigation_kind)
from scrapy_deboiler._features import post_shape  # noqa: E402

from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402

OUT = os.path.join(HERE, "..", "scrapy_deboiler", "content_model.json")
#: The column of ``block_features`` that says "this block is the headline".
HEADLINE_COLUMN = 27 + len(TAGS) + len(HINTS) + 3
#: The column of ``block_features`` that says "in readers' comments" (its
#: first class/id hint).
COMMENT_COLUMN = 27 + len(TAGS) + HINTS.index("comment")


def label(text: str, gold_norm: str, gold_bag: Counter) -> float:
    toks = _TOKEN.findall(text.lower())
    if len(toks) < 20:
        return float(" ".join(toks) in gold_norm)
    return float(sum(1 for t in toks if gold_bag[t]) / len(toks) >= 0.8)


def weights(blocks) -> list[float]:
    """Each page weighs the same (the score is a mean over pages), shared
    among its blocks by the square root of their words: F1 +0.002 over
    weighting blocks alone, out of fold."""
    root = [math.sqrt(b.words) for b in blocks]
    total = sum(root) or 1.0
    return [20 * r / total for r in root]


def page_view(p: Page, model: SiteModel | None) -> tuple:
    """What training and scoring need of one page as clean_page(mode="content")
    sees it: blocks' texts, feature rows, place keys and, without a site
    model, what the main-container cut needs; ``tree``: words, link
    densities and ``block_tree`` of every page (stage 2 reads them; the
    container is the same tuple on a page without a site model)."""
    dropped, near = boilerplate_of(p, model, content=True)
    blocks = visible_blocks(p.root, set(dropped), near)
    keys = place_keys(blocks, p.root)
    rows = block_features(blocks, p.root.findtext(".//title") or "", keys)
    tree = ([b.words for b in blocks], [b.link_chars / max(1, len(b.text)) for b in blocks], *block_tree(blocks))
    container = None if model is not None else tree
    return blocks, rows, keys, container, tree


def load(path: str, min_site_pages: int, variants: bool = False):
    """Pages of sites with ``min_site_pages`` are cleaned with a model fitted
    on them, others are single pages. With ``variants`` each page also gets
    ``extra``: its view as a single page ("single") and, on a site of 2+
    pages, with a model fitted on its site's pages ("fitted"), to be scored
    out of fold (the per-site-size table). The headline block is labelled
    content whatever the gold says (``clean_text`` keeps it; ``body_only``
    leaves it out after scoring): the datasets disagree (L3S-GN1's gold
    starts with it on 91 % of pages, WCXB's on 23 %)."""
    sites = defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            sites[r["domain"]].append(r)
    # (site, id, rows, labels, texts, weights, place keys, container or None, extra, body blocks, tree, tags,
    #  data tables' spans, texts as clean_text writes them, head_kind, navigation_kind, near and
    #  callout title of each, post shapes)
    pages = []
    for site, recs in sorted(sites.items()):
        parsed = [Page(r["html"], r.get("url") or "") for r in recs]
        fitted = SiteModel.fit(parsed) if len(recs) >= (2 if variants else min_site_pages) else None
        model = fitted if len(recs) >= min_site_pages else None
        for r, p in zip(recs, parsed):
            blocks, rows, keys, container, tree = page_view(p, model)
            tags = [b.element.tag for b in blocks]
            spans = table_spans(blocks)
            gold = r["gold_text"].lower()
            bag = Counter(_TOKEN.findall(gold))
            norm = " ".join(_TOKEN.findall(gold))
            extra = {}
            if variants:
                for name, m in (("single", None), ("fitted", fitted)):
                    if name == "fitted" and m is None:
                        continue
                    if m is model:
                        extra[name] = (rows, [b.text for b in blocks], keys, container, tree, tags, spans,
                                       [shown_text(b) for b in blocks], [head_kind(b) for b in blocks],
                                       [navigation_kind(b) for b in blocks], [b.near for b in blocks],
                                       [b.near and box_title(b.element) for b in blocks],
                                       [post_shape(b.element) for b in blocks])
                    else:
                        b2, rows2, keys2, container2, tree2 = page_view(p, m)
                        extra[name] = (np.array(rows2).reshape(len(b2), FEATURE_COUNT), [b.text for b in b2],
                                       keys2, container2, tree2, [b.element.tag for b in b2], table_spans(b2),
                                       [shown_text(b) for b in b2], [head_kind(b) for b in b2],
                                       [navigation_kind(b) for b in b2], [b.near for b in b2],
                                       [b.near and box_title(b.element) for b in b2],
                                       [post_shape(b.element) for b in b2])
            head = headline(rows)
            title = p.root.findtext(".//title") or ""
            if model is not None and not boilerplate_of(p, model, content=True)[0]:
                # clean_page judges alone a page the model took nothing of
                # where the site's judgement keeps nothing: its view alone.
                b2, rows2, keys2, container2, tree2 = page_view(p, None)
                extra["alone"] = ((np.array(rows2).reshape(len(b2), FEATURE_COUNT), [b.text for b in b2], keys2,
                                   container2, tree2, [b.element.tag for b in b2], table_spans(b2),
                                   [shown_text(b) for b in b2], [head_kind(b) for b in b2],
                                   [navigation_kind(b) for b in b2], [b.near for b in b2],
                                   [b.near and box_title(b.element) for b in b2],
                                   [post_shape(b.element) for b in b2]),
                                  body_flags(b2, [True] * len(b2), title))
            pages.append((site, r["id"], rows,
                          [1.0 if k == head else label(b.text, norm, bag) for k, b in enumerate(blocks)],
                          [b.text for b in blocks], weights(blocks), keys, container, extra,
                          body_flags(blocks, [True] * len(blocks), title), tree, tags, spans,
                          [shown_text(b) for b in blocks], [head_kind(b) for b in blocks],
                          [navigation_kind(b) for b in blocks], [b.near for b in blocks],
                          [b.near and box_title(b.element) for b in blocks],
                          [post_shape(b.element) for b in blocks]))
    return pages


def headline(rows) -> int:
    """The index of the headline block (``block_features``' own choice), or -1."""
    return next((k for k, row in enumerate(rows) if row[HEADLINE_COLUMN] == 1.0), -1)


def first_scores(model: dict, rows, keys: list[str], container) -> list[float]:
    """The first stage's final scores of a page (smoothed; cut to the main
    container on a page without a site model, the one with a container), as
    ``judge_blocks`` computes them."""
    scores = smooth(predict(model, rows, single=container is not None), keys)
    if container is not None:
        scores = container_cut(scores, *container)
    return scores


def kept_text(model: dict, rows, texts: list[str], keys: list[str], container,
              tree, tags: list[str], spans, shown: list[str] | None = None,
              kinds: list[int] | None = None, trail: list[int] | None = None,
              near: list[bool] | None = None,
              titles: list[bool] | None = None,
              shapes: list[str] | None = None) -> tuple[str, list[float], list[bool]]:
    """Content mode's text of a page out of fold, as clean_page gives it (a
    page with a container is one without a site model): ``_content.decide``
    over ``first_scores``, data tables kept whole (``whole_tables``), each
    text once (``drop_repeats``); written as ``shown`` (``_content.shown_text``)."""
    scores = first_scores(model, rows, keys, container)
    scores, flags = decide(_content_model(model), scores, tree[0], tree[1], tree[2:], headline(rows), keys,
                           container is not None, [row[COMMENT_COLUMN] == 1.0 for row in rows])
    flags = keep_tables(spans, flags, tags)
    if "pre" in tags:
        flags = keep_code(tags, flags, tree[2], tree[3])
    comments = [row[COMMENT_COLUMN] == 1.0 for row in rows]
    if any(comments):
        flags = drop_comments(tree[0], flags, comments, tags)
        if shapes is not None:
            flags = keep_thread_posts(tree[0], flags, comments, shapes.__getitem__)
    flags = keep_like_rows(tags, flags, scores, tree[0], tree[1], comments, tree[2], tree[3], keys)
    if kinds is not None:
        flags = keep_post_heads(tree[0], flags, tree[2], tree[3], keys, kinds.__getitem__)
    flags = keep_rows(flags, tree[2], tree[3], keys)
    if "li" in tags:
        flags = keep_lists(tags, flags, tree[2], tree[3])
    if "tr" in tags and container is None:
        flags = keep_table_rows(tags, flags, tree[0], tree[2], tree[3])
    if "dt" in tags or "dd" in tags:
        flags = keep_definitions(tags, flags, tree[2], tree[3])
    if near is not None:
        flags = keep_labels(tags, near, flags, titles)
    aside = [c or bool(near and near[i]) for i, c in enumerate(comments)]
    flags = keep_sections(tags, flags, tree[0], tree[1], aside)
    if near is not None and any(near):
        flags = keep_labelled_sections(tags, flags, tree[0], tree[1], comments, near)
    flags = keep_between(tags, flags, tree[0], tree[1], aside, tree[2], tree[3], titles)
    if titles is not None:  # a callout's title over what keep_between kept
        flags = keep_labels(tags, titles, flags, titles)
    flags = keep_data_after(tags, flags, tree[1], comments, near or [False] * len(tags), tree[2], tree[3])
    if trail is not None:
        flags = drop_navigation(tags, flags, trail.__getitem__)
    flags = drop_repeats(texts, tree[0], keys, tags, flags)
    if "blockquote" in tags:
        flags = drop_bare_quotes(tags, tree[0], flags, tree[2], tree[3])
    return "\n".join(t for t, k in zip(shown or texts, flags) if k), scores, flags


def stage2_page_rows(page, first: list[float]) -> list[list[float]]:
    """``stage2_rows`` of a training page from its first-stage scores."""
    words, link_density, nodes, parents = page[10]
    return stage2_rows(first, words, link_density, nodes, parents, headline(page[2]), page[6], page[7] is not None)


def fit_layer(X: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1e-3, steps: int = 300) -> dict:
    mu = X.mean(0)
    sd = X.std(0)
    mu[0], sd[0] = 0.0, 1.0
    sd[sd < 1e-9] = 1.0
    Z = (X - mu) / sd
    coef = np.zeros(X.shape[1])
    for _ in range(steps):  # gradient descent on weighted log loss
        p = 1 / (1 + np.exp(-Z @ coef))
        coef -= 0.5 * (Z.T @ ((p - y) * w) / w.sum() + l2 * coef)
    return {"mean": mu.tolist(), "std": sd.tolist(), "weights": coef.tolist()}


def score(layer: dict, X: np.ndarray) -> np.ndarray:
    Z = (X - np.array(layer["mean"])) / np.array(layer["std"])
    return 1 / (1 + np.exp(-np.clip(Z @ np.array(layer["weights"]), -30, 30)))


def train_linear(pages) -> dict:
    X = np.array([row for p in pages for row in p[2]])
    y = np.array([v for p in pages for v in p[3]])
    w = np.array([v for p in pages for v in p[5]])
    first = fit_layer(X, y, w)
    X2 = []
    for p in pages:
        if p[2]:
            X2 += second_pass(p[2], score(first, np.array(p[2])).tolist())
    second = fit_layer(np.array(X2), y, w)
    return {"first": first, "second": second, "threshold": 0.5}


_LOADED: dict = {}


def _content_model(model: dict) -> ContentModel:
    """The model as ``judge_blocks`` reads it (read once a model)."""
    if _LOADED.get("data") is not model:
        _LOADED.update(data=model, model=ContentModel(model))
    return _LOADED["model"]


def predict(model: dict, rows, single: bool = False) -> list[float]:
    if isinstance(rows, np.ndarray):
        rows = rows.tolist()
    if not rows:
        return []
    if model.get("kind") == "trees":
        return _content_model(model).scores(rows, single)
    first = score(model["first"], np.array(rows)).tolist()
    return score(model["second"], np.array(second_pass(rows, first))).tolist()


def sample_blocks(page, limit: int) -> list[int]:
    """At most ``limit`` of a page's blocks, chosen by a stable hash of the
    page's id and the block's number (the same on every machine). A page
    of 2,000 blocks adds no more than one of ``limit`` to what the trees
    learn from (every page weighs the same anyway: ``weights``); training
    takes a third of the time, and out of fold (120 blocks) WCXB dev and
    the dev pages scored as with all blocks."""
    n = len(page[2])
    if not limit or n <= limit:
        return list(range(n))
    key = page[1].encode()
    return sorted(sorted(range(n), key=lambda i: blake2b(key + i.to_bytes(4, "big"), digest_size=8).digest())[:limit])


def train_trees(pages, n_trees: int, depth: int, rate: float, max_blocks: int = 0) -> dict:
    """Boosted trees on the first-pass features, exported to flat arrays;
    ``max_blocks``: at most that many blocks a page (``sample_blocks``),
    their weights scaled up to the page's."""
    chosen = [sample_blocks(p, max_blocks) for p in pages]
    X = np.array([p[2][i] for p, idx in zip(pages, chosen) for i in idx])
    y = np.array([p[3][i] for p, idx in zip(pages, chosen) for i in idx])
    w = np.array([p[5][i] * len(p[2]) / len(idx) for p, idx in zip(pages, chosen) for i in idx])
    return {"kind": "trees", "threshold": 0.5, "trees": fit_trees(X, y, w, n_trees, depth, rate, FEATURE_COUNT)}


def fit_trees(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_trees: int, depth: int, rate: float,
              width: int) -> dict:
    """Boosted trees on rows of ``width`` features, as flat arrays
    (``_content._Trees``), checked against scikit-learn's own scores."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    clf = HistGradientBoostingClassifier(max_iter=n_trees, max_depth=depth, learning_rate=rate,
                                         l2_regularization=1.0, early_stopping=False, random_state=0)
    clf.fit(X, y, sample_weight=w)
    flat = {"feature": [], "threshold": [], "left": [], "right": [], "value": [], "roots": []}
    for (tree,) in clf._predictors:  # one tree per iteration for two classes
        offset = len(flat["value"])
        flat["roots"].append(offset)
        for node in tree.nodes:
            leaf = bool(node["is_leaf"])
            flat["feature"].append(0 if leaf else int(node["feature_idx"]))
            flat["threshold"].append(0.0 if leaf else float(node["num_threshold"]))
            flat["left"].append(-1 if leaf else offset + int(node["left"]))
            flat["right"].append(-1 if leaf else offset + int(node["right"]))
            flat["value"].append(float(node["value"]) if leaf else 0.0)
    trees = {"base": float(clf._baseline_prediction.ravel()[0]), **flat}
    # The export must give scikit-learn's own scores.
    sample = X[:: max(1, len(X) // 2000)]
    ours = np.array(_Trees(trees, width).raw_py(sample.tolist()))
    assert np.allclose(ours, clf.decision_function(sample), atol=1e-9), "tree export differs"
    return trees


#: Stage 2's trees and its threshold on pages with little prose
#: (``_content.decide``; 0.3, 0.35 and 0.4 tried out of fold).
STAGE2_TREES = 100
STAGE2_LOW = 0.35


def train_stage2(pages, first: dict, max_blocks: int = 120) -> dict:
    """Stage 2 (``_content.stage2_rows``) on first-stage scores ``first``
    (page id -> scores) that must be out of fold: scores of the pages the
    first stage learned from would be surer than at run time. Same
    sampling and weights as the first stage."""
    X, y, w = [], [], []
    for p in pages:
        if not p[2]:
            continue
        rows = stage2_page_rows(p, first[p[1]])
        idx = sample_blocks(p, max_blocks)
        for i in idx:
            X.append(rows[i])
            y.append(p[3][i])
            w.append(p[5][i] * len(p[2]) / len(idx))
    trees = fit_trees(np.array(X), np.array(y), np.array(w), STAGE2_TREES, 4, 0.1, STAGE2_FEATURES)
    return {"trees": trees, "features": STAGE2_FEATURES, "low": STAGE2_LOW}


#: The single-page trees' share of a page's score when it has no site model
#: (``ContentModel``), chosen on out-of-fold scores pooled over both
#: single-page sets (1,288 pages): 0.3 gave ROUGE-LSum F1 0.916, 0.5 0.917
#: (Scrapinghub 0.952, the other single pages 0.912), the shared trees
#: alone 0.914, the single-page trees alone 0.914.
SINGLE_WEIGHT = 0.5


def train_with_single(pages, train) -> dict:
    """The shared trees (all pages, as ``train`` makes them) and trees of
    the single pages alone (pages of sites without a site model, the ones
    with a container), blended for pages without a site model."""
    model = train(pages)
    single = train([p for p in pages if p[7] is not None])
    model["single"] = {"trees": single["trees"], "weight": SINGLE_WEIGHT}
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=DEFAULT_DATA is None, help=DATA_HELP + " (repeatable)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--min-site-pages", type=int, action="append",
                    help="fit sites of this many pages (default 5; one value, or one per --data)")
    ap.add_argument("--cv-out")
    ap.add_argument("--cv-single", help="also write every page out of fold as a single page (no site model)")
    ap.add_argument("--cv-fitted", help="also write every page of a site with 2+ pages out of fold with a model "
                    "fitted on its site's pages (with --cv-single: the per-site-size table)")
    ap.add_argument("--cv-scores", help="also write out-of-fold block scores (JSON Lines), to study thresholds")
    ap.add_argument("--model", choices=("trees", "linear"), default="trees")
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--rate", type=float, default=0.1)
    ap.add_argument("--stage2", action="store_true",
                    help="add the second stage (trees; measured, not shipped: docs/content-model.md)")
    ap.add_argument("--max-blocks", type=int, default=120, help="blocks a page the trees learn from (0: all)")
    args = ap.parse_args()
    data = args.data or [DEFAULT_DATA]
    mins = args.min_site_pages or [5]
    if len(mins) == 1:
        mins = mins * len(data)
    if len(mins) != len(data):
        ap.error("give one --min-site-pages, or one per --data")
    pages = []
    for path, min_pages in zip(data, mins):
        pages += load(path, min_pages, variants=bool(args.cv_single or args.cv_fitted))
    train = (partial(train_trees, n_trees=args.trees, depth=args.depth, rate=args.rate, max_blocks=args.max_blocks)
             if args.model == "trees" else train_linear)
    if args.model == "trees":
        train = partial(train_with_single, train=train)
    fold = {p[0]: blake2b(p[0].encode(), digest_size=8).digest()[0] % args.folds for p in pages}
    stage2 = args.model == "trees" and args.stage2
    outer = {}  # the first stage on all folds but k: the out-of-fold models
    if args.cv_out or stage2:
        for k in range(args.folds):
            outer[k] = train([p for p in pages if fold[p[0]] != k])
    if args.cv_out:
        nested: dict = {k: {} for k in range(args.folds)}
        if stage2:
            # Nested: stage 2 of outer fold k learns from first-stage scores
            # out of fold within the other folds. The first stage on all
            # folds but a and b scores fold a for outer fold b and fold b for
            # outer fold a (one model a pair of folds).
            for a in range(args.folds):
                for b in range(a + 1, args.folds):
                    inner = train([p for p in pages if fold[p[0]] not in (a, b)])
                    for p in pages:
                        if fold[p[0]] in (a, b):
                            nested[b if fold[p[0]] == a else a][p[1]] = first_scores(inner, p[2], p[6], p[7])
        scores_out = gzip.open(args.cv_scores, "wt", encoding="utf-8") if args.cv_scores else None
        extra_out = {name: gzip.open(path, "wt", encoding="utf-8")
                     for name, path in (("single", args.cv_single), ("fitted", args.cv_fitted)) if path}
        with gzip.open(args.cv_out, "wt", encoding="utf-8") as out:
            for k in range(args.folds):
                model = outer[k]
                if stage2:
                    model = dict(model, stage2=train_stage2([p for p in pages if fold[p[0]] != k], nested[k]))
                for p in pages:
                    if fold[p[0]] == k:
                        text, scores, flags = kept_text(model, p[2], p[4], p[6], p[7], p[10], p[11],
                                                        p[12], p[13], p[14], p[15], p[16], p[17], p[18])
                        if scores_out:
                            scores_out.write(json.dumps({"id": p[1], "texts": p[4], "scores": scores}) + "\n")
                        # As body_flags: a page of nothing but headline, byline and captions keeps them.
                        body = "\n".join(t for t, k, b in zip(p[13], flags, p[9]) if k and b) or text
                        if not text.strip() and "alone" in p[8]:
                            view, body_mask = p[8]["alone"]
                            text, _, flags = kept_text(model, *view)
                            body = "\n".join(t for t, k, b in zip(view[7], flags, body_mask) if k and b) or text
                        out.write(json.dumps({"id": p[1], "clean_text": text, "body_text": body}) + "\n")
                        for name, f in extra_out.items():
                            if name in p[8]:
                                text, _, _ = kept_text(model, *p[8][name])
                                f.write(json.dumps({"id": p[1], "clean_text": text}) + "\n")
        for f in extra_out.values():
            f.close()
        if scores_out:
            scores_out.close()
    model = train(pages)
    if stage2:
        first = {p[1]: first_scores(outer[k], p[2], p[6], p[7])
                 for k in range(args.folds) for p in pages if fold[p[0]] == k}  # one model at a time
        model["stage2"] = train_stage2(pages, first)
    model["about"] = (f"content-mode block model ({args.model}), made by benchmarks/train_content.py "
                      "on annotated pages (see README, Quality)")
    model.update(format=MODEL_FORMAT, version=3 if "stage2" in model else MODEL_VERSION, features=FEATURE_COUNT)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(model, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
