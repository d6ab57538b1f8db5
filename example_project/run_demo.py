"""The demo, end to end: serve the demo website on 127.0.0.1, crawl it with
``scrapy crawl`` and the scrapy-deboiler pipeline on, and summarise.

    python example_project/run_demo.py [--port 8701] [--out output/items.jsonl]

Signature files land in example_project/.scrapy/deboiler; a second run finds
them and cleans every page at once, without holding any.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from website import serve  # noqa: E402


def summarise(path: str) -> None:
    sites: dict[str, list[dict]] = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            sites[item["deboiler"].get("site", "?")].append(item)
    print(f"\n{sum(map(len, sites.values()))} items in {path}")
    for site, items in sorted(sites.items()):
        raw = sum(i["deboiler"].get("html_chars", 0) for i in items)
        clean = sum(i["deboiler"].get("clean_html_chars", 0) for i in items)
        models = {i["deboiler"].get("model") for i in items}
        print(f"\n== {site}: {len(items)} pages, model {'/'.join(map(str, sorted(models, key=str)))}, "
              f"{100 * (1 - clean / max(1, raw)):.0f}% of the HTML removed")
        sample = max(items, key=lambda i: len(i.get("clean_text", "")))
        print(f"   {sample['url']}")
        for line in sample.get("clean_text", "").splitlines()[:6]:
            print(f"   | {line[:100]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8701, help="first of three ports (default 8701)")
    ap.add_argument("--out", default=os.path.join(HERE, "output", "items.jsonl"))
    args = ap.parse_args()
    try:
        servers = serve(args.port)
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{args.port}-{args.port + 2}: {e}; try --port", file=sys.stderr)
        return 2
    urls = ",".join(u for u, _ in servers)
    print(f"demo website on {urls}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    report = os.path.join(os.path.dirname(os.path.abspath(args.out)), "report.html")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_urls={urls}",
           "-O", os.path.abspath(args.out), "-s", f"DEBOILER_REPORT={report}"]
    print("$ cd", shlex.quote(HERE), "&&", shlex.join(cmd))  # as it can be run again by hand
    code = subprocess.call(cmd, cwd=HERE)
    for _, server in servers:
        server.shutdown()
    if code:
        return code
    summarise(args.out)
    print(f"\nsignature files: {os.path.join(HERE, '.scrapy', 'deboiler')}")
    print(f"crawl report (open in a browser): {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
