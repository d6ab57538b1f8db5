"""Measure ``page_metadata`` (issue 33): author and date against WCXB's
gold, language against pages' declared ``lang``, and speed.

    python benchmarks/metadata_eval.py WCXB.jsonl.gz [--out PRED.jsonl.gz]
        [--dev DEV.jsonl.gz] [--no-site] [--no-template] [--htmldate] [--speed N]
        [--extruct N] [--dump FILE.jsonl] [--misses]

WCXB (Murrough-Foley/web-content-extraction-benchmark, CC-BY-4.0) is one
page a line: ``id``, ``url``, ``domain``, ``html``, ``page_type``,
``gold_author``, ``gold_date`` ... Pages are grouped into sites by
``domain``; a site of two or more pages gets a site model fitted on its
pages (its template is left out of the candidates, ``--no-template`` keeps
it) and per-site hints (``learn_hints``; ``--no-site``: every page alone).
``--htmldate``: htmldate where our rules find no date on an article-like
page (``page_metadata(htmldate=True)``). ``--out`` writes ``{"id", "page_metadata"}`` a line (gzip) for the shared
scorer (``meta_score.py GOLD ours=PRED``).

Scores as that scorer does (author: case and space folded, either
contains the other; date: the same first 10 characters; a missing value is
wrong; "false": a value where the gold has none), on all pages and on two
halves of the sites split by a stable hash of the domain (``half_of``):
rules were tuned on half A, half B is the check.

``--dev``: the language on pages whose declared ``lang`` is not English
(of this file and WCXB): how often ours agrees with it (primary subtag),
and the identifier's first choice alone. ``--speed N``: milliseconds a
page for ``page_metadata`` and for ``clean_page`` content mode on the
first N pages (each parsed once, parsing not counted). ``--extruct N``:
extruct's JSON-LD, microdata and Open Graph readers on N pages, beside
ours (agreement on the JSON-LD author and date, time). ``--misses``: the
publication date by the rule that gave it (right, wrong, written where the
gold has none), and the wrong pages by kind: no date from us, the gold is
our ``modified``, a day off, the gold's day written nowhere in the page
(neither as ``YYYY-MM-DD`` or ``YYYY/MM/DD`` in its HTML nor as a date in
its text: no rule can find it), another day of the page.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from datetime import date

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from scrapy_deboiler import FitParams, Page, SiteModel, clean_page  # noqa: E402
from scrapy_deboiler._clean import EMPTIED_SHARE, dropped_entries, rare_in  # noqa: E402
from scrapy_deboiler._dates import find_days  # noqa: E402
from scrapy_deboiler._language import normalize_tag, page_language  # noqa: E402
from scrapy_deboiler._metadata import learn_hints, page_candidates, page_metadata  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from score_annotated import read_jsonl  # noqa: E402


def half_of(domain: str) -> str:
    """"A" or "B": the half of the sites a domain is in (SHA-1, stable
    across runs and machines)."""
    return "AB"[hashlib.sha1((domain or "").encode("utf-8")).digest()[0] & 1]


def fold(s) -> str:
    return " ".join(str(s or "").lower().split())


def template_of(page: Page, model: SiteModel | None) -> set:
    """The page's template subtrees as ``clean_page`` content mode takes
    them (none where the model would take the whole page)."""
    if model is None:
        return set()
    signed = page.signed
    found, refused, _ = dropped_entries(signed, model.boilerplate, True, rare_in(model))
    total = signed.total_chars
    share = sum(signed.chars[i] for i in found) / total if total else 0.0
    if (refused and not found) or share >= EMPTIED_SHARE:
        return set()
    return {signed.element(i) for i in found}


def run_site(rows: list[dict], per_site: bool, use_template: bool, explain: bool = False,
             htmldate: bool = False) -> dict[str, dict]:
    """``page_metadata`` of each page of one site, by id."""
    pages = [Page(r["html"], r.get("url") or "") for r in rows]
    model = None
    if len(pages) >= 2 and use_template:
        model = SiteModel.fit(pages, FitParams())
    cands = []
    for page in pages:
        template = template_of(page, model)
        cands.append(page_candidates(page.root, page.url, template))
    hints = learn_hints(cands) if per_site and len(pages) >= 2 else None
    return {r["id"]: page_metadata(p.root, p.url, hints=hints, candidates=c, explain=explain, htmldate=htmldate)
            for r, p, c in zip(rows, pages, cands)}


def score(gold: list[dict], pred: dict[str, dict]) -> dict[str, float]:
    a = na = fa = xa = d = nd = fd = xd = 0
    for g in gold:
        p = pred.get(g["id"]) or {}
        pa = fold(p.get("author"))
        pd = str(p.get("published") or "")[:10]
        if g.get("gold_author"):
            na += 1
            ga = fold(g["gold_author"])
            a += bool(pa) and (ga in pa or pa in ga)
        else:
            xa += 1
            fa += bool(pa)
        if g.get("gold_date"):
            nd += 1
            d += pd == str(g["gold_date"])[:10]
        else:
            xd += 1
            fd += bool(pd)
    return {"pages": len(gold), "author": a / max(na, 1), "date": d / max(nd, 1),
            "author_false": fa / max(xa, 1), "date_false": fd / max(xd, 1)}


def show(name: str, s: dict) -> None:
    print(f"{name:28}{s['pages']:6}{s['author']:8.3f}{s['date']:8.3f}{s['author_false']:11.3f}{s['date_false']:11.3f}")


def _written(r: dict, day: str) -> bool:
    """Whether the page writes ``day`` anywhere: as ``YYYY-MM-DD`` or
    ``YYYY/MM/DD`` in its HTML, or as a date in its text (either order of
    day and month)."""
    html = r.get("html") or ""
    if day in html or day.replace("-", "/") in html:
        return True
    try:
        root = Page(html, r.get("url") or "").root
    except Exception:  # noqa: BLE001 - an unreadable page writes nothing we can read
        return False
    text = " ".join(root.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]"))
    return any(d == day for first in (False, True) for _, d in find_days(text, first, limit=100_000))


def misses(rows: list[dict], pred: dict[str, dict]) -> None:
    """The publication date by rule, and the wrong pages by kind."""
    by_rule: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    kinds: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        p = pred[r["id"]]
        ours = str(p.get("published") or "")[:10]
        rule = (p.get("rules") or {}).get("published") or "(none)"
        gold = str(r.get("gold_date") or "")[:10]
        if not gold:
            by_rule[rule][2] += bool(ours)
            continue
        by_rule[rule][0 if ours == gold else 1] += 1
        if ours == gold:
            continue
        if not _written(r, gold):
            kind = "the gold's day is nowhere in the page"
        elif not ours:
            kind = "no date from us"
        elif str(p.get("modified") or "")[:10] == gold:
            kind = "the gold is our modified"
        elif abs((date.fromisoformat(ours) - date.fromisoformat(gold)).days) == 1:
            kind = "a day off (a time zone)"
        else:
            kind = "another day of the page"
        kinds[kind].append(r["id"])
    print(f"\n{'published: rule':28}{'right':>7}{'wrong':>7}{'no gold':>9}")
    for rule, (right, wrong, false) in sorted(by_rule.items(), key=lambda kv: -sum(kv[1])):
        print(f"{rule:28}{right:7}{wrong:7}{false:9}")
    print(f"\n{'wrong dates, by kind':40}pages")
    for kind, ids in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"{kind:40}{len(ids):5}  {' '.join(ids[:6])}{' ...' if len(ids) > 6 else ''}")


def language_eval(paths: list[str]) -> None:
    """Agreement with the declared language on pages declared in another
    language than English; where ours differs from the declaration (or
    reads a page declared English as another language), which one the
    annotated main text (``gold_text``, read by the identifier alone)
    is in."""
    from scrapy_deboiler._language import _get_identifier, _ranked
    ident = _get_identifier()

    def first(text: str) -> str | None:
        ranked = _ranked(ident, text[:3000])
        return ranked[0][0] if ranked else None

    def gold_lang(r: dict) -> str | None:
        text = r.get("gold_text") or ""
        return first(text) if ident is not None and len(text) >= 200 else None

    for path in paths:
        n = ours = alone = 0
        differ = differ_gold = differ_ours = 0
        declared_en = read_other = read_other_ok = 0
        for r in read_jsonl(path):
            page = Page(r["html"], r.get("url") or "")
            c = page_candidates(page.root, page.url)
            declared = normalize_tag(c.plain.get("declared_language") or c.plain.get("meta_language"))
            if not declared:
                continue
            lang = page_language(c.text, declared)
            primary = declared.split("-")[0]
            mine = lang.split("-")[0] if lang else None
            if primary == "en":
                declared_en += 1
                if mine and mine != "en":
                    read_other += 1
                    read_other_ok += gold_lang(r) == mine
                continue
            n += 1
            ours += mine == primary
            if ident is not None and c.text:
                alone += first(c.text) == primary
            if mine != primary:
                g = gold_lang(r)
                differ += 1
                differ_gold += g is not None
                differ_ours += g is not None and g == mine
        print(f"{os.path.basename(path)}: {n} pages declared non-English: ours agrees with the declaration on "
              f"{ours / max(n, 1):.3f} (the identifier alone on the page's text: {alone / max(n, 1):.3f}); of the "
              f"{differ} that differ, {differ_ours} of {differ_gold} with an annotated text are in our language. "
              f"Declared English: {declared_en}, read as another language: {read_other} "
              f"({read_other_ok} in that language by the annotated text)")


def speed(rows: list[dict], n: int) -> None:
    rows = rows[:n]
    meta_t = clean_t = 0.0
    for r in rows:
        page = Page(r["html"], r.get("url") or "")
        t = time.process_time()
        page_metadata(page.root, page.url)
        meta_t += time.process_time() - t
        t = time.process_time()
        clean_page(page, None, mode="content", want_html=False)
        clean_t += time.process_time() - t
    print(f"speed on {len(rows)} pages: page_metadata {1000 * meta_t / len(rows):.2f} ms a page, "
          f"clean_page content mode {1000 * clean_t / len(rows):.2f} ms a page")


def extruct_compare(rows: list[dict], n: int) -> None:
    """extruct (JSON-LD, microdata, Open Graph; its own parse included)
    beside ours (our parse and all candidates): time, and agreement on
    the JSON-LD ``datePublished`` days."""
    import extruct

    rows = rows[:n]
    ours_t = theirs_t = 0.0
    agree = both = 0
    for r in rows:
        t = time.process_time()
        page = Page(r["html"], r.get("url") or "")
        c = page_candidates(page.root, page.url)
        ours_t += time.process_time() - t
        t = time.process_time()
        try:
            data = extruct.extract(r["html"], base_url=r.get("url") or None,
                                   syntaxes=["json-ld", "microdata", "opengraph"], errors="ignore")
        except Exception:
            data = {}
        theirs_t += time.process_time() - t
        mine = {x.value for x in c.published if x.source in ("ld", "ld-list", "ld-page")}
        theirs = set()
        stack = list(data.get("json-ld") or [])
        while stack:
            x = stack.pop()
            if isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, dict):
                v = x.get("datePublished")
                if isinstance(v, str) and len(v) >= 10 and v[4:5] == "-":
                    theirs.add(v[:10])
                stack.extend(v for v in x.values() if isinstance(v, (list, dict)))
        if mine or theirs:
            both += 1
            agree += mine == theirs
    print(f"extruct on {len(rows)} pages: {1000 * theirs_t / len(rows):.2f} ms a page (parse, JSON-LD, microdata, "
          f"Open Graph); ours {1000 * ours_t / len(rows):.2f} ms (parse and every candidate); the JSON-LD "
          f"datePublished days agree on {agree} of {both} pages where either finds one")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wcxb")
    ap.add_argument("--out")
    ap.add_argument("--dev", help="dev.jsonl.gz, for the language")
    ap.add_argument("--no-site", action="store_true")
    ap.add_argument("--no-template", action="store_true")
    ap.add_argument("--htmldate", action="store_true", help="htmldate where no rule finds a date")
    ap.add_argument("--speed", type=int, default=0)
    ap.add_argument("--extruct", type=int, default=0)
    ap.add_argument("--dump")
    ap.add_argument("--misses", action="store_true", help="dates by rule, and the wrong ones by kind")
    args = ap.parse_args()
    rows = list(read_jsonl(args.wcxb))
    sites: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        sites[r.get("domain") or r["id"]].append(r)
    pred: dict[str, dict] = {}
    t = time.process_time()
    for domain in sorted(sites):
        pred.update(run_site(sites[domain], not args.no_site, not args.no_template, bool(args.dump or args.misses),
                             args.htmldate))
    elapsed = time.process_time() - t
    print(f"{'pages':28}{'n':>6}{'author':>8}{'date':>8}{'auth-false':>11}{'date-false':>11}")
    show("all", score(rows, pred))
    for half in "AB":
        show(f"half {half}", score([r for r in rows if half_of(r.get("domain") or r["id"]) == half], pred))
    multi = [r for r in rows if len(sites[r.get("domain") or r["id"]]) >= 2]
    show("sites of 2+ pages", score(multi, pred))
    for half in "AB":
        show(f"  half {half}", score([r for r in multi if half_of(r.get("domain") or r["id"]) == half], pred))
    print(f"(fit, read and choose: {1000 * elapsed / len(rows):.1f} ms a page)")
    if args.out:
        with gzip.open(args.out, "wt", encoding="utf-8") as f:
            for r in rows:
                meta = {k: v for k, v in pred[r["id"]].items() if k != "rules"}
                f.write(json.dumps({"id": r["id"], "page_metadata": meta}, ensure_ascii=False) + "\n")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({"id": r["id"], "half": half_of(r.get("domain") or r["id"]),
                                    "type": r.get("page_type"), "url": r.get("url"),
                                    "gold_author": r.get("gold_author"), "gold_date": r.get("gold_date"),
                                    **pred[r["id"]]}, ensure_ascii=False) + "\n")
    if args.misses:
        misses(rows, pred)
    if args.dev:
        language_eval([args.dev, args.wcxb])
    if args.speed:
        speed(rows, args.speed)
    if args.extruct:
        extruct_compare(rows, args.extruct)


if __name__ == "__main__":
    main()
