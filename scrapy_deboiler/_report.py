"""A crawl's report: one self-contained HTML file (no scripts, no fetches)
saying, per site, what was learned and removed, with small inline SVG plots
and links to marked-up views of a few pages (``_show``)."""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from hashlib import blake2b
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

from ._clean import Page
from ._limits import Limits
from ._model import SiteModel
from ._show import annotate_page
from ._signatures import SignatureScheme
from ._store import site_filename

__all__ = ["SiteReport", "render_report", "write_report"]

logger = logging.getLogger(__name__)

def _url_key(url: str) -> bytes:
    return blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()


#: Bounds on what one site keeps for its report, whatever the crawl's size.
MAX_DISTINCT_BLOCKS = 500
#: Removed blocks a site's section lists (and all a forgotten site keeps).
SHOWN_BLOCKS = 10
#: Sites the report draws and describes in full, the largest first; the
#: others get a table row each (a broad crawl has hundreds of thousands).
DETAILED_SITES = 500
#: Bars of a site's histogram of pages by share of HTML removed.
BINS = 10


@dataclass
class SiteReport:
    """What the report says about one site, gathered while the crawl runs."""

    name: str
    pages: int = 0
    statuses: Counter = field(default_factory=Counter)
    bytes_in: int = 0
    bytes_out: int = 0
    model_source: str | None = None
    model_pages: int = 0
    #: Fitted on fewer than DEBOILER_MIN_PAGES pages: still learning.
    model_provisional: bool = False
    signatures: int = 0
    boilerplate_signatures: int = 0
    #: Pages by share of HTML removed, in BINS bars (all a page's share is used for).
    histogram: list[int] = field(default_factory=lambda: [0] * BINS)
    blocks: Counter = field(default_factory=Counter)  # signature -> pages it was removed from
    snippets: dict[str, str] = field(default_factory=dict)
    views: list[tuple[str, str]] = field(default_factory=list)  # (page URL, relative link)
    #: Pages kept to draw views of at the end (url, html, encoding), or None.
    samples: list[tuple[str, str | bytes, str | None]] | None = None

    def sample(self, url: str, html: str | bytes, encoding: str | None, keep: int) -> None:
        """Keep the ``keep`` pages whose URLs hash lowest: a spread over the
        site (not its first pages, often index and legal pages) that does
        not depend on the order pages arrive in."""
        if self.samples is None or keep <= 0:
            return
        self.samples.append((url, html, encoding))
        if len(self.samples) > keep:
            self.samples.sort(key=lambda s: _url_key(s[0]))
            del self.samples[keep:]

    def add_page(self, status: str, html_chars: int, clean_chars: int,
                 removed_blocks: list[tuple[str, str]]) -> None:
        self.pages += 1
        self.statuses[status] += 1
        self.bytes_in += html_chars
        self.bytes_out += clean_chars
        if html_chars:
            self.histogram[min(BINS - 1, max(0, int((1 - clean_chars / html_chars) * BINS)))] += 1
        seen: set[str] = set()  # a block repeated on a page counts once for it
        for sig, text in removed_blocks:
            if sig not in seen and (sig in self.blocks or len(self.blocks) < MAX_DISTINCT_BLOCKS):
                seen.add(sig)
                self.blocks[sig] += 1
                self.snippets.setdefault(sig, text)

    def top_blocks(self) -> list[tuple[str, int]]:
        """The removed blocks the report lists: most pages first, then by signature."""
        return sorted(self.blocks.items(), key=lambda kv: (-kv[1], kv[0]))[:SHOWN_BLOCKS]

    def compact(self) -> None:
        """Keep only what the report shows of the site's removed blocks: for
        a site the crawl forgot (DEBOILER_MAX_SITES), so a broad crawl's
        report state stays about a kilobyte a site."""
        top = self.top_blocks()
        self.blocks = Counter(dict(top))
        self.snippets = {sig: self.snippets[sig] for sig, _ in top if sig in self.snippets}


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1a1a1a; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin: 28px 0 6px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 10px; text-align: left;
  border-bottom: 1px solid #eee; vertical-align: top; } th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.snippet { color: #444; font-size: 13px; } code { font-size: 12px; color: #666; }
.site { margin-bottom: 18px; } svg { vertical-align: middle; }
"""


def _bar(share: float, width: int = 160) -> str:
    w = max(0.0, min(1.0, share)) * width
    return (f'<svg class="bar" width="{width}" height="12" role="img" aria-label="{100 * share:.0f}% removed">'
            f'<rect width="{width}" height="12" fill="#e8f3ea"/><rect width="{w:.1f}" height="12" '
            f'fill="#d0021b"/></svg>')


def _histogram(counts: list[int], width: int = 200, height: int = 48) -> str:
    """Pages by share of HTML removed, 0-100 % in ``len(counts)`` bars."""
    bins = len(counts)
    top = max(counts) or 1
    bw = width / bins
    bars = "".join(
        f'<rect class="hbar" x="{i * bw + 1:.1f}" y="{height - 14 - (c / top) * (height - 16):.1f}" '
        f'width="{bw - 2:.1f}" height="{(c / top) * (height - 16):.1f}" fill="#d0021b">'
        f"<title>{i * 100 // bins}-{(i + 1) * 100 // bins}% removed: {c} pages</title></rect>"
        for i, c in enumerate(counts))
    return (f'<svg class="histogram" width="{width}" height="{height}" role="img" '
            f'aria-label="pages by share removed">{bars}'
            f'<text x="0" y="{height - 2}" font-size="10">0%</text>'
            f'<text x="{width - 28}" y="{height - 2}" font-size="10">100%</text></svg>')


def render_report(sites: list[SiteReport], *, title: str = "scrapy-deboiler crawl report",
                  mode: str = "content", stats: dict | None = None) -> str:
    """The report's HTML."""
    sites = sorted(sites, key=lambda s: (-s.pages, s.name))
    pages = sum(s.pages for s in sites)
    total_in = sum(s.bytes_in for s in sites)
    total_out = sum(s.bytes_out for s in sites)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
             "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
             "style-src 'unsafe-inline'; img-src data:\">"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             f"<p id='summary'>{len(sites)} sites, {pages} pages, {mode} mode; "
             f"{100 * (1 - total_out / total_in) if total_in else 0:.0f}% of HTML removed overall. "
             + (f"<b>{stats['deboiler/saves_failed']} signature files could not be saved</b> (see the log). "
                if stats and stats.get("deboiler/saves_failed") else "") +
             f"Written {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.</p>",
             "<table id='sites'><tr><th>site</th><th>pages</th><th>model</th><th>signatures</th>"
             "<th>HTML removed</th><th></th><th>pages by share removed</th></tr>"]
    if len(sites) > DETAILED_SITES:
        parts.insert(-1, f"<p id='detailed'>The {DETAILED_SITES} largest sites are drawn and described "
                         f"in full; the other {len(sites) - DETAILED_SITES} have a row each.</p>")
    for i, s in enumerate(sites):
        share = 1 - s.bytes_out / s.bytes_in if s.bytes_in else 0.0
        model = (f"{s.model_source}, {s.model_pages} pages" + (", provisional" if s.model_provisional else "")
                 if s.model_source else "none")
        detailed = i < DETAILED_SITES
        name = escape(s.name or "?")
        parts.append(
            f"<tr class='site-row'><td>{f'<a href=#site-{i}>{name}</a>' if detailed else name}</td>"
            f"<td class='num'>{s.pages}</td><td>{escape(model)}</td>"
            f"<td class='num'>{s.boilerplate_signatures} / {s.signatures}</td>"
            f"<td class='num share'>{100 * share:.0f}%</td>"
            + (f"<td>{_bar(share)}</td><td>{_histogram(s.histogram)}</td></tr>" if detailed else
               "<td></td><td></td></tr>"))
    parts.append("</table>")
    for i, s in enumerate(sites[:DETAILED_SITES]):
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()))
        parts.append(f"<div class='site' id='site-{i}'><h2>{escape(s.name or '?')}</h2>"
                     f"<p>{s.pages} pages ({escape(statuses)}); {s.bytes_in:,} characters of HTML in, "
                     f"{s.bytes_out:,} out. Boilerplate signatures: {s.boilerplate_signatures} of "
                     f"{s.signatures} shared subtrees.</p>")
        if s.blocks:
            parts.append("<table class='blocks'><tr><th>removed from</th><th>block (start of its text)</th>"
                         "<th>signature</th></tr>")
            for sig, n in s.top_blocks():
                parts.append(f"<tr><td class='num'>{n} pages</td><td class='snippet'>"
                             f"{escape(s.snippets.get(sig) or '(no text)')}</td><td><code>{sig}</code></td></tr>")
            parts.append("</table>")
        if s.views:
            links = " · ".join(f"<a class='view' href='{escape(href)}'>{escape(url)}</a>" for url, href in s.views)
            parts.append(f"<p>Marked-up pages: {links}</p>")
        parts.append("</div>")
    if stats:
        parts.append("<h2>Stats</h2><table id='stats'>" + "".join(
            f"<tr><td>{escape(k)}</td><td class='num'>{escape(str(v))}</td></tr>"
            for k, v in sorted(stats.items())) + "</table>")
    parts.append("</body></html>")
    return "".join(parts)


def views_folder(report_path: str) -> str:
    """Where a report's page views go: beside it, named after it."""
    base, _ = os.path.splitext(report_path)
    return base + "_pages"


def write_report(path: str, reports: list[SiteReport], model_of: Callable[[str], SiteModel | None], *,
                 mode: str, limits: Limits, scheme: SignatureScheme, stats: dict | None = None) -> None:
    """Write the report to ``path`` and the views of each site's kept pages
    (``SiteReport.samples``) into the folder beside it."""
    folder = views_folder(path)
    shown = []
    for rep in sorted(reports, key=lambda r: r.name):
        if not rep.pages:
            continue
        model = model_of(rep.name)
        for k, (url, html, enc) in enumerate(sorted(rep.samples or (), key=lambda s: s[0])):
            try:
                page = Page(html, url, enc, scheme, limits)
                if page.skipped is not None:
                    continue
                out, _ = annotate_page(page, model, mode=mode, site=rep.name)
            except Exception:
                logger.exception("cannot draw %s for the report", url)
                continue
            filename = f"{site_filename(rep.name)[:-5]}-{k}.html"
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, filename), "w", encoding="utf-8") as f:
                f.write(out)
            rep.views.append((url, f"{os.path.basename(folder)}/{filename}"))
        rep.samples = None
        shown.append(rep)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_report(shown, mode=mode, stats=stats))
