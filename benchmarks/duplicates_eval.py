"""Do copies of a page under several URLs hurt the site model? (issue 30)

Writes two inputs from annotated pages (JSON Lines with ``id``, ``url``,
``html`` and a site field): the pages of sites with ``--min-site-pages`` or
more as they are, and the same pages each added again under a second URL
(``?sid=...``) with a visible per-request line, as sites that print a
session id serve them. Runs ``scrapy-deboiler clean`` on both, as users run
it, and writes prediction files of the original pages (``id``,
``clean_text``) to score with any scorer, e.g. the WCXB/Scrapinghub-style
``score.py`` of an evaluation kit:

    python benchmarks/duplicates_eval.py DEV.jsonl.gz OUT --mode content
    python score.py DEV.jsonl.gz plain=OUT/plain-content.jsonl.gz \\
        dup=OUT/dup-content.jsonl.gz --min-domain-pages 5 --metric rougelsum,shingle
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter

_BODY = re.compile(r"<body\b[^>]*>", re.I)


def with_line(html: str, sid: str) -> str:
    """``html`` with a visible session line at the top of its body."""
    line = f'<p class="session">Session ID: {sid}</p>'
    m = _BODY.search(html)
    return html[:m.end()] + line + html[m.end():] if m else line + html


def write(path: str, records: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def run(src: str, dst: str, mode: str, site_field: str, jobs: int) -> None:
    subprocess.run([sys.executable, "-m", "scrapy_deboiler", "clean", src, dst, "--mode", mode,
                    "--domain-field", site_field, "--jobs", str(jobs), "--no-progress"], check=True)


def predictions(path: str, out: str, ids: set[str]) -> int:
    n = 0
    with gzip.open(path, "rt", encoding="utf-8") as f, gzip.open(out, "wt", encoding="utf-8") as o:
        for line in f:
            r = json.loads(line)
            if r["id"] in ids:
                o.write(json.dumps({"id": r["id"], "clean_text": r["clean_text"], "status": r["deboiler"]}) + "\n")
                n += 1
    return n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="annotated pages, JSON Lines (gzip)")
    p.add_argument("out", help="a folder for the inputs, outputs and predictions")
    p.add_argument("--mode", default="content", choices=("content", "boilerplate"))
    p.add_argument("--site-field", default="domain")
    p.add_argument("--min-site-pages", type=int, default=5)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with gzip.open(a.data, "rt", encoding="utf-8") as f:
        pages = [json.loads(line) for line in f]
    sizes = Counter(r[a.site_field] for r in pages)
    pages = [r for r in pages if sizes[r[a.site_field]] >= a.min_site_pages]
    keep = ("id", "url", "html", a.site_field)
    plain = [{k: r[k] for k in keep} for r in pages]
    dup = []
    for i, r in enumerate(plain):
        dup.append(r)
        sep = "&" if "?" in r["url"] else "?"
        dup.append({**r, "id": r["id"] + "#copy", "url": f"{r['url']}{sep}sid={i:06d}",
                    "html": with_line(r["html"], f"{i:06d}")})
    ids = {r["id"] for r in plain}
    for name, records in (("plain", plain), ("dup", dup)):
        src = os.path.join(a.out, f"{name}-in.jsonl.gz")
        dst = os.path.join(a.out, f"{name}-{a.mode}-out.jsonl.gz")
        write(src, records)
        run(src, dst, a.mode, a.site_field, a.jobs)
        n = predictions(dst, os.path.join(a.out, f"{name}-{a.mode}.jsonl.gz"), ids)
        print(f"{name}: {len(records)} records in, {n} predictions of the original pages", file=sys.stderr)


if __name__ == "__main__":
    main()
