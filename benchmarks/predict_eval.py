"""Predictions on the evaluation pages for one configuration, to score with
benchmarks/score_annotated.py (docs/measurements.md, "Choosing the defaults").

    python benchmarks/predict_eval.py OUT.jsonl.gz --data DEV.jsonl.gz [--min-support N]
        [--window N] [--deboiler-candidates] [--no-templates]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from scrapy_deboiler import FitParams, SignatureScheme, fit_and_clean  # noqa: E402
from scrapy_deboiler._signatures import DEBOILER_CANDIDATES  # noqa: E402

from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--min-support", type=int, default=FitParams.min_support)
    ap.add_argument("--window", type=int, default=FitParams.window)
    ap.add_argument("--deboiler-candidates", action="store_true")
    ap.add_argument("--no-templates", action="store_true")
    args = ap.parse_args()
    scheme = SignatureScheme()
    if args.deboiler_candidates:
        scheme = SignatureScheme(DEBOILER_CANDIDATES, scheme.template_min_elements)
    if args.no_templates:
        scheme = SignatureScheme(scheme.candidates, 0)
    params = FitParams(min_support=args.min_support, window=args.window, scheme=scheme)
    sites = defaultdict(list)
    with gzip.open(args.data, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            sites[r["domain"]].append((r["id"], r["url"], r["html"]))
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        for records in sites.values():
            _, results = fit_and_clean([(u, h) for _, u, h in records], params)
            for (rid, _, _), res in zip(records, results):
                out.write(json.dumps({"id": rid, "clean_text": res.text}) + "\n")


if __name__ == "__main__":
    main()
