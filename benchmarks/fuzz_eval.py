"""Fuzz fitting and cleaning with mutated real pages (annotated pages, --data).

    python benchmarks/fuzz_eval.py --data DEV.jsonl.gz [--rounds 3] [--seed 0]

Each round mutates every page of the evaluation file a few times (cut,
repeat, insert random bytes or markup, overwrite, truncate; the same edits
as tests/test_fuzz.py), fits each site's model on its mutated pages and
cleans them in both modes. Reports cases, exceptions (with the first
traceback) and the slowest page. Nothing of the pages is written anywhere.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
import traceback
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from scrapy_deboiler import Page, SiteModel, clean_page  # noqa: E402

from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402

SNIPPETS = [b"<", b">", b"</div>", b"<div>" * 50, b"<table><tr><td>", b"\x00", b"\xff\xfe",
            b"<!--", b"<![CDATA[", b"&#xD800;", b"&#0;", b"<script>", b"\x0c", b"\xef\xbf\xbe",
            b"<meta charset='utf-16'>", b"<base href='javascript:x'>", b"<a href='", b"'\"<>"]


def mutate(rng: random.Random, page: bytes) -> bytes:
    data = bytearray(page)
    for _ in range(rng.randint(1, 6)):
        i = rng.randint(0, len(data))
        j = min(len(data), i + rng.randint(0, 400))
        op = rng.choice(["cut", "repeat", "insert", "overwrite", "truncate"])
        if op == "cut":
            del data[i:j]
        elif op == "repeat":
            data[i:i] = data[i:j] * rng.randint(1, 20)
        elif op == "insert":
            data[i:i] = rng.choice(SNIPPETS) if rng.random() < 0.7 else rng.randbytes(rng.randint(1, 30))
        elif op == "overwrite":
            data[i:j] = rng.randbytes(j - i)
        elif rng.random() < 0.3:  # truncation is rarer: it hides the rest
            del data[i:]
    return bytes(data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sites: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    with gzip.open(args.data, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            sites[r["domain"]].append((r["url"], r["html"].encode("utf-8")))
    rng = random.Random(args.seed)
    cases = errors = 0
    slowest = (0.0, "")
    first_error = None
    for rnd in range(args.rounds):
        for _site, pages in sorted(sites.items()):
            mutated = [(url, mutate(rng, html)) for url, html in pages]
            try:
                model = SiteModel.fit([Page(h, u) for u, h in mutated]) if len(mutated) > 1 else None
            except Exception:
                errors += 1
                first_error = first_error or traceback.format_exc()
                model = None
            for url, html in mutated:
                for mode in ("boilerplate", "content"):
                    cases += 1
                    t = time.perf_counter()
                    try:
                        clean_page(Page(html, url), model, mode=mode)
                    except Exception:
                        errors += 1
                        first_error = first_error or traceback.format_exc()
                    slowest = max(slowest, (time.perf_counter() - t, f"{url} ({mode})"))
        print(f"round {rnd + 1}: {cases} cases, {errors} errors", flush=True)
    print(f"mutated real pages: {cases} clean cases over {args.rounds} rounds of {len(sites)} sites, "
          f"{errors} errors; slowest page {slowest[0]:.2f}s ({slowest[1]})")
    if first_error:
        print(first_error)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
