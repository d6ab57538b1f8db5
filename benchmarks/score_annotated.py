"""Score scrapy-deboiler (and other extractors) on annotated pages, with the
metrics of two public benchmarks.

    pip install -e ".[eval]"          # rouge-score, nltk, numba; trafilatura, readability-lxml, html-text
    python benchmarks/score_annotated.py PAGES.jsonl.gz [NAME=PRED.jsonl.gz ...]
        [--systems content,boilerplate,trafilatura,readability] [--min-site-pages 5] [--max-site-pages 5]
        [--datasets a,b] [--jobs 2] [--json OUT.json] [--check 50]

PAGES is JSON Lines (gzip if .gz), one annotated page a line: ``id``, ``url``,
``html``, ``gold_text``, and optionally ``domain`` (the site; else the URL's
host) and ``dataset`` (scores are also given per dataset). The public sets the
README's figures come from (dragnet, L3S-GN1, CleanEval, Scrapinghub's
article-extraction benchmark) convert to this with a few lines each; they
are not part of this repository.

Systems: ``content`` and ``boilerplate`` run scrapy-deboiler as the CLI does
(each site fitted on its pages in PAGES, ``--domain-field``); ``trafilatura``
(no comments) and ``readability`` (readability-lxml's summary as text with
html-text) run those extractors when installed. NAME=PRED adds a prediction
file (``id`` and ``clean_text`` or ``text``), for example content mode's
cross-validated output from ``benchmarks/train_content.py --cv-out``: the
shipped content model was trained on the README's pages, so on those pages
only cross-validated predictions are a fair score.

Metrics, mean over pages (written here from the benchmarks' definitions):
- **ROUGE-LSum** as the Web Content Extraction Benchmark (Bevendorff et al.,
  SIGIR 2023) computes it: rouge-score's summary-level LCS on whitespace
  tokens within sentences (Punkt), computed here (with numba when installed)
  and checked against rouge-score itself with ``--check N``. With NLTK's English Punkt data installed
  (``python -m nltk.downloader punkt_tab``) sentences split as theirs; without
  it an untrained Punkt splits them, which moves F1 by about 0.001.
- **shingle** as Scrapinghub's article-extraction benchmark computes it:
  bags of 4-word shingles of ``\\w+`` tokens; corpus P and R are the means of
  page P (pages with a non-empty prediction) and page R (pages with a
  non-empty gold), F1 from those two means.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from multiprocessing import Pool

from scrapy_deboiler._batch import BatchOptions, clean_file
from scrapy_deboiler._urls import site_of_url

_WORD = re.compile(r"\w+")
_SPLITTER = None


def read_jsonl(path: str):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


# -- metrics ----------------------------------------------------------------

def _sentences(text: str) -> list[str]:
    global _SPLITTER
    if _SPLITTER is None:
        import nltk

        try:
            nltk.data.find("tokenizers/punkt_tab/english/")
            _SPLITTER = nltk.sent_tokenize
        except LookupError:
            from nltk.tokenize.punkt import PunktSentenceTokenizer

            _SPLITTER = PunktSentenceTokenizer().tokenize
    return [s for s in (x.strip() for x in _SPLITTER(text)) if s]


def _lcs_union_py(ref, cands, starts, ends, out):
    """Mark in ``out`` the positions of ``ref`` on one LCS with each candidate
    sentence (``cands[starts[k]:ends[k]]``), backtracked as rouge-score does
    (diagonal on equal tokens, else left if the left cell is larger, else up)."""
    m = len(ref)
    for k in range(len(starts)):
        a, b = starts[k], ends[k]
        n = b - a
        t = [[0] * (n + 1) for _ in range(m + 1)]
        for i in range(1, m + 1):
            ri, row, up = ref[i - 1], t[i], t[i - 1]
            for j in range(1, n + 1):
                if ri == cands[a + j - 1]:
                    row[j] = up[j - 1] + 1
                else:
                    row[j] = up[j] if up[j] >= row[j - 1] else row[j - 1]
        i, j = m, n
        while i > 0 and j > 0:
            if ref[i - 1] == cands[a + j - 1]:
                out[i - 1] = 1
                i -= 1
                j -= 1
            elif t[i][j - 1] > t[i - 1][j]:
                j -= 1
            else:
                i -= 1


try:  # numba makes the summary-level LCS about 100x faster; optional
    import numba
    import numpy as np

    @numba.njit(cache=True)
    def _lcs_union_nb(ref, cands, starts, ends, out):
        m = ref.shape[0]
        for k in range(starts.shape[0]):
            a, b = starts[k], ends[k]
            n = b - a
            t = np.zeros((m + 1, n + 1), dtype=np.int32)
            for i in range(1, m + 1):
                for j in range(1, n + 1):
                    if ref[i - 1] == cands[a + j - 1]:
                        t[i, j] = t[i - 1, j - 1] + 1
                    elif t[i - 1, j] >= t[i, j - 1]:
                        t[i, j] = t[i - 1, j]
                    else:
                        t[i, j] = t[i, j - 1]
            i, j = m, n
            while i > 0 and j > 0:
                if ref[i - 1] == cands[a + j - 1]:
                    out[i - 1] = 1
                    i -= 1
                    j -= 1
                elif t[i, j - 1] > t[i - 1, j]:
                    j -= 1
                else:
                    i -= 1

    def _lcs_union(ref, cands, starts, ends, out):
        arr = np.zeros(len(ref), dtype=np.int8)
        _lcs_union_nb(np.asarray(ref, dtype=np.int64), cands, np.asarray(starts, dtype=np.int64),
                      np.asarray(ends, dtype=np.int64), arr)
        for i in np.flatnonzero(arr):
            out[i] = 1

    def _as_cands(ids):
        return np.asarray(ids, dtype=np.int64)
except ImportError:
    _lcs_union = _lcs_union_py

    def _as_cands(ids):
        return ids


def rouge_lsum(gold: str, pred: str) -> tuple[float, float, float]:
    """(P, R, F1): rouge-score's summary-level LCS ROUGE-LSum (ROUGE 1.5.5's
    double-count prevention) on whitespace tokens of Punkt sentences,
    computed here because rouge-score's pure-Python tables take minutes on
    long pages. Candidate sentences that share no token with a gold
    sentence have an empty LCS with it and are skipped. Empty gold: R = 1
    and P = F1 = 1 only if the prediction is empty too (the benchmark's
    convention). ``--check N`` compares with rouge-score itself."""
    if not gold.strip():
        return (1.0, 1.0, 1.0) if not pred.strip() else (0.0, 1.0, 0.0)
    if not pred.strip():
        return 0.0, 0.0, 0.0
    refs = [s.split() for s in _sentences(gold)]
    cands = [s.split() for s in _sentences(pred)]
    m, n = sum(map(len, refs)), sum(map(len, cands))
    if not m or not n:
        return 0.0, 0.0, 0.0
    ids: dict[str, int] = {}
    flat, starts, ends, has = [], [], [], defaultdict(set)
    for k, c in enumerate(cands):
        starts.append(len(flat))
        for tok in c:
            flat.append(ids.setdefault(tok, len(ids)))
            has[flat[-1]].add(k)
        ends.append(len(flat))
    flat_c = _as_cands(flat)
    left_r = Counter(tok for r in refs for tok in r)
    left_c = Counter(tok for c in cands for tok in c)
    hits = 0
    for r in refs:
        rid = [ids.get(tok, -1) for tok in r]
        ks = sorted(set().union(*(has[i] for i in rid if i >= 0)))
        if not ks:
            continue
        marked = [0] * len(r)
        _lcs_union(rid, flat_c, [starts[k] for k in ks], [ends[k] for k in ks], marked)
        for pos, tok in enumerate(r):
            if marked[pos] and left_c[tok] > 0 and left_r[tok] > 0:
                hits += 1
                left_c[tok] -= 1
                left_r[tok] -= 1
    p, rc = hits / n, hits / m
    return p, rc, (2 * p * rc / (p + rc) if p + rc else 0.0)


def rouge_lsum_reference(gold: str, pred: str) -> tuple[float, float, float]:
    """rouge-score itself on the same sentences, for ``--check``."""
    from rouge_score import rouge_scorer

    class Whitespace:
        @staticmethod
        def tokenize(text: str) -> list[str]:
            return text.split()

    if not gold.strip() or not pred.strip():
        return rouge_lsum(gold, pred)
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=False, tokenizer=Whitespace())
    lines = lambda text: "\n".join(" ".join(x.split()) for x in _sentences(text))  # noqa: E731
    s = scorer.score(lines(gold), lines(pred))["rougeLsum"]
    return s.precision, s.recall, s.fmeasure


def _check(args: tuple[str, str]) -> float:
    gold, pred = args
    return max(abs(a - b) for a, b in zip(rouge_lsum(gold, pred), rouge_lsum_reference(gold, pred)))


def shingle_counts(gold: str, pred: str, n: int = 4) -> tuple[float | None, float | None]:
    """Page (P, R) on bags of n-word shingles; None where the page does not
    count (P: empty prediction; R: empty gold)."""
    def bag(text: str) -> Counter:
        toks = _WORD.findall(text)
        return Counter(tuple(toks[i:i + n]) for i in range(max(1, len(toks) - n + 1)) if toks[i:i + n])

    g, p = bag(gold), bag(pred)
    tp = sum((g & p).values())
    fp = sum((p - g).values())
    fn = sum((g - p).values())
    exact = fp == fn == 0
    prec = None if not p else (1.0 if exact else tp / (tp + fp))
    rec = None if not g else (1.0 if exact else tp / (tp + fn))
    return prec, rec


def score_page(args: tuple[str, str]) -> dict:
    gold, pred = args
    p, r, f = rouge_lsum(gold, pred)
    sp, sr = shingle_counts(gold, pred)
    return {"rl_p": p, "rl_r": r, "rl_f1": f, "sh_p": sp, "sh_r": sr}


def summarise(scores: list[dict]) -> dict:
    def mean(key: str) -> float:
        vals = [s[key] for s in scores if s[key] is not None]
        return sum(vals) / len(vals) if vals else 0.0

    sp, sr = mean("sh_p"), mean("sh_r")
    return {"pages": len(scores), "rougelsum_p": mean("rl_p"), "rougelsum_r": mean("rl_r"),
            "rougelsum_f1": mean("rl_f1"), "shingle_f1": 2 * sp * sr / (sp + sr) if sp + sr else 0.0}


# -- systems ----------------------------------------------------------------

def run_deboiler(pages: list[dict], mode: str, jobs: int) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for p in pages:
                f.write(json.dumps({"id": p["id"], "url": p["url"], "html": p["html"],
                                    "site": p["site"]}) + "\n")
        clean_file(src, dst, BatchOptions(domain_field="site", mode=mode, jobs=jobs))
        return {r["id"]: r.get("clean_text") or "" for r in read_jsonl(dst)}


def _trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, include_comments=False) or ""


def _readability(html: str) -> str:
    import html_text
    from readability import Document

    try:
        return html_text.extract_text(Document(html).summary(html_partial=True))
    except Exception:  # readability raises on pages it cannot read
        return ""


PEERS = {"trafilatura": _trafilatura, "readability": _readability}


def run_peer(name: str, pages: list[dict], jobs: int) -> dict[str, str]:
    with Pool(jobs) as pool:
        texts = pool.map(PEERS[name], [p["html"] for p in pages], chunksize=8)
    return {p["id"]: t for p, t in zip(pages, texts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", help="annotated pages: JSON Lines with id, url, html, gold_text")
    ap.add_argument("predictions", nargs="*", help="NAME=PATH: JSON Lines with id and clean_text (or text)")
    ap.add_argument("--systems", default="content,boilerplate",
                    help="run these: content, boilerplate, trafilatura, readability (default: %(default)s)")
    ap.add_argument("--min-site-pages", type=int, default=1, help="score only sites with this many pages")
    ap.add_argument("--max-site-pages", type=int, help="and at most this many (with --min-site-pages: one site size)")
    ap.add_argument("--datasets", help="score only these datasets (comma-separated)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--check", type=int, metavar="N",
                    help="first compare this script's ROUGE-LSum with rouge-score's on N pages")
    args = ap.parse_args()

    pages = []
    for r in read_jsonl(args.pages):
        r["site"] = r.get("domain") or site_of_url(r.get("url") or "")
        pages.append(r)
    # A site's size counts its pages within one dataset (datasets annotate
    # different pages of some sites, with different rules).
    per_site = Counter((p.get("dataset"), p["site"]) for p in pages)
    wanted = set(args.datasets.split(",")) if args.datasets else None
    most = args.max_site_pages or len(pages)
    scored = [p for p in pages if args.min_site_pages <= per_site[p.get("dataset"), p["site"]] <= most
              and (wanted is None or p.get("dataset") in wanted)]

    systems: dict[str, dict[str, str]] = {}
    for name in filter(None, args.systems.split(",")):
        if name in ("content", "boilerplate"):
            # Sites are fitted on all their pages in the file, as the CLI would.
            systems[name] = run_deboiler(pages, name, args.jobs)
        elif name in PEERS:
            systems[name] = run_peer(name, scored, args.jobs)
        else:
            ap.error(f"unknown system {name!r}")
    for spec in args.predictions:
        name, _, path = spec.rpartition("=")
        systems[name or os.path.basename(path)] = {
            str(r["id"]): r.get("clean_text", r.get("text")) or "" for r in read_jsonl(path)}

    summary: dict[str, dict] = {}
    with Pool(args.jobs) as pool:
        if args.check:
            for name, texts in systems.items():
                sample = [(p["gold_text"] or "", texts.get(str(p["id"]), "")) for p in scored[:args.check]]
                worst = max(pool.map(_check, sample, chunksize=1), default=0.0)
                print(f"check: {name}: ROUGE-LSum P/R/F1 equal to rouge-score's on {len(sample)} pages "
                      f"within {worst:.1e}")
                assert worst < 1e-9, "ROUGE-LSum differs from rouge-score's"
        for name, texts in systems.items():
            scores = pool.map(score_page, [(p["gold_text"] or "", texts.get(str(p["id"]), ""))
                                           for p in scored], chunksize=8)
            groups: dict[str, list[dict]] = defaultdict(list)
            for p, s in zip(scored, scores):
                groups[p.get("dataset") or "-"].append(s)
            summary[name] = {"all": summarise(scores), **{d: summarise(v) for d, v in sorted(groups.items())}}

    datasets = sorted({d for s in summary.values() for d in s if d != "all"})
    sites = len({(p.get("dataset"), p["site"]) for p in scored})
    print(f"{len(scored)} pages of {sites} sites; ROUGE-LSum F1 per dataset, then all pages")
    head = f"{'system':<14}" + "".join(f"{d[:12]:>13}" for d in datasets)
    print(head + f"{'RL P':>8}{'RL R':>8}{'RL F1':>8}{'shingle F1':>12}")
    for name, s in summary.items():
        a = s["all"]
        print(f"{name:<14}" + "".join(f"{s[d]['rougelsum_f1']:>13.3f}" for d in datasets)
              + f"{a['rougelsum_p']:>8.3f}{a['rougelsum_r']:>8.3f}{a['rougelsum_f1']:>8.3f}{a['shingle_f1']:>12.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
