"""Pages, and removing a site's boilerplate from them."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from copy import deepcopy
from typing import Any
from itertools import compress
from dataclasses import dataclass, field

from lxml import etree

from ._content import _is_hidden, select_content
from ._content_html import absolute_links
from ._data_tables import outside_data_tables
from ._limits import DEFAULT_LIMITS, Limits, Skip, check_page
from ._loading import empty_root, parse_html
from ._markdown import content_tree, tree_markdown
from ._model import SiteModel
from ._own_rows import own_headline, own_parts, own_rows, row_fields, row_titles, second_copies
from ._phrases import list_entries, mid_sentence, phrase, section_labels
from ._signatures import DEFAULT_SCHEME, SignatureScheme, SignedTree, sign_tree
from ._text import drop as _drop
from ._text import tree_text
from ._candidates import PageRead, read_page
from ._language import LanguageBatch
from ._metadata import page_candidates, page_metadata, page_summary
from ._title import page_title

# None when not built or switched off (subtrees are detached through lxml)
from ._compiled import speedups as _speedups

logger = logging.getLogger(__name__)

__all__ = ["FALLBACKS", "MODES", "Page", "CleanResult", "clean_page", "read_of", "summary_of"]


class Page:
    """A page parsed once and signed once, ready to fit on and then clean.

    It can be cleaned again (with another model or mode): it is signed
    again then. Cleaning leaves its tree as it was.
    """

    __slots__ = ("url", "root", "encoding", "notes", "scheme", "signed", "skipped", "_sigs", "_cleaned", "meta_read")

    def __init__(
        self,
        html: str | bytes,
        url: str = "",
        encoding: str | None = None,
        scheme: SignatureScheme = DEFAULT_SCHEME,
        limits: Limits | None = DEFAULT_LIMITS,
    ) -> None:
        if isinstance(html, (bytearray, memoryview)):
            html = bytes(html)
        if not isinstance(html, (str, bytes)):
            raise TypeError(f"a Page's html is str or bytes, not {type(html).__name__}")
        if not isinstance(url, str):
            raise TypeError(f"a Page's url is a str, not {type(url).__name__}")
        self.url = url
        self.scheme = scheme
        self._sigs: frozenset[str] | None = None
        #: Why the page was not parsed (too large, not HTML), or None.
        #: ``limits=None``: the caller has checked the page already.
        self.skipped: Skip | None = check_page(html, limits) if limits is not None else None
        #: "cleaned": its signatures were freed (signed again if cleaned
        #: again).
        self._cleaned: str | None = None
        #: Its metadata as read whatever its template (``_candidates.read_page``),
        #: once: when it is signed for its site's fit, for its clean too.
        self.meta_read: PageRead | None = None
        if self.skipped is not None:
            self.root, self.encoding, self.notes = empty_root(), "", []
            self.signed = SignedTree()
            return
        parsed = parse_html(html, encoding)
        self.root = parsed.root
        self.encoding = parsed.encoding
        self.notes = parsed.notes
        self.signed = sign_tree(parsed.root, scheme)

    @property
    def signatures(self) -> frozenset[str]:
        """Signatures of the page's text-holding candidate subtrees."""
        if self._sigs is None:
            self._sigs = frozenset(self.signed.signatures)
        return self._sigs

    def __iter__(self):
        # Unpacks as (url, signatures), the form SiteModel.fit takes.
        return iter((self.url, self.signatures))


@dataclass
class CleanResult:
    """What cleaning a page gave."""

    text: str
    html: str
    removed: int = 0
    notes: list[str] = field(default_factory=list)
    #: Content mode: the text of user comments it left out.
    comments: str = ""
    #: Set when the page was not cleaned (``Page.skipped``); text and html
    #: are then empty.
    skipped: Skip | None = None
    #: With ``explain``: (signature, start of its text) of each removed subtree.
    removed_blocks: list[tuple[str, str]] = field(default_factory=list)
    #: With ``markdown``: what was kept, as CommonMark (``_markdown``).
    markdown: str = ""
    #: The page's headline (``_title.page_title``), "" if it states none.
    title: str = ""
    #: Set when the site model was not used as it stood (``clean_page``):
    #: "shared_parts", "no_model" or "emptied" (``FALLBACKS``).
    fallback: str = ""
    #: Share of the page's text inside the subtrees the site model matched,
    #: and its characters (whitespace left out).
    model_share: float = 0.0
    model_chars: int = 0
    #: With ``metadata``: ``_metadata.page_metadata``'s dict (author,
    #: dates, language ...), chosen with the model's ``metadata_hints``.
    metadata: dict[str, str | None] | None = None


#: Why a page was not cleaned with its site's model as it stood:
#: ``shared_parts``: a structure-only match took the whole page (its root or
#: body, or most of its text: a page of one layout with little text, all
#: links, matches on shape alone), so the parts the pages really share (nav,
#: footer) were removed instead; ``no_model``: nothing else was shared, the
#: page was cleaned as without a model; ``emptied``: what the model matched
#: held nearly all its text (``EMPTIED_SHARE``), so it was cleaned as without
#: a model and keeps its text.
FALLBACKS = ("shared_parts", "no_model", "emptied")
#: A structure-only match holding more than this share of a page's text is
#: the page, not its template.
WHOLE_PAGE_SHARE = 0.5
#: A model that would remove at least this share of a page's text (of a
#: page with at least ``EMPTIED_MIN_CHARS``) empties it: session-id copies of
#: one article kept 1 % of it ("Session ID: 000000"); a calendar page of one
#: layout keeps its date heading, about 20 %.
EMPTIED_SHARE = 0.95
EMPTIED_MIN_CHARS = 50
#: A model is not saved when it empties at least this share of the pages
#: it was checked on (and two or more): one page may be a copy of the
#: site's own template (a page of nothing but its nav), a quarter of them
#: means the fit took content for template (one article under many URLs
#: that the copy test missed, a syndicated text on every page).
EMPTIED_PAGES_SHARE = 0.25


def empties_many(emptied: int, pages: int) -> bool:
    """Whether a model that emptied ``emptied`` of ``pages`` pages (its fit
    pages, or its site's pages in a batch run) is unfit to be saved."""
    return emptied >= 2 and emptied >= EMPTIED_PAGES_SHARE * pages


MODES = ("boilerplate", "content")


def emptied_reason(result: CleanResult) -> str:
    """The status reason of a page the site model would have emptied."""
    return (f"the site model would remove {result.model_share:.0%} of its text: "
            "cleaned as without a model")


def outermost(signed: SignedTree, signatures: frozenset[str] | set[str],
              refused: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """Entries of ``signed`` whose signature is in ``signatures`` and that lie
    in no other such entry's subtree, last first; ``refused`` entries do not
    count (what lies inside them can)."""
    found: list[int] = []
    if signatures:
        # Ancestors come after their descendants, so walk the matches
        # backwards and skip those inside a subtree already found
        # (entries starts[i]..i).
        starts = signed.starts
        floor = len(starts)
        # compress/map test membership in C: 3x faster than a comprehension.
        for i in reversed(list(compress(range(len(starts)), map(signatures.__contains__, signed.signatures)))):
            if i < floor and i not in refused:
                found.append(i)
                floor = starts[i]
    return found


def _whole_page(signed: SignedTree, found: list[int]) -> set[int]:
    """The structure-only entries of ``found`` that are the page: its root
    or body, or holding most of its text (``WHOLE_PAGE_SHARE``). Twenty
    calendar pages of one layout, mostly links, matched on their ``<html>``'s
    shape: content mode kept nothing, boilerplate mode nothing was removed."""
    limit = WHOLE_PAGE_SHARE * signed.total_chars
    return {i for i in found if i in signed.shapes and (
        signed.chars[i] > limit or signed.element(i).tag in ("html", "body"))}


def dropped_entries(signed: SignedTree, signatures: frozenset[str] | set[str],
                    phrases: bool = False, rare: Callable[[str], bool] | None = None,
                    ) -> tuple[list[int], bool, list[int]]:
    """``outermost_dropped``, whether a whole-page structure-only match was
    refused (``_whole_page``: the entries then are the shared parts inside
    it), and the shared entries left as labels of the page's own sections
    (``section_labels``). Entries of its lists (``list_entries``) are left
    too, and with ``rare`` (``rare_in``) its headline and what the rows of
    its own lists hold (``_own_rows``)."""
    found = outermost(signed, signatures)
    refused = _whole_page(signed, found) if signed.shapes else set()
    if refused:
        while True:  # a refused body's parts may hold another page-sized shape
            found = outermost(signed, signatures, refused)
            more = _whole_page(signed, found)
            if not more:
                break
            refused |= more
    spared = set(refused)  # what lies inside a spared entry can still match
    while rare is not None and (heads := own_headline(signed, found, rare)):
        spared |= heads  # (then what it holds: the <a> of a matched <h1>)
        found = outermost(signed, signatures, spared)
    rows = set(own_rows(signed, found, WHOLE_PAGE_SHARE, rare)) if rare is not None else set()
    if rows:
        assert rare is not None
        while more := own_parts(signed, found, rows, rare):
            spared |= more
            found = outermost(signed, signatures, spared)
    if rare is not None and (copies := second_copies(signed, found)):
        found = [i for i in found if i not in copies]  # a section index's list, copied in the sidebar
    found = outside_data_tables(signed, found)
    in_text = phrase if phrases else mid_sentence
    entries = [(i, e) for i in found if not in_text(e := signed.element(i))]
    elements = [e for _, e in entries]
    every_page = getattr(rare, "every_page", None)
    values = list_entries(elements, {e for i, e in entries if every_page(signed.signatures[i])}
                          if every_page is not None else set(elements))
    labels = section_labels(elements, values, not phrases)
    own = labels | values
    if elements:
        left = signed.total_chars - sum(signed.chars[i] for i, _ in entries)
        own |= row_fields(signed, entries, left, WHOLE_PAGE_SHARE) | row_titles(entries)
    return [i for i, e in entries if e not in own], bool(refused), [i for i, e in entries if e in labels]


def outermost_dropped(signed: SignedTree, signatures: frozenset[str] | set[str],
                      phrases: bool = False, rare: Callable[[str], bool] | None = None) -> list[int]:
    """The entries of ``outermost`` that cleaning removes: not those inside
    a data table, and with ``phrases`` not those that are words of the
    page's own text (``PHRASE_TAGS``); never a structure-only match of the
    whole page (``dropped_entries``)."""
    return dropped_entries(signed, signatures, phrases, rare)[0]


#: A heading's permalink mark at the end of a line of boilerplate mode's text.
_PERMALINK_END = re.compile("[ \t]*[\u00b6\U0001f517]$", re.M)

#: Of the neighbour pairs a model compared, the share that must share a
#: subtree for the page's metadata to take it for template (``site_wide``).
META_TEMPLATE_SHARE = 0.25


#: ... and that this share or more share: on about every page of the site.
EVERY_PAGE_SHARE = 0.8


class _Rare:
    """Whether fewer than ``META_TEMPLATE_SHARE`` of the model's neighbour
    pairs share a signature (called): a match some pages have (a topic's
    title in its neighbours' boxes), not one of the site's template; and
    whether ``EVERY_PAGE_SHARE`` or more do (``every_page``)."""

    __slots__ = ("support", "least", "most")

    def __init__(self, model: SiteModel) -> None:
        self.support = model.support
        self.least = max(model.threshold, META_TEMPLATE_SHARE * model.pairs)
        self.most = max(model.threshold, EVERY_PAGE_SHARE * model.pairs)

    def __call__(self, sig: str) -> bool:
        return self.support.get(sig, 0) < self.least

    def every_page(self, sig: str) -> bool:
        return self.support.get(sig, 0) >= self.most


def rare_in(model: SiteModel) -> Callable[[str], bool]:
    """``_Rare`` of the model's signatures."""
    return _Rare(model)


def site_wide(signed: SignedTree, entries: list[int], rare: Callable[[str], bool]) -> list[int]:
    """The entries whose subtree a quarter or more of the model's neighbour
    pairs share (not ``rare``, ``rare_in``), as the metadata's template.
    Cleaning removes a subtree two neighbour pairs share; a byline does that
    when a run of neighbouring posts has one author ("By Sam Hughes" on four
    quick tips of twenty pages), and the author was lost with it. A box of
    other posts' dates and authors is on most of the site's pages
    (``META_TEMPLATE_SHARE`` of the pairs)."""
    return [i for i in entries if not rare(signed.signatures[i])]


def _signed_for(page: Page, model: SiteModel) -> SignedTree:
    """The page's signatures under the model's scheme (signed again if the
    page was signed under another)."""
    if model.params.scheme != page.scheme:
        page.signed = sign_tree(page.root, model.params.scheme)
    return page.signed


def boilerplate_of(page: Page, model: SiteModel | None, content: bool = False,
                   ) -> tuple[list[etree._Element], set]:
    """The page's outermost boilerplate subtrees to skip, and for
    ``content`` mode the subtrees some neighbouring pages share, too rarely
    to be removed: a hint for the content model, not a verdict."""
    dropped: list[etree._Element] = []
    shared: set = set()
    if model is None:
        return dropped, shared
    signed = _signed_for(page, model)
    bp = model.boilerplate
    found, _, labels = dropped_entries(signed, bp, content, rare_in(model))
    dropped = [signed.element(i) for i in found]
    if content:
        near = model.near_boilerplate
        shared = {signed.element(i) for i in
                  compress(range(len(signed.signatures)), map(near.__contains__, signed.signatures))}
        shared.update(signed.element(i) for i in labels)
    return dropped, shared


def clean_page(
    page: Page, model: SiteModel | None, *, want_html: bool = True, mode: str = "boilerplate",
    explain: bool = False, markdown: bool = False, body_only: bool = False, metadata: bool = False,
    languages: LanguageBatch | None = None,
) -> CleanResult:
    """Remove the model's boilerplate subtrees from ``page``; keep the rest
    exactly (attributes, tails, order). With no model nothing is removed.

    ``mode="content"`` then keeps only the main content's text blocks
    (``_content``), with or without a model; its HTML holds those blocks;
    ``body_only`` is passed on to ``select_content`` (boilerplate mode
    takes it and ignores it). ``markdown`` also renders what is kept as
    Markdown, with the page's own structure (links, lists, tables ...).
    Either mode gives the page's headline (``CleanResult.title``);
    ``metadata`` adds its author, dates, language ... (``_metadata``),
    read outside the subtrees the model takes for template and where the
    model learned the site keeps them; ``languages``: the metadata's
    language is written when that batch runs (``LanguageBatch``).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if not isinstance(page, Page):
        raise TypeError(f"clean_page takes a Page (Page(html, url)), not {type(page).__name__}")
    if model is not None and not isinstance(model, SiteModel):
        raise TypeError(f"clean_page's model is a SiteModel or None, not {type(model).__name__}")
    if page.skipped is not None:
        return CleanResult("", "", 0, list(page.notes), skipped=page.skipped)
    if page._cleaned == "cleaned":  # its signatures were freed after the first clean
        page.signed = sign_tree(page.root, page.scheme)
    content = mode == "content"
    addresses: list[int] | None = None
    fallback, share, matched = "", 0.0, 0
    if model is not None:
        # What the model would remove, from the walk's text sizes: a model
        # that takes the page itself is not used as it stands (FALLBACKS).
        signed = _signed_for(page, model)
        rare = rare_in(model)
        found, refused, labels = dropped_entries(signed, model.boilerplate, content, rare)
        total = signed.total_chars
        matched = sum(signed.chars[i] for i in found)
        share = matched / total if total else 0.0
        if refused and not found:
            fallback = "no_model"
        elif share >= EMPTIED_SHARE and total >= EMPTIED_MIN_CHARS:
            fallback = "emptied"
        elif refused:
            fallback = "shared_parts"
        # Content mode tries a model that would empty the page, and keeps
        # its result where extracting the page alone keeps no more text
        # (``_emptied_content``).
        if fallback == "no_model" or (fallback == "emptied" and not content):
            model = None
    if not content and model is not None and _speedups is not None:
        # Boilerplate mode needs only where the subtrees are: no proxies.
        addresses = signed.addresses(found)
        dropped = [] if addresses is not None else [signed.element(i) for i in found]
    elif content and model is not None:
        dropped = [signed.element(i) for i in found]
        bp_near = model.near_boilerplate
        near = {signed.element(i) for i in
                compress(range(len(signed.signatures)), map(bp_near.__contains__, signed.signatures))}
        near.update(signed.element(i) for i in labels)  # the labels of its own sections: kept_rules.keep_labels
    else:
        dropped, near = boilerplate_of(page, model, content)
    removed = len(found) if addresses is not None else len(dropped)
    # Before anything is cut. The template's <h1> is the site's name, which
    # its <title> repeats ("Traits - The Rust Programming Language").
    template = {signed.element(i) for i in found} if addresses is not None else set(dropped)
    title = page_title(page.root, page.url, skip=template)
    meta_template = template
    if metadata and model is not None:
        # A byline's name or date is a phrase other pages repeat (in their
        # lists of posts): boilerplate mode removes such phrases, but the
        # page's metadata is read outside its template as content mode takes it.
        entries = found if content else dropped_entries(signed, model.boilerplate, True, rare)[0]
        meta_template = {signed.element(i) for i in site_wide(signed, entries, rare)}
    blocks: list[tuple[str, str]] = []
    if explain and model is not None:  # for reports: which subtrees, by signature
        signed = page.signed
        blocks = [(signed.signatures[i], " ".join(tree_text(signed.element(i)).split())[:100])
                  for i in outermost_dropped(signed, model.boilerplate, content, rare)]
    page.signed = SignedTree()
    page._cleaned = "cleaned"
    if mode == "content":
        # The block walk skips boilerplate subtrees itself: no tree surgery.
        kept: list | None = [] if markdown else None
        seen: list | None = [] if metadata else None
        text, html, comments = select_content(page.root, skip=template, near=near, kept_out=kept,
                                               single=model is None, body_only=body_only, url=page.url,
                                               blocks_out=seen)
        # The site's blocks are judged as though its template were gone: on a
        # page where that keeps nothing (a site's one page of another layout,
        # which the model took nothing of: a docs chapter's 50 words), the
        # page alone is judged, as without a model.
        kept_nothing = model is not None and not found and not text.strip()
        if fallback == "emptied" or kept_nothing:
            alone_kept: list | None = [] if markdown else None
            alone_seen: list | None = [] if metadata else None
            alone = select_content(page.root, kept_out=alone_kept, single=True, body_only=body_only, url=page.url,
                                   blocks_out=alone_seen)
            if alone[0].strip() if kept_nothing else _emptied_content(text, alone[0], _own_heading(page.root,
                                                                                                    template)):
                text, html, comments = alone
                kept, dropped, removed, blocks, seen = alone_kept, [], 0, [], alone_seen
                title = page_title(page.root, page.url)
                fallback = fallback or "no_model"
            elif not kept_nothing:  # the model took template only: a page of nav and a line
                fallback = ""
        meta = None
        if metadata:  # before Markdown's content_tree prunes the tree it reads (its <head> too)
            meta = _guarded(page, lambda: page_metadata(page.root, page.url, text, meta_template if dropped else set(),
                                                        model.metadata_hints if model is not None else None,
                                                        blocks=seen, read=read_of(page), languages=languages))
        md = ""
        if kept is not None:
            links = absolute_links(page.root, page.url)  # before content_tree prunes the <head>
            md = tree_markdown(content_tree(page.root, set(kept), set(dropped), _is_hidden), links)
        return CleanResult(text, html if want_html else "", removed, list(page.notes), comments,
                           removed_blocks=blocks, markdown=md, title=title, fallback=fallback, model_share=share,
                           model_chars=matched, metadata=meta)
    def render(root: etree._Element = page.root) -> tuple[str, str, str]:
        html = etree.tostring(root, method="html", encoding="unicode") if want_html else ""
        text = tree_text(root)
        if "\u00b6" in text or "\U0001f517" in text:  # headings' permalinks ("Installation¶"), as content mode
            text = _PERMALINK_END.sub("", text)
        return text, html, tree_markdown(root, absolute_links(root, page.url)) if markdown else ""

    hints = model.metadata_hints if model is not None else None
    candidates = _guarded(page, lambda: page_candidates(page.root, page.url, meta_template, read=read_of(page),
                                                        learned=hints.inside() if hints else None)
                          ) if metadata else None
    written = None
    if addresses is not None:
        # The subtrees are unlinked only while the page is written (C, no
        # element proxies), and the tree comes back as it was.
        assert _speedups is not None  # addresses come from the compiled walk
        written = _speedups.without_nodes(page.root, addresses, render)
        if written is None:  # control characters beside a subtree: as below
            dropped = [signed.element(i) for i in found]
    if written is None:
        written = render(_without(page.root, dropped) if dropped else page.root)
    text, html, md = written
    meta = None
    if candidates is not None:
        meta = _guarded(page, lambda: page_metadata(page.root, page.url, text, candidates=candidates,
                                                    hints=model.metadata_hints if model is not None else None,
                                                    languages=languages))
    return CleanResult(text, html, removed, list(page.notes), removed_blocks=blocks, markdown=md, title=title,
                       fallback=fallback, model_share=share, model_chars=matched, metadata=meta)


def _guarded(page: Page, read: Callable[[], Any]) -> Any:
    """``read()``, the page's metadata; a fault there (a bug on an odd page)
    costs the metadata (None, the note ``metadata-failed`` and a WARNING),
    never the page's clean text."""
    try:
        return read()
    except Exception:
        logger.warning("deboiler: reading the metadata of %s failed", page.url or "a page", exc_info=True)
        page.notes.append("metadata-failed")
        return None


def _without(root: etree._Element, dropped: list[etree._Element]) -> etree._Element:
    """A copy of the tree at ``root`` with the subtrees ``dropped`` (none
    inside another) detached, their tails kept in place (``_text.drop``):
    the caller's Page keeps its whole tree, to be cleaned again, as the
    compiled path (``_speedups.without_nodes``) leaves it."""
    paths = []
    for el in dropped:  # child indexes from the root, found before the copy
        path = []
        parent = el.getparent()
        while parent is not None:
            path.append(parent.index(el))
            el, parent = parent, parent.getparent()
        paths.append(path[::-1])
    copy = deepcopy(root)
    found = []
    for path in paths:
        el = copy
        for i in path:
            el = el[i]
        found.append(el)
    for el in found:
        _drop(el)
    return copy


def _emptied_content(with_model: str, alone: str, own_heading: bool) -> bool:
    """Content mode, a page the model would empty: whether the model ate
    its content (the page's text extracted alone is more than twice the
    text left with the model: session-id copies of one article kept the
    session line) rather than the page being template but for a line (a
    docs hub page of a sidebar and "Start with the guide": both give that
    line, and the page is ``cleaned``). ``own_heading``: the model left the
    page an ``<h1>`` of its own, so what it took is the site's however long
    (a shop's policies on every page, 14,000 words beside a product's 150)."""
    return len(alone) > 2 * len(with_model) and not own_heading


def _own_heading(root: etree._Element, template: set) -> bool:
    """Whether an ``<h1>`` of the page's stands outside ``template`` (the
    subtrees the model takes for template) and says something."""
    if not template:
        return False
    for h1 in root.iter("h1"):
        if not "".join(h1.itertext()).strip():
            continue
        el: etree._Element | None = h1
        while el is not None and el not in template:
            el = el.getparent()
        if el is None:
            return True
    return False


def read_of(page: Page) -> PageRead:
    """The page's metadata read whatever its template, read once a parse."""
    if page.meta_read is None:
        page.meta_read = read_page(page.root, page.url)
    return page.meta_read


def summary_of(page: Page) -> dict:
    """The page's metadata summary for its site's fit (``page_summary``)."""
    return page_summary(page.root, page.url, read=read_of(page))
