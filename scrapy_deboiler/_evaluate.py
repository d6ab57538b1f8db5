"""Token-level precision, recall and F1 of extracted text against gold text.

The method (Dragnet's evaluation, as a bag of tokens): both texts are
lower-cased (``str.casefold``) and split into tokens, maximal runs of
Unicode word characters (``\\w+``: letters, digits, underscore, any
script). A page's overlap is the multiset intersection of the two bags, so a
token counts as often as it occurs in both. Precision = overlap / predicted
tokens, recall = overlap / gold tokens, F1 their harmonic mean. A page
predicted exactly scores 1; an empty prediction scores 0 (recall 0, and
precision 0 too, unless the gold is empty as well, which scores 1). Overall
scores are reported two ways: the mean of the page scores (macro; every
page weighs the same) and from the summed counts (micro; long pages weigh
more). Gold pages with no prediction count as empty predictions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass

__all__ = ["PageScore", "evaluate", "score_page", "tokens"]

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


@dataclass(frozen=True)
class PageScore:
    id: str
    precision: float
    recall: float
    f1: float
    predicted: int  # tokens
    gold: int
    overlap: int
    missing: bool = False  # no prediction record

    def to_json(self) -> dict:
        return asdict(self)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def score_page(page_id: str, predicted: str, gold: str, missing: bool = False) -> PageScore:
    pred, ref = Counter(tokens(predicted)), Counter(tokens(gold))
    n_pred, n_gold = sum(pred.values()), sum(ref.values())
    overlap = sum((pred & ref).values())
    if not n_pred and not n_gold:
        p = r = 1.0
    else:  # an empty side scores 0
        p = overlap / n_pred if n_pred else 0.0
        r = overlap / n_gold if n_gold else 0.0
    return PageScore(page_id, p, r, _f1(p, r), n_pred, n_gold, overlap, missing)


def evaluate(gold: Iterable[tuple[str, str]], predicted: dict[str, str]) -> tuple[list[PageScore], dict]:
    """Scores of every gold page (id, text) against ``predicted`` (id ->
    text), in gold order, and the overall summary."""
    pages = [score_page(pid, predicted.get(pid, ""), text, pid not in predicted) for pid, text in gold]
    n = len(pages)
    summary: dict = {"pages": n, "missing": sum(p.missing for p in pages)}
    if n:
        macro = {k: sum(getattr(p, k) for p in pages) / n for k in ("precision", "recall", "f1")}
        o, pr, g = (sum(getattr(p, k) for p in pages) for k in ("overlap", "predicted", "gold"))
        mp, mr = (o / pr if pr else 0.0), (o / g if g else 0.0)
        summary.update(macro=macro, micro={"precision": mp, "recall": mr, "f1": _f1(mp, mr)},
                       exact=sum(p.f1 == 1.0 for p in pages), empty_predictions=sum(not p.predicted for p in pages))
    return pages, summary
