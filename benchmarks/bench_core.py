"""Core speed: fit+clean pages/s against lxml parse-only pages/s, same pages,
same run (and, when installed, the original deboiler and trafilatura).

    python benchmarks/bench_core.py --data DEV.jsonl.gz
        [--min-site-pages 5] [--rounds 3] [--json out.json]

Each round times every system once over all pages, in turn, and the best
round counts, so a busy moment on the machine hurts every system alike.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import time
from collections import defaultdict

from lxml import etree

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from scrapy_deboiler import fit_and_clean  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
#: Annotated pages, JSON Lines (``id``, ``url``, ``html``, ``domain``,
#: ``gold_text``: see README, "Quality"); the scripts take ``--data`` or this
#: variable. The data is not part of the repository.
DEFAULT_DATA = os.environ.get("DEBOILER_EVAL_DATA")
DATA_HELP = "annotated pages, JSON Lines (gzip if .gz); default: $DEBOILER_EVAL_DATA"


def load_sites(path: str, min_pages: int) -> dict[str, list[tuple[str, str]]]:
    sites: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            sites[r["domain"]].append((r["url"], r["html"]))
    return {d: p for d, p in sorted(sites.items()) if len(p) >= min_pages}


def run_parse(sites) -> None:
    for pages in sites.values():
        for _, html in pages:
            etree.fromstring(html.encode("utf-8"), etree.HTMLParser(encoding="utf-8"))


def run_ours(sites) -> None:
    for pages in sites.values():
        fit_and_clean(pages)


def run_content(sites) -> None:
    for pages in sites.values():
        fit_and_clean(pages, mode="content")


def trafilatura_runner():
    try:
        import trafilatura
    except ImportError:
        return None

    def run(sites) -> None:
        for pages in sites.values():
            for _, html in pages:
                trafilatura.extract(html, include_comments=False)

    return run


def deboiler_runner():
    try:
        import logging

        from deboiler import Deboiler
        from deboiler.dataset import ListDataset
    except Exception:
        return None
    logging.getLogger().setLevel(logging.WARNING)

    def run(sites) -> None:
        # deboiler prints progress bars and aborts a site on some pages.
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            for domain, pages in sites.items():
                records = [{"url": u, "content": h, "status": 200, "content_type": "text/html"}
                           for u, h in pages]
                try:
                    data = ListDataset(records, verbose=False)
                    d = Deboiler(n_processes=1, operation_mode="memory", domain=domain)
                    d.fit(data)
                    for _ in d.transform(data):
                        pass
                except Exception:
                    failed.add(domain)

    failed: set[str] = set()
    run.failed = failed
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--min-site-pages", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    sites = load_sites(args.data, args.min_site_pages)
    n = sum(map(len, sites.values()))
    systems = {"lxml parse only": run_parse, "scrapy-deboiler fit+clean": run_ours,
               "scrapy-deboiler content mode": run_content}
    traf = trafilatura_runner()
    if traf is not None:
        systems["trafilatura, no comments"] = traf
    deb = deboiler_runner()
    if deb is not None:
        systems["deboiler 2023.46.150 fit+transform"] = deb
    best = {name: float("inf") for name in systems}
    for _ in range(args.rounds):
        for name, fn in systems.items():
            start = time.process_time()
            fn(sites)
            best[name] = min(best[name], time.process_time() - start)
    rate = {name: n / t for name, t in best.items()}
    ours = rate["scrapy-deboiler fit+clean"]
    print(f"{n} pages of {len(sites)} sites, best of {args.rounds} rounds, one process, CPU time")
    content = rate["scrapy-deboiler content mode"]
    print(f"{'system':<38} {'pages/s':>9} {'fit+clean / it':>15} {'content / it':>13}")
    for name, r in rate.items():
        print(f"{name:<38} {r:>9.1f} {ours / r:>15.2f} {content / r:>13.2f}")
    if deb is not None and deb.failed:
        print(f"deboiler raised on {len(deb.failed)} sites (their time still counts)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pages": n, "sites": len(sites), "pages_per_s": rate}, f, indent=2)


if __name__ == "__main__":
    main()
