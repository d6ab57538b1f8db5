"""A page with what cleaning does marked on it, for people to look at.

The page keeps its own markup and styles; its scripts are disabled (removed,
and forbidden by a Content-Security-Policy) so the view is safe to open.
Removed boilerplate is outlined red, text kept by boilerplate removal green,
main content (content mode) blue; hovering any marked element shows why
(its signature's support among the site's neighbour pairs, its content
score). A legend in the corner gives the counts.
"""

from __future__ import annotations

from html import escape

from lxml import etree

from ._clean import Page, _drop, boilerplate_of
from ._content import judge_blocks
from ._model import SiteModel
from ._signatures import sign_tree
from ._text import tree_text

__all__ = ["annotate_page"]

STYLE = """
[data-deboiler=boilerplate] { outline: 3px solid #d0021b !important; outline-offset: -2px;
  background-color: rgba(208, 2, 27, .08) !important; }
[data-deboiler=kept] { outline: 2px solid #2e9d3a !important; outline-offset: -1px; }
[data-deboiler=main] { outline: 2px solid #1f5fd1 !important; outline-offset: -1px;
  background-color: rgba(31, 95, 209, .06) !important; }
[data-deboiler]:hover { outline-width: 4px !important; }
#deboiler-legend { position: fixed; top: 8px; right: 8px; z-index: 2147483647; background: #fff;
  color: #111; border: 1px solid #888; border-radius: 4px; padding: 8px 10px; font: 13px/1.4 sans-serif;
  box-shadow: 0 2px 8px rgba(0,0,0,.25); max-width: 320px; text-align: left; }
#deboiler-legend span.sw { display: inline-block; width: 12px; height: 12px; margin-right: 6px;
  vertical-align: -1px; border: 2px solid; }
#deboiler-legend p { margin: 0 0 4px 0; }
"""
CSP = "script-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'self' http: https:"
_URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "data")


def _disable_scripts(root: etree._Element) -> int:
    """Remove scripts, event handlers and javascript: URLs; returns how many
    scripts were removed."""
    scripts = 0
    for el in list(root.iter()):
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.lower()
        if tag == "script" or (tag == "meta" and (el.get("http-equiv") or "").lower() == "refresh"):
            scripts += tag == "script"
            _drop(el)  # its tail (the text that followed) stays
            continue
        for name in list(el.attrib):
            low = name.lower()
            value = (el.get(name) or "").strip().lower()
            if low.startswith("on") or (low in _URL_ATTRS and value.startswith(("javascript:", "vbscript:"))):
                del el.attrib[name]
        if tag == "iframe":
            el.set("sandbox", "")
    return scripts


def _head(root: etree._Element) -> etree._Element:
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    return head


def _declare_utf8(root: etree._Element, head: etree._Element) -> None:
    """The view is written as UTF-8 whatever the page was: drop the page's
    own charset declarations (``<meta charset>``, ``http-equiv``
    Content-Type), which would make a browser read the view as, say,
    ISO-8859-1 and show mojibake, and declare UTF-8 first in ``<head>``."""
    for el in list(root.iter("meta")):
        equiv = (el.get("http-equiv") or "").strip().lower()
        if el.get("charset") is not None or equiv == "content-type":
            _drop(el)
    head.insert(0, etree.Element("meta", charset="utf-8"))


def annotate_page(page: Page, model: SiteModel | None, *, mode: str = "content",
                  site: str = "") -> tuple[str, dict]:
    """The page's HTML with the marks, and the counts the legend shows."""
    root = page.root
    if model is not None and model.params.scheme != page.scheme:
        page.signed = sign_tree(root, model.params.scheme)
    signed = page.signed
    support = model.support if model is not None else {}
    pairs = model.pairs if model is not None else 0
    why: dict[etree._Element, str] = {}
    for i, sig in enumerate(signed.signatures):
        n = support.get(sig)
        if n:
            why[signed.element(i)] = f"signature {sig}: shared by {n} of {pairs} neighbour pairs"
    dropped, near = boilerplate_of(page, model, content=mode == "content")
    text_chars = len(tree_text(root))
    removed_chars = sum(len(tree_text(el)) for el in dropped)
    blocks, scores, flags = judge_blocks(root, skip=set(dropped), near=near, single=model is None)
    threshold = model.threshold if model is not None else 0
    for el in dropped:
        el.set("data-deboiler", "boilerplate")
        el.set("title", f"removed as boilerplate ({why.get(el, '')}; threshold {threshold})")
    counts = {"boilerplate": len(dropped), "kept": 0, "main": 0}
    for block, score, kept in zip(blocks, scores, flags):
        el = block.element
        if el.tag in ("html", "body"):
            continue
        state = "main" if kept and mode == "content" else "kept"
        counts[state] += 1
        el.set("data-deboiler", state)
        label = "main content" if state == "main" else (
            "kept (left out of main content)" if mode == "content" else "kept")
        el.set("title", f"{label}; content score {score:.2f}; "
                        f"{why.get(el, 'signature shared by no neighbour pair')}")
    counts.update(removed_chars=removed_chars, text_chars=text_chars,
                  scripts_removed=_disable_scripts(root))

    head = _head(root)
    _declare_utf8(root, head)
    meta = etree.Element("meta", {"http-equiv": "Content-Security-Policy", "content": CSP})
    head.insert(1, meta)
    if page.url.startswith(("http://", "https://")) and head.find("base") is None:
        head.insert(2, etree.Element("base", href=page.url))
    style = etree.SubElement(head, "style", id="deboiler-style")
    style.text = STYLE
    body = root.find("body")
    if body is None:
        body = etree.SubElement(root, "body")
    share = removed_chars / text_chars if text_chars else 0.0
    model_line = (f"model: {model.pages} pages, {len(model.boilerplate)} boilerplate signatures"
                  if model is not None else "no signature file for this site")
    legend = etree.fromstring(
        f'<div id="deboiler-legend"><p><b>scrapy-deboiler</b> · {escape(site or "?")} · {mode} mode</p>'
        f'<p><span class="sw" style="border-color:#d0021b"></span>boilerplate removed: '
        f'<b class="n-boilerplate">{counts["boilerplate"]}</b> subtrees, {100 * share:.0f}% of the text</p>'
        f'<p><span class="sw" style="border-color:#2e9d3a"></span>kept: '
        f'<b class="n-kept">{counts["kept"]}</b> blocks</p>'
        + (f'<p><span class="sw" style="border-color:#1f5fd1"></span>main content: '
           f'<b class="n-main">{counts["main"]}</b> blocks</p>' if mode == "content" else "")
        + f"<p>{escape(model_line)}; hover a mark for its evidence</p></div>",
        etree.HTMLParser()).find(".//div")
    body.append(legend)
    html = etree.tostring(root, method="html", encoding="unicode", doctype="<!DOCTYPE html>")
    return html, counts
