"""The ``scrapy-deboiler`` command: clean, fit, inspect, show and evaluate."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Callable

from ._batch import BatchOptions, DamagedInput, clean_file, fit_file
from ._batch_workers import WorkerDied
from ._files import open_text
from ._clean import Page
from ._content import ContentModelError, default_model
from ._evaluate import evaluate
from ._limits import DEFAULT_LIMITS, Limits
from ._model import FIT_MIN_PAGES, FitParams
from ._show import annotate_page
from ._store import SignatureFileError, SignatureStore, load_site
from ._urls import site_of_url
from ._warc import ArchiveReaderMissing, is_archive

__all__ = ["entry", "main"]


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low`` (quietly raising a
    0 or a negative to the least that works hid the mistake)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is under {low}")
        return value
    return convert


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return value


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url-field", default="url", help="field holding the page URL (default: url)")
    p.add_argument("--html-field", default="html", help="field holding the page HTML (default: html)")
    p.add_argument("--domain-field", help="group pages by this field instead of the URL's host")
    p.add_argument("--min-pages", type=_at_least(FIT_MIN_PAGES), default=FIT_MIN_PAGES,
                   help="fit sites with at least this many pages (default: %(default)s)")
    p.add_argument("--max-fit-pages", type=_at_least(2), default=1000,
                   help="pages per site used for fitting (default: 1000)")
    p.add_argument("--jobs", "-j", type=_at_least(1), default=1, help="worker processes (default: 1)")
    p.add_argument("--min-support", type=_at_least(1), default=FitParams.min_support,
                   help="neighbour pairs that must share a subtree (default: %(default)s)")
    p.add_argument("--mode", choices=("boilerplate", "content"), default="content",
                   help="boilerplate: remove what the site's pages share; content: keep only "
                        "the main content (default: %(default)s)")
    p.add_argument("--comments-field", help="content mode: keep the comments it leaves out in this field")
    p.add_argument("--title-field", default="clean_title",
                   help="write the page's headline in this field; a record that has it keeps its own "
                        "(default: %(default)s)")
    p.add_argument("--body-only", action="store_true",
                   help="content mode: passed on to the content selection (boilerplate mode accepts it "
                        "and ignores it)")
    p.add_argument("--max-page-bytes", type=_at_least(1), default=DEFAULT_LIMITS.max_bytes,
                   help="skip longer pages (default: %(default)s)")
    p.add_argument("--max-page-elements", type=_at_least(1), default=DEFAULT_LIMITS.max_elements,
                   help="skip pages with more start tags (default: %(default)s)")
    p.add_argument("--iou-guard", type=_share, default=FitParams.iou_guard,
                   help="skip neighbour pairs more alike than this (default: %(default)s)")
    p.add_argument("--max-memory", type=_at_least(1), default=1024, metavar="MIB",
                   help="memory the run may keep between its passes: parsed pages (parsed once while "
                        "they fit), model caches (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    p.add_argument("--markdown", action="store_true",
                   help="also write clean_markdown: what was kept, as CommonMark with its links, lists, tables")
    p.add_argument("--metadata", action="store_true",
                   help="also write the page's author, dates, language, site name, canonical URL, description "
                        "and image, learned per site (docs/metadata.md)")
    p.add_argument("--metadata-field", default="page_metadata",
                   help="--metadata's field; a record that has it keeps its own (default: %(default)s)")


def _add_redis(p: argparse.ArgumentParser) -> None:
    p.add_argument("--redis", metavar="URL", required=True,
                   help="redis://[[user]:password@]host[:port][/db], rediss:// (TLS) or unix://")
    p.add_argument("--prefix", default="deboiler", help="the key prefix, DEBOILER_REDIS_PREFIX (default: deboiler)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds a Redis call may take (default: 10)")


def _redis(args: argparse.Namespace) -> int:
    """redis-export and redis-import. Models are validated on the way in
    and out as signature files are; the keys are walked with SCAN."""
    from ._redis import RedisCoordinator

    log = logging.getLogger("scrapy_deboiler")
    coordinator = RedisCoordinator(args.redis, min_pages=2, prefix=args.prefix, timeout=args.timeout)
    store = SignatureStore(args.directory)
    done = refused = kept = 0
    try:
        if args.command == "redis-export":
            os.makedirs(args.directory, exist_ok=True)
            for site, key in coordinator.model_keys():
                doc = coordinator.client.hget(key, "doc")
                try:
                    model = coordinator.parse_model(site, doc)
                except SignatureFileError as e:
                    log.warning("refused %s", e)
                    refused += 1
                    continue
                store.save(site, model)
                done += 1
            log.info("%d models written to %s from %s (keys %s*), %d refused", done, args.directory,
                     coordinator.where(), coordinator.base, refused)
        else:
            if not os.path.isdir(args.directory):
                raise OSError(f"{args.directory} is not a folder")
            for path in store:
                try:
                    site, model = load_site(path)
                except SignatureFileError as e:
                    log.warning("refused %s", e)
                    refused += 1
                    continue
                if model.params.scheme != coordinator.params.scheme:
                    log.warning("refused %s: fitted with another signature scheme than this release's", path)
                    refused += 1
                    continue
                stored, _ = coordinator.publish(site, model)
                done += stored
                kept += not stored
            log.info("%d models published to %s (keys %s*), %d kept (Redis had one as good), %d refused",
                     done, coordinator.where(), coordinator.base, kept, refused)
    except Exception as e:
        if type(e).__module__.startswith("redis"):
            print(f"scrapy-deboiler: error: Redis at {coordinator.where()}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return 2
        raise
    finally:
        coordinator.close()
    return 1 if refused else 0


def _options(args: argparse.Namespace) -> BatchOptions:
    written = {"clean_text", "clean_html", "deboiler", "clean_markdown", args.url_field, args.html_field}
    if args.title_field != args.title_field.strip() or not args.title_field:
        raise ValueError(f"--title-field {args.title_field!r}: expected a field name (without surrounding spaces)")
    if args.title_field in written:
        raise ValueError(f"--title-field {args.title_field!r} is a field the output already has")
    if args.comments_field in written | {args.title_field}:
        raise ValueError(f"--comments-field {args.comments_field!r} is a field the output already has")
    meta_field = args.metadata_field
    if meta_field != meta_field.strip() or not meta_field:
        raise ValueError(f"--metadata-field {meta_field!r}: expected a field name (without surrounding spaces)")
    if meta_field in written | {args.title_field, args.comments_field}:
        raise ValueError(f"--metadata-field {meta_field!r} is a field the output already has")
    return BatchOptions(
        url_field=args.url_field,
        html_field=args.html_field,
        domain_field=args.domain_field,
        min_pages=args.min_pages,
        max_fit_pages=args.max_fit_pages,
        jobs=args.jobs,
        params=FitParams(iou_guard=args.iou_guard, min_support=args.min_support),
        mode=args.mode,
        comments_field=args.comments_field,
        title_field=args.title_field,
        body_only=args.body_only,
        limits=Limits(max_bytes=args.max_page_bytes, max_elements=args.max_page_elements),
        max_memory=args.max_memory * 1024 * 1024,
        progress=not args.no_progress,
        markdown=args.markdown,
        metadata=args.metadata,
        metadata_field=meta_field,
        retain_kept=_EXITING,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scrapy-deboiler",
        description="Learn each website's boilerplate from its own pages and strip it.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("clean", help="clean a JSON Lines file of pages (url, html), or a WARC or ARC file")
    p.add_argument("input", help="JSON Lines (.jsonl, .gz, .zst) or a crawl archive (.warc, .warc.gz, .arc, .arc.gz)")
    p.add_argument("output", help="JSON Lines, gzip if it ends in .gz, zstd if .zst; - for stdout")
    p.add_argument("--signatures", metavar="DIR", help="reuse and write signature files here")
    _add_common(p)
    p = sub.add_parser("fit", help="write signature files for the sites in a JSON Lines, WARC or ARC file")
    p.add_argument("input")
    p.add_argument("--signatures", metavar="DIR", required=True)
    p.add_argument("--refit", action="store_true", help="refit sites that already have a file")
    _add_common(p)
    p = sub.add_parser("show", help="write a page with removed and kept parts marked, to look at")
    p.add_argument("page", help="a saved HTML file (give --url), or JSON Lines whose first record "
                                "has url and html")
    p.add_argument("--signatures", metavar="DIR", required=True, help="the site's signature files")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--url", help="the page's URL (for an HTML file)")
    p.add_argument("--domain", help="the site's name in DIR, when it is not the URL's host")
    p.add_argument("--mode", choices=("boilerplate", "content"), default="content")
    p.add_argument("--url-field", default="url")
    p.add_argument("--html-field", default="html")
    p = sub.add_parser("evaluate", help="token-level precision, recall and F1 against gold text")
    p.add_argument("gold", help="JSON Lines with an id and the gold text")
    p.add_argument("pred", help="JSON Lines with an id and the extracted text")
    p.add_argument("--json", metavar="FILE", help="write per-page scores and the summary here")
    p.add_argument("--id-field", default="id")
    p.add_argument("--gold-field", default="gold_text")
    p.add_argument("--pred-field", default="clean_text")
    p = sub.add_parser("redis-export", help="write the models a cluster published in Redis as signature files")
    p.add_argument("directory", metavar="DIR", help="the folder to write them to (created if missing)")
    _add_redis(p)
    p = sub.add_parser("redis-import", help="publish the signature files of a folder to Redis")
    p.add_argument("directory", metavar="DIR", help="a folder of signature files")
    _add_redis(p)
    p = sub.add_parser("inspect", help="summarise a signature file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    from ._spark_cli import add_parser as _add_spark  # its own module: pyspark only when it runs

    _add_spark(sub)
    return parser


def _inspect(path: str, as_json: bool) -> int:
    domain, model = load_site(path)  # validates first: a clear error for any other file
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    hist = Counter(model.support.values())
    summary = {
        "file": path,
        "domain": domain,
        "format": f"{doc['format']} v{doc['version']}",
        "generator": doc.get("generator"),
        "created": doc.get("created"),
        "pages": model.pages,
        "pairs": model.pairs,
        "skipped_pairs": model.skipped_pairs,
        "signatures": len(model.support),
        "provisional": (f"yes: fitted on {len(model.page_keys)} pages so far, learning until "
                        "it has DEBOILER_MIN_PAGES") if model.provisional else "no",
        # Provisional, or DEBOILER_LEARN: pages it has seen add nothing when crawled again
        "pages_seen": len(model.page_keys),
        "threshold": model.threshold,
        "boilerplate": len(model.boilerplate),
        "support": {str(k): hist[k] for k in sorted(hist)},
        "params": model.params.to_json(),
        "metadata": model.metadata_hints.to_json() if model.metadata_hints else None,
    }
    if as_json:
        print(json.dumps(summary, indent=2))
        return 0
    width = max(map(len, summary))
    for key, value in summary.items():
        if key == "support":
            value = ", ".join(f"{n} pairs: {c}" for n, c in value.items()) or "-"
        elif key == "params":
            value = json.dumps({k: v for k, v in value.items() if k != "scheme"})
        elif key == "metadata":  # where the site keeps its byline and dates (--metadata)
            value = "; ".join(f"{f}: {' | '.join(keys)}" for f, keys in value["fields"].items()) if value else "-"
        print(f"{key:<{width}}  {value}")
    return 0


def _texts(path: str, id_field: str, text_field: str) -> dict[str, str]:
    """id -> text of a JSON Lines file; the first record of an id wins."""
    out: dict[str, str] = {}
    repeated = 0
    with open_text(path, "r") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                raise ValueError(f"{path}: invalid JSON on line {lineno}: {e}") from None
            if not isinstance(record, dict) or id_field not in record:
                raise ValueError(f"{path}: line {lineno} has no {id_field!r}")
            text = record.get(text_field)
            key = str(record[id_field])
            if key in out:
                repeated += 1
            else:
                out[key] = text if isinstance(text, str) else ""
    if repeated:
        logging.getLogger("scrapy_deboiler").warning(
            "%s: %d records repeat an id seen before (ids are compared as text: 1 and \"1\" are one id); "
            "the first of each is scored", path, repeated)
    return out


def _show(args: argparse.Namespace) -> int:
    url, html = args.url or "", None
    if is_archive(args.page):
        raise ValueError(f"{args.page}: show takes one page (an HTML file, or JSON Lines whose first record is "
                         "shown), not a crawl archive: clean the archive with --markdown, or save the page first")
    if args.page.endswith((".jsonl", ".jsonl.gz", ".json")):
        with open_text(args.page, "r") as f:
            record = json.loads(f.readline() or "null")
        if not isinstance(record, dict) or not isinstance(record.get(args.html_field), str):
            raise ValueError(f"{args.page}: the first record has no {args.html_field!r} string")
        html = record[args.html_field]
        url = url or str(record.get(args.url_field) or "")
    else:
        with open(args.page, "rb") as f:
            html = f.read()
    site = args.domain or site_of_url(url)
    if not site:
        raise ValueError(f"{args.page}: give the page's --url (or --domain): it names the site "
                         f"whose signature file in {args.signatures} is shown")
    model = SignatureStore(args.signatures).load(site)
    if model is None:
        logging.getLogger("scrapy_deboiler").warning(
            "no signature file for %r in %s: nothing is marked as boilerplate", site, args.signatures)
    page = Page(html, url)
    if page.skipped is not None:
        raise ValueError(f"{args.page}: not shown: {page.skipped}")
    out, counts = annotate_page(page, model, mode=args.mode, site=site)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(out)
    logging.getLogger("scrapy_deboiler").info(
        "%s: %d boilerplate subtrees, %d kept blocks, %d main-content blocks", args.output,
        counts["boilerplate"], counts["kept"], counts["main"])
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    gold = _texts(args.gold, args.id_field, args.gold_field)
    pred = _texts(args.pred, args.id_field, args.pred_field)
    pages, summary = evaluate(gold.items(), pred)
    summary["ignored_predictions"] = len(set(pred) - set(gold))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "pages": [p.to_json() for p in pages]}, f, indent=1)
    if not pages:
        print("no gold pages")
        return 0
    print(f"{'':8} {'precision':>9} {'recall':>7} {'F1':>7}")
    for kind in ("macro", "micro"):
        m = summary[kind]
        print(f"{kind:8} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>7.3f}")
    print(f"{summary['pages']} pages: {summary['exact']} exact, {summary['empty_predictions']} empty "
          f"predictions ({summary['missing']} missing); {summary['ignored_predictions']} predictions "
          "without gold ignored")
    return 0


#: Set by ``entry``: this process ends as soon as the command is done.
_EXITING = False


def entry() -> None:
    """The ``scrapy-deboiler`` command. It exits without freeing what it
    parsed (``os._exit``): freeing a parsed page costs about half of what
    parsing it did, and the process ends anyway. Fewer, larger garbage
    collections too: the run makes millions of short-lived objects and few
    cycles (4 % of the time went to collecting)."""
    global _EXITING
    _EXITING = True
    gc.set_threshold(50_000, 20, 100)
    try:
        code = main()
    except SystemExit as e:  # argparse's --help and errors
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        code = code or 1
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # The command (not the library) decides how its own messages look.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s", stream=sys.stderr)
    log = logging.getLogger("scrapy_deboiler")
    folder = getattr(args, "signatures", None)
    if folder and os.path.exists(folder) and not os.path.isdir(folder):
        print(f"scrapy-deboiler: error: --signatures {folder}: is a file, not a folder", file=sys.stderr)
        return 2
    try:
        if args.command == "inspect":
            return _inspect(args.file, args.json)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command in ("redis-export", "redis-import"):
            return _redis(args)
        if getattr(args, "mode", None) == "content":
            default_model()  # a broken install fails here, not on every record
        if args.command == "show":
            return _show(args)
        if args.command == "spark":
            from ._spark_cli import run as _spark

            return _spark(args)
        store = SignatureStore(args.signatures) if args.signatures else None
        if store is not None:
            store.sweep()  # temporary files of writers killed long ago
        options = _options(args)
        start = time.perf_counter()
        if args.command == "fit":
            try:
                sites = fit_file(args.input, options, store, refit=args.refit)
            except DamagedInput as e:  # as clean says it: the sites were fitted on what was read
                print(f"scrapy-deboiler: error: {e}; the sites were fitted on their records", file=sys.stderr)
                return 1
            except WorkerDied as e:
                print(f"scrapy-deboiler: error: {e}", file=sys.stderr)
                return 1
            log.info("%d sites: %d fitted, %d from files, %d too small%s (%.1fs)",
                     sites["fitted"] + sites["file"] + sites["too_small"] + sites["no_host"],
                     sites["fitted"], sites["file"], sites["too_small"],
                     ", and pages without a host in their URL" if sites["no_host"] else "",
                     time.perf_counter() - start)
            return _no_pages(args, sites["records"], sites["not_pages"])
        try:
            totals = clean_file(args.input, args.output, options, store)
        except DamagedInput as e:
            print(f"scrapy-deboiler: error: {e}; the output holds their records", file=sys.stderr)
            return 1
        except WorkerDied as e:  # a page that kills its worker every time
            print(f"scrapy-deboiler: error: {e}; the output holds the records before them (--jobs 1 would "
                  "stop on the same records)", file=sys.stderr)
            return 1
        log.info("%d records: %d cleaned, %d emptied, %d single pages, %d unchanged, %d skipped, %d errors (%.1fs)",
                 totals["records"], totals["cleaned"], totals["emptied"], totals["single_page"], totals["unchanged"],
                 totals["skipped"], totals["error"], time.perf_counter() - start)
        left_out = {k.split("/", 1)[1]: n for k, n in totals.items() if k.startswith("archive/")}
        if left_out:
            log.info("archive: %d records, %d HTML responses; left out: %d not responses, %d with a "
                     "non-2xx status, %d not HTML%s", left_out.get("records", 0), left_out.get("html", 0),
                     left_out.get("not_response", 0), left_out.get("status", 0), left_out.get("not_html", 0),
                     (f", {left_out['revisit']} revisits (deduplicated: no body of their own)"
                      if left_out.get("revisit") else "")
                     + (f", {left_out['undecodable']} HTML bodies not decodable"
                        if left_out.get("undecodable") else ""))
        if totals["records"] and totals["error"] == totals["records"]:
            # Every record written, none cleaned: a script must not take that for success.
            first = getattr(totals, "first_error", None) or ""
            print(f"scrapy-deboiler: error: none of the {totals['records']} records could be cleaned"
                  f"{_fields_hint(args, first)}", file=sys.stderr)
            return 1
        return 0
    except BrokenPipeError:  # the reader of stdout left (``inspect ... | head``): nothing to say to it
        _stdout_to_devnull()
        return 1
    except (OSError, SignatureFileError, ValueError, ContentModelError, DamagedInput, ArchiveReaderMissing) as e:
        print(f"scrapy-deboiler: error: {e}", file=sys.stderr)
        return 2


def _fields_hint(args: argparse.Namespace, first: str = "") -> str:
    """What to say after "none of the N records ...": the first record's
    reason where it is not JSON, else the fields the command read."""
    if first.startswith("invalid JSON"):  # not JSON Lines: field names would not help
        return f": {first}"
    if is_archive(args.input):
        return ""
    return f" (fields {args.url_field!r} and {args.html_field!r}: --url-field and --html-field name others)"


def _no_pages(args: argparse.Namespace, records: int, not_pages: int) -> int:
    """``fit``'s exit code: 1 when no record held a page (a crawl's output
    keeps its HTML only with DEBOILER_KEEP_HTML: fitting it fitted nothing,
    quietly, and exited 0), with a warning when some held none."""
    if records and not_pages == records:
        print(f"scrapy-deboiler: error: none of the {records} records holds a page to fit on"
              f"{_fields_hint(args)}", file=sys.stderr)
        return 1
    if not_pages:
        logging.getLogger("scrapy_deboiler").warning("%d of the %d records hold no page to fit on%s", not_pages,
                                                     records, _fields_hint(args))
    return 0


def _stdout_to_devnull() -> None:
    """Python flushes stdout once more at exit: to a closed pipe that is a
    second error message, so stdout goes nowhere from here on."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
