"""Page metadata (author, dates, language, site name, canonical URL,
description, image), learned per site where a site model exists.

No Scrapy here: ``page_metadata`` takes a parsed page (``Page.root``), its
URL and, where the caller has them, its clean text, the subtrees its site
model takes for template (``_clean.boilerplate_of``) and the site's
``MetadataHints`` (``learn_hints``).

Where a value comes from, most trusted first:

* what the site was learned to keep it in (``MetadataHints``): the element
  path, or the structured-data field, that gave one value a page, different
  from page to page, on the site's pages. A related-posts box repeats dates
  and authors of other pages several times a page; a byline holds one;
* structured data: JSON-LD, microdata and Open Graph / ``<meta>``. Read
  here rather than with extruct (``benchmarks/metadata_eval.py --extruct``
  compares them): extruct brings rdflib, pyRdfa3 and mf2py (0.4 s to
  import, for RDFa and microformats we do not read); its Open Graph reader
  wants lxml.html's tree, a second parse of each page (``extruct.extract``
  took 5 ms a page with its parse, our reading of the same data under
  1 ms on the tree we have); one malformed script makes it raise for the
  page; and the plain metas we need (``author``, ``citation_*``,
  ``parsely-*``) are not its business. Its JSON-LD dates and ours agree
  on 236 of 258 pages; where they differ ours read scripts it could not
  (comments, trailing commas) or ``dateCreated``;
* the page's own byline: elements whose class, id, ``rel`` or
  ``itemprop`` say author or date, outside the template, comments and
  boxes of other pages, the first after the headline;
* for the publication date, a date written just under the headline,
  the date in the URL; htmldate (``htmldate.find_date``) only when asked
  (``page_metadata(htmldate=True)``, see ``_htmldate`` for why not by
  default).

A date is the one the page shows: structured data's date where the page
shows it, else the byline's, else structured data's; a ``WebPage``'s
``datePublished``, which a CMS puts on every page (a shop's product page),
only where the page shows it. On WCXB's pages without a date, htmldate
alone writes one on 47 % (fast mode) to 96 % (its default, trafilatura's);
these rules on 15 %, with more right dates (``benchmarks/metadata_eval.py``):
this is where our rules beat it. Likewise an author is given only where
the page names one outside its template: never the name of a box the site
repeats on every page, a site named as author only on a dated page that
shows the name.

The language is the text's (``_language``), the declared ``lang`` a hint.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date, timedelta
from collections.abc import Iterable, Mapping
from urllib.parse import urljoin

from lxml import etree

from ._candidates import PageRead, page_candidates, page_summary
from ._dates import iso_day, url_day
from ._language import LanguageBatch, page_language
from ._meta_text import _fold, _norm, clean_author, name_shaped
from ._meta_types import _LEARNED, FIELDS, HINTS_VERSION, SOURCES, Candidate, MetadataHints, PageCandidates
from ._structured import _ARTICLE_TYPES
from ._title import site_of_title

__all__ = [
    "FIELDS",
    "HINTS_VERSION",
    "Candidate",
    "MetadataHints",
    "PageCandidates",
    "clean_author",
    "learn_hints",
    "name_shaped",
    "page_candidates",
    "page_metadata",
    "page_summary",
]

# --- choosing ------------------------------------------------------------------



#: Sources of structured data about the page itself.
_STRUCTURED = ("ld", "meta", "md-meta", "md")
#: Sources of the page's own elements.
_ELEMENT_SOURCES = ("md", "time", "dom", "text")


def _avoided(cands: list[Candidate], hints: MetadataHints | None, f: str) -> set[str]:
    """The keys of ``cands`` the site avoids for ``f``: those it learned to
    avoid, and those whose place is, holds or sits in a place it avoids for
    any field (each post's byline of a forum thread: ``learn_hints``)."""
    if not hints:
        return set()
    own = set(hints.avoid.get(f, ()))
    places = [_place(k) for keys in hints.avoid.values() for k in keys]
    return {c.key for c in cands if c.key in own or any(_related(_place(c.key), p) for p in places)}


def _from_hints(cands: list[Candidate], hints: MetadataHints | None, f: str) -> Candidate | None:
    """The candidate at the first learned key of ``f`` that holds one
    value on this page."""
    if not hints:
        return None
    for key in hints.fields.get(f, ()):
        found = [c for c in cands if c.key == key]
        if found and len({c.value for c in found}) == 1:
            return found[0]
    return None


def _byline(cands: list[Candidate], h1: int, headings: list[int] | None = None) -> Candidate | None:
    """The page's own byline among element candidates: the first after the
    headline (else the last before it) outside boxes of other items and
    comments; failing that, one in a box that holds no other value (a
    byline in a "sidebar" layout). Not one with a heading between it and
    the headline (``headings``): a listing's first item."""
    own = [c for c in cands if c.source in _ELEMENT_SOURCES and not c.aside]
    if not own:
        by_key: dict[str, set[str]] = defaultdict(set)
        for c in cands:
            if c.aside == "box" and c.source in _ELEMENT_SOURCES:
                by_key[c.key].add(c.value)
        own = [c for c in cands if c.aside == "box" and c.source in _ELEMENT_SOURCES and len(by_key[c.key]) == 1]
        if len({c.value for c in own}) != 1:
            return None
    after = [c for c in own if c.order > h1]
    if after:
        first = after[0]
        if h1 >= 0 and headings and any(h1 < h < first.order for h in headings) \
                and len({c.value for c in own if c.key == first.key}) > 1:
            return None  # an item's byline under its own heading, as the next items': a list of posts
        return first
    return own[-1] if own else None


Choice = tuple[str | None, str]


#: A byline on a page without a date is taken only this close after the
#: headline (elements): a name elsewhere on an undated page is a
#: testimonial, a review, an item of a list.
BYLINE_NEAR = 20


def _choose_author(page: PageCandidates, hints: MetadataHints | None, dated: bool = True) -> Choice:
    """(the author, the rule that gave it): the learned place; else
    JSON-LD's person, the byline (on a page with a date, or just below
    its headline: ``BYLINE_NEAR``), a ``<meta>`` author, an organisation
    JSON-LD names as author where the page shows it; the site itself
    named as author ("Acme Team" on acme.com) only on a dated page that
    shows the name (a shop names itself author of every page)."""
    learned = _from_hints(page.author, hints, "author")
    if learned is not None and (learned.source != "site" or (dated and _fold(learned.value) in page.shown_text)):
        return learned.value, "learned"
    avoid = _avoided(page.author + page.shared_author, hints, "author")
    cands = [c for c in page.author if c.key not in avoid]
    h1 = int(page.plain.get("h1", "-1"))
    byline = _byline(cands, h1, page.headings)
    ld = [c for c in cands if c.source == "ld"]
    if ld:
        return ld[0].value, "ld"
    if byline is None and h1 >= 0:
        # A one-author site: its byline, the same on every page, is template.
        near = [c for c in page.shared_author if c.source in _ELEMENT_SOURCES and not c.aside
                and 0 < c.order - h1 <= BYLINE_NEAR and c.key not in avoid]
        if near:
            byline = near[0]
    if byline is not None and (dated or (byline.source in ("dom", "text") and 0 <= byline.order - h1 <= BYLINE_NEAR)):
        return byline.value, "byline:" + byline.source
    first = _first_post(page.author, avoid, h1, page.headings, page.text) if dated else None
    if first is not None:
        return first.value, "first-post"
    for source in ("meta", "ld-org", "site"):
        for c in cands:
            if c.source == source and (source == "meta" or _fold(c.value) in page.shown_text) \
                    and (source != "site" or dated):
                return c.value, source
    return None, ""


#: A structured-data field written this many times on a page is one a post.
_POSTS = 3


def _next_day(day: str, *others: str | None) -> bool:
    """Whether one of ``others`` is the day before or after ``day``."""
    try:
        d = date.fromisoformat(day)
    except ValueError:
        return False
    near = {(d - timedelta(days=1)).isoformat(), (d + timedelta(days=1)).isoformat()}
    return any(o in near for o in others if o)


def _choose_date(page: PageCandidates, hints: MetadataHints | None, f: str) -> Choice:
    """(the date, the rule that gave it): the learned place; else the date
    the page shows of those its structured data states; the byline's;
    structured data's; a date written beside the headline; the URL's; the
    page item's where shown. A page that states no publication date but a
    last change shows that as its date: the publication date is that one
    (unless its structured data states an earlier publication)."""
    cands: list[Candidate] = getattr(page, f)
    learned = _from_hints(cands, hints, f)
    if learned is not None:
        return learned.value, "learned"
    other = page.modified if f == "published" else page.published
    avoid = _avoided(cands + other, hints, f)
    # Days of the places the site avoids (a product's reviews): the date
    # written near the headline is not the page's when it is one of them.
    avoided = {c.value for c in cands if c.key in avoid}
    h1 = int(page.plain.get("h1", "-1"))
    # ... nor one only readers' words under a heading of their own give
    # (a product's "Customer reviews (1)"; a thread's first post follows
    # its headline).
    readers: dict[str, int] = {}  # a day readers' words give: the first place
    for c in cands:
        if c.aside == "comment":
            readers.setdefault(c.value, c.order)
    avoided |= {v for v, at in readers.items() if any(h1 < h < at for h in page.headings)} - {
        c.value for c in cands if c.aside != "comment" and c.source != "near"}
    cands = [c for c in cands if c.key not in avoid and not (c.source == "near" and c.value in avoided)]
    byline = _byline(cands, h1, page.headings)
    structured = [c.value for s in _STRUCTURED for c in cands if c.source == s and not c.aside]
    other_structured = [c.value for s in _STRUCTURED for c in other if c.source == s and not c.aside]
    if byline is not None and byline.value in structured:
        return byline.value, "byline+structured"
    in_url = url_day(page.url) if f == "published" else None
    if structured and _next_day(structured[0], byline.value if byline is not None else None, in_url):
        # A datetime in UTC one day off the day the page writes under its
        # headline (or in its URL): the site's own day is that one.
        local = byline.value if byline is not None and _next_day(structured[0], byline.value) else in_url
        return local, "local-day"
    keys = [c.key for s in _STRUCTURED for c in cands if c.source == s and not c.aside]
    if len(structured) >= _POSTS and keys.count(keys[0]) >= _POSTS:
        # One field a post (a forum thread's): the first is the thread's.
        return structured[0], "first-post"
    if byline is not None and byline.value in other_structured:
        if structured and structured[0] < byline.value:
            # The page shows its last change only, and its structured data
            # states an earlier publication: that is the publication (the
            # shown day stays its ``modified``).
            return structured[0], "structured+shown-change"
        return byline.value, "byline+other"
    shown = [v for v in structured if v in page.shown_days]
    if shown:
        return shown[0], "structured-shown"
    listed = [c.value for c in cands if c.source == "ld-list" and c.value in page.shown_days]
    near = next((c for c in cands if c.source == "near"), None)
    if near is not None and not (near.key == "near-updated" and structured):
        return near.value, "near-first"
    if byline is not None:
        return byline.value, "byline:" + byline.source
    if structured:
        return structured[0], "structured"
    if listed:
        return listed[0], "ld-list-shown"
    if f == "published":
        other_byline = _byline([c for c in other if c.key not in avoid], h1, page.headings)
        if other_byline is not None:
            return other_byline.value, "modified-byline"
    for source in ("near", "url"):
        for c in cands:
            if c.source == source:
                return c.value, source
    for c in cands:
        if c.source == "ld-page" and c.value in page.shown_days:
            return c.value, "ld-page-shown"
    if f == "published":  # a thread's first post's date, under its author's name
        poster = _first_post(page.author, _avoided(page.author + page.shared_author, hints, "author"), h1,
                             page.headings, page.text)
        first = poster and next((c for c in getattr(page, f) if c.key in avoid and not c.aside
                                 and c.source in _MARKED and c.order >= poster.order), None)
        if first:
            return first.value, "first-post"
    return None, ""


#: Sources of a post's byline: its markup says so (not "by ..." text: a
#: shop's list of games by their studios).
_MARKED = ("dom", "md", "time")
#: A thread's posts hold this many words of the page's text each, on average
#: (a topic list's rows, each with a by-line, hold a title and counts).
POST_WORDS = 20


def _first_post(cands: list[Candidate], avoid: set[str], h1: int, headings: list[int],
                text: str) -> Candidate | None:
    """The first post's byline of a thread whose site avoids its posts'
    places (each post's author, ``learn_hints``): the thread's author and
    date, as a reader takes them, where nothing else names them: the first
    after the headline. Not a listing's first item (a heading between it
    and the headline, or short entries: ``POST_WORDS``), nor one in a box
    or readers' comments."""
    posts = [c for c in cands if c.key in avoid and not c.aside and c.order > h1 and c.source in _MARKED]
    if not posts or any(h1 < h < posts[0].order for h in headings) or len(text.split()) < POST_WORDS * len(posts):
        return None
    return posts[0]


def _article_like(page: PageCandidates) -> bool:
    """Whether the page says it is an article (``og:type``, a JSON-LD
    article type)."""
    return (page.plain.get("og_type", "").strip().lower() == "article"
            or bool(set(page.plain.get("ld_types", "").split()) & _ARTICLE_TYPES))


def _htmldate(root: etree._Element, url: str) -> str | None:
    """htmldate's original date of the page (its fast mode), or None.

    Not on by default because on WCXB's dev pages it costs more than it
    gives (``benchmarks/metadata_eval.py --htmldate``): after our rules,
    on the article-like pages where they found nothing, it raised the
    share of right dates from 0.841 to 0.854 and the share of pages
    without a date given one from 0.151 to 0.264; and it parses the page
    a second time (about 13 ms). Alone, it writes a date on 47 % of the
    pages whose gold has none (96 % in its extensive mode)."""
    try:
        from htmldate import find_date
    except ImportError:
        return None
    try:
        found = find_date(etree.tostring(root, encoding="unicode", method="html"), url=url or None,
                          extensive_search=False, original_date=True)
    except Exception:  # htmldate raises on odd pages; the metadata never fails for it
        return None
    return iso_day(found) if found else None


def _absolute(value: str | None, base: str) -> str | None:
    if not value:
        return None
    value = value.strip()
    if not base:
        return value
    try:
        return urljoin(base, value)
    except ValueError:
        return value


def page_metadata(root: etree._Element, url: str = "", text: str | None = None,
                  template: set | frozenset = frozenset(), hints: MetadataHints | None = None,
                  candidates: PageCandidates | None = None, explain: bool = False,
                  htmldate: bool = False, blocks: list | None = None, read: PageRead | None = None,
                  languages: LanguageBatch | None = None) -> dict:
    """The page's metadata: a dict of ``FIELDS``, each a string or None
    where the page does not state it (dates as ``YYYY-MM-DD``, the language
    as a BCP 47 tag, URLs absolute). ``template`` and ``hints`` as in
    ``page_candidates`` and ``learn_hints``; ``candidates``: the page's,
    if already read. ``explain`` adds ``rules``: which rule gave the
    author and each date (for reports). ``htmldate``: where no rule gives
    a publication date and the page reads as an article, ask
    ``htmldate.find_date`` (off by default: see ``_htmldate``); ``root``
    must then still be whole. ``blocks``: the page's text blocks outside
    the template, where the caller has them (content mode). ``languages``:
    the language is left to that batch (``LanguageBatch.run`` writes it
    into the returned dict), for a caller that cleans pages in batches."""
    page = candidates if candidates is not None else page_candidates(
        root, url, template, text, blocks=blocks, read=read, learned=hints.inside() if hints else None)
    if text is not None:
        page.text = text
    plain = page.plain
    base = url
    out: dict[str, str | None] = dict.fromkeys(FIELDS)
    rules: dict[str, str] = {}
    out["published"], rules["published"] = _choose_date(page, hints, "published")
    out["modified"], rules["modified"] = _choose_date(page, hints, "modified")
    out["author"], rules["author"] = _choose_author(page, hints, bool(out["published"] or out["modified"]))
    if htmldate and not out["published"] and _article_like(page):
        out["published"] = _htmldate(root, url)
        rules["published"] = "htmldate" if out["published"] else ""
    if out["published"] and out["modified"] and out["modified"] < out["published"]:
        out["modified"] = None
    declared = plain.get("declared_language") or plain.get("meta_language") or plain.get("ld_language")
    if languages is None:
        out["language"] = page_language(page.text, declared)
    out["site_name"] = _norm(plain.get("site_name") or plain.get("ld_site_name") or plain.get("ld_publisher")
                             or site_of_title(_norm(plain.get("title", "")), url) or "") or None
    out["canonical_url"] = _absolute(plain.get("canonical_url"), base)
    out["description"] = _norm(plain.get("description") or plain.get("ld_description")) or None
    out["image"] = _absolute(plain.get("image") or plain.get("ld_image"), base)
    result = {**out, "rules": rules} if explain else out
    if languages is not None:
        languages.add(result, page.text, declared)
    return result


# --- learning per site ---------------------------------------------------------------

#: A key is learned when it gives one value on at least this share of the
#: pages it appears on ...
ONCE_SHARE = 0.8
#: ... appears on at least this many pages ...
MIN_PAGES = 2
#: ... and, for dates, its values differ between pages on at least this
#: share of them (a date every page shows is the template's).
DISTINCT_SHARE = 0.5
#: A key giving several values, or one value this many times, on at least
#: this share of its pages is a box of other pages' items: avoided.
MANY_TIMES = 3
MANY_SHARE = 0.5


def _rank(source: str) -> int:
    return SOURCES.index(source) if source in SOURCES else len(SOURCES)


def learn_hints(pages: Iterable[PageCandidates | Mapping[str, list]]) -> MetadataHints:
    """Where a site keeps its author and dates, from several of its pages'
    candidates: the keys that hold one value a page (``ONCE_SHARE``) on
    ``MIN_PAGES`` or more pages, values that differ from page to page for
    dates (``DISTINCT_SHARE``), best first (most trusted source, then
    most pages); and the keys that hold several values a page, or one
    value written ``MANY_TIMES`` (``MANY_SHARE`` of their pages: related
    posts, comments), to avoid. ``pages``: their ``PageCandidates`` or
    those's ``summary()``. The order of the pages does not matter."""
    summaries = [p.summary() if isinstance(p, PageCandidates) else p for p in pages]
    hints = MetadataHints(pages=len(summaries))
    for f in _LEARNED:
        per_key: dict[str, list[list[str]]] = defaultdict(list)
        source_of: dict[str, str] = {}
        for summary in summaries:
            here: dict[str, list[str]] = defaultdict(list)
            for key, value, source in summary.get(f, ()):
                if source == "near":  # a rule of the page, not a place
                    continue
                here[key].append(_fold(value) if f == "author" else value)
                source_of[key] = min(source, source_of.get(key, source), key=_rank)
            for key, values in here.items():
                per_key[key].append(values)
        good = []
        avoid = []
        for key, seen in per_key.items():
            once = [v[0] for v in seen if len(set(v)) == 1 and len(v) < MANY_TIMES]
            many = len(seen) - len(once)
            if len(seen) >= MIN_PAGES and many >= MANY_SHARE * len(seen):
                avoid.append(key)
                continue
            if len(seen) < MIN_PAGES or len(once) < ONCE_SHARE * len(seen) or len(once) < MIN_PAGES:
                continue
            distinct = len(set(once))
            if f == "author" and distinct >= 2 and Counter(once).most_common(1)[0][1] < DISTINCT_SHARE * len(once):
                hints.varied.append(key)  # no one name on half its pages
            elif f != "author" and distinct < DISTINCT_SHARE * len(once):
                continue
            good.append((_rank(source_of[key]), -len(once), key))
        hints.fields[f] = [key for _, _, key in sorted(good)]
        hints.avoid[f] = sorted(avoid)
    # A place in, around or at an avoided one is a post's too: a forum's
    # byline gives every post's author ("dom:" avoided), and the one poster
    # whose name is written as a name gave one a page ("text:"), learned as
    # the thread's author.
    avoided = [_place(k) for keys in hints.avoid.values() for k in keys]
    for f, keys in hints.fields.items():
        hints.fields[f] = [k for k in keys if not any(_related(_place(k), a) for a in avoided)]
    hints.varied = sorted(k for k in hints.varied if k in hints.fields["author"])
    return hints


#: Kinds of key that name an element's place ("dom:div.post>p.author");
#: the others name a field of structured data ("meta:author").
_PLACE_KINDS = frozenset(("dom", "text", "time", "md", "a", "by"))


def _place(key: str) -> str:
    """The element path of a candidate's key, "" for structured data."""
    kind, _, path = key.partition(":")
    return path if kind in _PLACE_KINDS else ""


def _related(a: str, b: str) -> bool:
    """Whether two element paths are one, or one holds the other."""
    return bool(a and b) and (a == b or a.startswith(b + ">") or b.startswith(a + ">"))
