"""How many pages a site model needs (DEBOILER_MIN_PAGES): fit on the first
k pages of each site (in a fixed pseudo-random order, as a crawl would meet
them), clean all of the site's pages, write one prediction file per k.

    python benchmarks/min_pages_eval.py OUTDIR --data DEV.jsonl.gz [--k 2,3,5,8,10] [--min-site-pages 10]
    python benchmarks/score_annotated.py DEV.jsonl.gz k2=OUTDIR/k2.jsonl.gz ... --min-site-pages 10
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections import defaultdict
from hashlib import blake2b

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from scrapy_deboiler import Page, SiteModel, clean_page  # noqa: E402

from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--k", default="2,3,5,8,10")
    ap.add_argument("--min-site-pages", type=int, default=10)
    args = ap.parse_args()
    ks = [int(k) for k in args.k.split(",")]
    sites = defaultdict(list)
    with gzip.open(args.data, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            sites[r["domain"]].append((r["id"], r["url"], r["html"]))
    os.makedirs(args.outdir, exist_ok=True)
    outs = {k: gzip.open(os.path.join(args.outdir, f"k{k}.jsonl.gz"), "wt", encoding="utf-8") for k in ks}
    for records in sites.values():
        if len(records) < args.min_site_pages:
            continue
        records.sort(key=lambda r: blake2b(r[0].encode(), digest_size=8).digest())
        sigs = [(url, Page(html, url).signatures) for _, url, html in records]
        for k in ks:
            model = SiteModel.fit(sigs[:k])
            for rid, url, html in records:
                text = clean_page(Page(html, url), model, want_html=False).text
                outs[k].write(json.dumps({"id": rid, "clean_text": text}) + "\n")
    for f in outs.values():
        f.close()


if __name__ == "__main__":
    main()
