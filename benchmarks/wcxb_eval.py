"""Score content mode on WCXB, the Web Content eXtraction Benchmark (page
types), with its own metric, beside other systems' outputs.

    python benchmarks/wcxb_eval.py WCXB.jsonl.gz [NAME=PRED.jsonl.gz[:FIELD] ...]
        [--run [--body-only]] [--peers PEERS.jsonl.gz] [--json OUT.json]

WCXB (Murrough-Foley/web-content-extraction-benchmark, CC-BY-4.0): pages of
seven labelled types (article, service, product, collection, forum,
listing, documentation), each with its ``main_content`` gold, snippets a
correct extraction must contain (``with``) and boilerplate snippets it must
not (``without``). WCXB.jsonl.gz is one page a line: ``id``, ``url``,
``domain``, ``html``, ``page_type``, ``gold_text``, ``gold_with``,
``gold_without`` (the public split converts to this with a few lines; it is
not part of this repository). Only its dev split is ours to tune on.

``--run`` cleans the pages with ``scrapy-deboiler clean`` as a user runs it
(a separate process, sites grouped by ``domain``, content mode, with
``--body-only`` if given) and scores that as ``ours``. NAME=PRED scores a
prediction file (``id`` and ``clean_text``, or FIELD), e.g.
``benchmarks/train_content.py --cv-out``'s output: the shipped content model
was trained on WCXB's dev pages, so on those pages only its cross-validated
predictions are a fair score. ``--peers``: a file of other extractors'
outputs (``id``, ``extractor``, ``text``), one row a system.

Metric, as WCXB's evaluate.py computes it (written here from its
definition): per page, the F1 of the bags of lower-cased ``\\w+`` words of
the prediction against the gold; the mean over pages, per type and over
all. Snippets: the share of ``with`` snippets found in the prediction and
of ``without`` snippets absent from it (case and whitespace folded).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

from score_annotated import read_jsonl  # noqa: E402 (benchmarks/, beside this script)

TYPES = ("article", "service", "product", "collection", "forum", "listing", "documentation")
_WORD = re.compile(r"\w+")


def word_f1(pred: str, gold: str) -> float:
    p = Counter(_WORD.findall(pred.lower()))
    g = Counter(_WORD.findall(gold.lower()))
    if not g:
        return 1.0 if not p else 0.0
    overlap = sum((p & g).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(p.values()), overlap / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


def score(gold: dict[str, dict], pred: dict[str, str]) -> dict[str, float]:
    """Mean word F1 per page type and over all pages (a page without a
    prediction scores 0), and the snippet shares."""
    by: dict[str, list[float]] = defaultdict(list)
    found = wanted = absent = unwanted = 0
    for pid, g in gold.items():
        text = pred.get(pid) or ""
        s = word_f1(text, g["gold_text"] or "")
        by["all"].append(s)
        by[g.get("page_type") or "?"].append(s)
        folded = _fold(text)
        for snippet in g.get("gold_with") or ():
            wanted += 1
            found += _fold(snippet) in folded
        for snippet in g.get("gold_without") or ():
            unwanted += 1
            absent += _fold(snippet) not in folded
    out = {k: sum(v) / len(v) for k, v in by.items()}
    out["with kept"] = found / max(1, wanted)
    out["without dropped"] = absent / max(1, unwanted)
    out["pages"] = len(by["all"])
    return out


def run_cli(gold_path: str, body_only: bool) -> dict[str, str]:
    """``scrapy-deboiler clean`` on the pages, as a user runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl.gz")
        cmd = [sys.executable, "-m", "scrapy_deboiler", "clean", gold_path, out, "--domain-field", "domain",
               "--no-progress"]
        if body_only:
            cmd.append("--body-only")
        subprocess.run(cmd, check=True)
        return {r["id"]: r.get("clean_text") or "" for r in read_jsonl(out)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gold", help="WCXB pages, JSON Lines (gzip if .gz)")
    ap.add_argument("predictions", nargs="*", help="NAME=PRED.jsonl.gz[:FIELD]")
    ap.add_argument("--run", action="store_true", help="clean the pages with scrapy-deboiler clean as 'ours'")
    ap.add_argument("--body-only", action="store_true", help="with --run: clean with --body-only")
    ap.add_argument("--peers", help="other extractors' outputs: id, extractor, text")
    ap.add_argument("--json", help="write the scores here")
    args = ap.parse_args()
    gold = {r["id"]: r for r in read_jsonl(args.gold)}
    systems: dict[str, dict[str, str]] = {}
    if args.run:
        systems["ours" + (" (body only)" if args.body_only else "")] = run_cli(args.gold, args.body_only)
    for spec in args.predictions:
        name, _, path = spec.partition("=")
        field = "clean_text"
        if ":" in os.path.basename(path):
            path, field = path.rsplit(":", 1)
        systems[name] = {r["id"]: r.get(field) or r.get("text") or "" for r in read_jsonl(path)}
    if args.peers:
        for r in read_jsonl(args.peers):
            systems.setdefault(r["extractor"], {})[r["id"]] = r.get("text") or ""
    results = {name: score(gold, pred) for name, pred in systems.items()}
    counts = Counter(g.get("page_type") or "?" for g in gold.values())
    cols = ["all", *[t for t in TYPES if t in counts], "with kept", "without dropped"]
    print("| system | " + " | ".join(f"{c} ({counts[c]})" if c in counts else
                                      (f"all ({len(gold)})" if c == "all" else c) for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, res in sorted(results.items(), key=lambda kv: -kv[1]["all"]):
        print(f"| {name} | " + " | ".join(f"{res.get(c, 0.0):.3f}" for c in cols) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
