"""Markdown: ours against markdownify and html2text, on speed and fidelity.

    pip install -e ".[eval]" markdownify html2text markdown-it-py
    python benchmarks/markdown_eval.py --data PAGES.jsonl.gz [--pages 500] [--mode content]

Every converter gets the same cleaned page (content mode's kept blocks in
their page structure, ``_markdown.content_tree``; or boilerplate mode's
cleaned page). Its Markdown is read back by a CommonMark parser
(markdown-it-py, with GitHub's tables and strikethrough) and the structure
of what comes back is compared with the structure of the cleaned page:

- text: bag of ``\\w+`` tokens of all visible text (F1);
- headings (level and text), list items, cells of data tables (a table
  whose cells hold paragraphs, headings or lists lays out the page), links
  (target and text), emphasis, inline and block code, images' alt text: each a
  multiset, precision and recall pooled over pages;
- pages whose every structure matched exactly.

Speed: milliseconds a page, CPU time; markdownify and html2text parse the
HTML text themselves, ours walks the tree (its time with a parse of the same
HTML is given too).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from collections import Counter

from lxml import etree
from lxml import html as lxml_html

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from scrapy_deboiler import Page  # noqa: E402
from scrapy_deboiler._clean import _drop, boilerplate_of  # noqa: E402
from scrapy_deboiler._content import _is_hidden, select_content  # noqa: E402
from scrapy_deboiler._markdown import _layout, content_tree, tree_markdown  # noqa: E402
from scrapy_deboiler._model import SiteModel  # noqa: E402
from scrapy_deboiler._text import SKIP_TAGS, tree_text  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from bench_core import DATA_HELP, DEFAULT_DATA  # noqa: E402

_WORD = re.compile(r"\w+")
KINDS = ("heading", "item", "cell", "link", "emphasis", "code", "pre", "image")


def norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def shown(el: etree._Element) -> str:
    """An element's text as shown: blocks apart, inline parts joined."""
    return tree_text(el)


def structure(root: etree._Element) -> dict[str, Counter]:
    """What a reader sees of a page's structure, as multisets."""
    out = {k: Counter() for k in KINDS}
    for el in root.iter():
        if not isinstance(el.tag, str) or any(a.tag in SKIP_TAGS for a in (el, *el.iterancestors())):
            continue
        tag = el.tag
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            out["heading"][(tag, norm(shown(el)))] += 1
        elif tag == "li":
            own = (el.text or "") + " " + " ".join(
                (shown(c) if c.tag not in ("ul", "ol") else "") + " " + (c.tail or "") for c in el)
            out["item"][norm(own)] += 1
        elif tag in ("td", "th"):  # of data tables: layout tables are not tables to a reader
            table = next(el.iterancestors("table"), None)
            if table is not None and not _layout(table):
                out["cell"][norm(shown(el))] += 1
        elif tag == "a" and el.get("href") and norm(shown(el)):
            out["link"][(el.get("href").strip(), norm(shown(el)))] += 1
        elif tag in ("em", "i", "strong", "b") and norm(shown(el)):
            out["emphasis"][norm(shown(el))] += 1
        elif tag == "code" and el.getparent() is not None and el.getparent().tag != "pre":
            out["code"][norm(shown(el))] += 1
        elif tag == "pre":
            out["pre"][norm(shown(el))] += 1
        elif tag == "img" and (el.get("alt") or "").strip():
            out["image"][norm(el.get("alt"))] += 1
    out["text"] = Counter(_WORD.findall(tree_text(root).lower()))  # what a browser shows
    return out


def cleaned(record: dict, model: SiteModel | None, mode: str) -> etree._Element:
    page = Page(record["html"], record["url"])
    dropped, near = boilerplate_of(page, model, content=mode == "content")
    if mode == "content":
        kept: list = []
        select_content(page.root, skip=set(dropped), near=near, kept_out=kept)
        return content_tree(page.root, set(kept), set(dropped), _is_hidden)
    for el in dropped:
        _drop(el)
    return page.root


def converters():
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    out = {"scrapy-deboiler": lambda tree, html: tree_markdown(tree),
           "scrapy-deboiler + parse": lambda tree, html: tree_markdown(lxml_html.fromstring(html))}
    try:
        from markdownify import markdownify

        out["markdownify"] = lambda tree, html: markdownify(html, heading_style="ATX")
    except ImportError:
        pass
    try:
        import html2text

        def h2t(tree, html):
            h = html2text.HTML2Text()
            h.body_width = 0
            return h.handle(html)

        out["html2text"] = h2t
    except ImportError:
        pass
    return out, parser


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA, required=DEFAULT_DATA is None, help=DATA_HELP)
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--mode", choices=("content", "boilerplate"), default="content")
    ap.add_argument("--json")
    args = ap.parse_args()
    records = []
    with gzip.open(args.data, "rt", encoding="utf-8") as f:
        for line in f:
            records.append(json.loads(line))
            if len(records) >= args.pages:
                break
    trees = [cleaned(r, None, args.mode) for r in records]
    htmls = [etree.tostring(t, method="html", encoding="unicode") for t in trees]
    sources = [structure(lxml_html.fromstring(h)) for h in htmls]
    convs, parser = converters()
    report = {}
    for name, fn in convs.items():
        fresh = [lxml_html.fromstring(h) for h in htmls]  # converters may not mutate the shared trees
        start = time.process_time()
        mds = [fn(t, h) for t, h in zip(fresh, htmls)]
        ms = (time.process_time() - start) / len(mds) * 1000
        hit = {k: Counter() for k in ("text", *KINDS)}
        exact = 0
        for src, md in zip(sources, mds):
            back = parser.render(md)
            got = structure(lxml_html.fromstring(f"<html><body>{back}</body></html>"))
            same = True
            for kind in ("text", *KINDS):
                a, b = src[kind], got[kind]
                hit[kind]["tp"] += sum((a & b).values())
                hit[kind]["src"] += sum(a.values())
                hit[kind]["got"] += sum(b.values())
                same = same and (kind == "text" or a == b)
            exact += same
        row = {"ms_per_page": ms, "pages_exact": exact / len(mds)}
        for kind, c in hit.items():
            p = c["tp"] / c["got"] if c["got"] else 1.0
            r = c["tp"] / c["src"] if c["src"] else 1.0
            row[kind] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
                         "in_source": c["src"]}
        report[name] = row
    print(f"{len(records)} pages, {args.mode} mode; structure read back by markdown-it-py (F1)")
    kinds = ("text", *KINDS)
    print(f"{'converter':<26}{'ms/page':>8}{'exact':>7}" + "".join(f"{k:>10}" for k in kinds))
    for name, row in report.items():
        print(f"{name:<26}{row['ms_per_page']:>8.2f}{row['pages_exact']:>7.2f}"
              + "".join(f"{row[k]['f1']:>10.3f}" for k in kinds))
    print("in the source:", ", ".join(f"{k} {report['scrapy-deboiler'][k]['in_source']}" for k in kinds))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
