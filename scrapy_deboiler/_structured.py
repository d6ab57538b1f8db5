"""Structured data about the page: JSON-LD, microdata and ``<meta>``
(Open Graph, Dublin Core, ``citation_*``, ``parsely-*``), read on the tree
the page already has (see ``_metadata`` for why not extruct)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any


from ._dates import iso_day
from ._title import _host_names, _is_site, _key
from ._meta_text import _is_url, _text_of, clean_author
from ._meta_types import Candidate, PageCandidates


#: schema.org types whose author and dates are the page's, when the page
#: is one of them.
_ARTICLE_TYPES = frozenset(
    """article newsarticle blogposting report scholarlyarticle techarticle analysisnewsarticle
    opinionnewsarticle reviewnewsarticle backgroundnewsarticle reportagenewsarticle livebligposting
    liveblogposting socialmediaposting discussionforumposting posting medicalscholarlyarticle
    satiricalarticle advertisercontentarticle askpublicnewsarticle creativework recipe howto
    videoobject podcastepisode question qapage newsletter jobposting""".split())
#: Types of the page as a whole: their dates are the CMS's, given only
#: where the page shows them.
_PAGE_TYPES = frozenset(
    """webpage itempage aboutpage collectionpage faqpage profilepage searchresultspage
    checkoutpage contactpage medicalwebpage realestatelisting""".split())
#: Types that name the site (``site_name``).
_SITE_TYPES = frozenset(("website", "organization", "newsmediaorganization", "corporation", "localbusiness"))

#: ``<meta>`` names (name, property or itemprop, lower case) of each field.
_META = {
    "published": (
        "article:published_time", "og:article:published_time", "article:published", "datepublished",
        "og:published_time", "published_time", "publish-date", "publish_date", "publishdate",
        "published-date", "publication_date", "pubdate", "date", "dc.date", "dc.date.issued",
        "dc.date.created", "dcterms.date", "dcterms.created", "dcterms.issued", "citation_publication_date",
        "citation_date", "citation_online_date", "parsely-pub-date", "sailthru.date", "article.published",
        "article_date_original", "originalpublicationdate", "bt:pubdate", "pub_date", "datecreated",
        "rnews:datepublished", "displaydate", "release_date", "og:release_date", "created", "published",
        "ms.date",
    ),
    "modified": (
        "article:modified_time", "og:article:modified_time", "og:updated_time", "article:modified",
        "datemodified", "modified_time", "last-modified", "lastmod", "dc.date.modified",
        "dcterms.modified", "revised", "updated_time", "article.updated", "updated_at",
    ),
    "author": (
        "author", "article:author", "og:article:author", "dc.creator", "dcterms.creator",
        "citation_author", "parsely-author", "sailthru.author", "byl", "book:author", "creator",
        "cxenseparse:author", "article.author", "dc.contributor",
    ),
    "description": ("og:description", "description", "twitter:description", "dc.description"),
    "image": ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"),
    "site_name": ("og:site_name", "application-name", "apple-mobile-web-app-title"),
    "language": ("content-language", "og:locale", "language", "dc.language", "inlanguage"),
    "canonical_url": ("og:url",),
    "og_type": ("og:type",),
}
_META_FIELD = {name: f for f, names in _META.items() for name in names}


def _types(node: Mapping) -> set[str]:
    """A JSON-LD node's types, lower case, without their vocabulary
    ("http://schema.org/NewsArticle" -> "newsarticle")."""
    t = node.get("@type")
    names = t if isinstance(t, list) else [t]
    return {str(n).rsplit("/", 1)[-1].rsplit(":", 1)[-1].lower() for n in names if isinstance(n, str)}


_LOOSE_COMMAS = re.compile(r",\s*([}\]])")


def _json_items(text: str) -> Any:
    """A JSON-LD script's data, or None. Pages wrap it in comments or CDATA,
    leave commas before a closing bracket and raw line breaks in strings:
    read past those, nothing more."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text, strict=False)
    except RecursionError:  # nested past the parser's depth: no one's metadata
        return None
    except ValueError:
        pass
    text = text.replace("<!--", "").replace("-->", "").replace("<![CDATA[", "").replace("]]>", "")
    text = _LOOSE_COMMAS.sub(r"\1", text.strip().rstrip(";"))
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None


def _ld_nodes(scripts: list[str]) -> list[dict]:
    """Every JSON object with a type in the page's JSON-LD scripts, in
    order (walked without recursion)."""
    nodes: list[dict] = []
    for text in scripts:
        data = _json_items(text)
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                if "@type" in item:
                    nodes.append(item)
                children = [v for k, v in item.items() if isinstance(v, (list, dict)) and k not in ("author",)]
                stack.extend(reversed(children))
    return nodes


#: Values of one JSON-LD author looked at, at most (a list of a million
#: empty lists is no author).
MAX_AUTHOR_VALUES = 1000


def _ld_names(value: Any, index: Mapping[str, dict]) -> tuple[list[str], bool]:
    """Names of a JSON-LD author (a name, a Person, an ``@id`` reference,
    a list of them) and whether any is a Person (not an Organization)."""
    names: list[str] = []
    person = False
    stack = [value]
    looked = 0
    while stack and len(names) < 10 and looked < MAX_AUTHOR_VALUES:
        looked += 1
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(reversed(v))
        elif isinstance(v, str):
            if not _is_url(v):
                names.append(v)
                person = True
        elif isinstance(v, dict):
            ref = v.get("@id")
            if "name" not in v and isinstance(ref, str) and ref in index:
                v = index[ref]
            name = v.get("name")
            if isinstance(name, list):
                name = next((n for n in name if isinstance(n, str)), None)
            if isinstance(name, str) and name.strip() and not _is_url(name):
                names.append(name)
                types = _types(v)
                person = person or not types or "person" in types
    return names, person



def _site_names(url: str, metas: Mapping[str, list[str]]) -> list[str]:
    """Keys of the site's own name (``_title._key``): its host's and its
    ``og:site_name``'s. An author of that name is the site, not a person."""
    names = _host_names(url)
    for n in ("og:site_name", "application-name"):
        for v in metas.get(n, ())[:1]:
            names.append(_key(v))
    return [n for n in names if n]


def _read_ld(page: PageCandidates, scripts: list[str], names: list[str]) -> None:
    """Candidates from the page's JSON-LD: the author and dates of its
    article items (``ld``; ``ld-list`` where it holds several articles of
    different dates, a listing), the dates of the page item (``ld-page``),
    the site's name, the description and image of the main item."""
    nodes = _ld_nodes(scripts)
    if not nodes:
        return
    index = {n["@id"]: n for n in nodes if isinstance(n.get("@id"), str) and len(n) > 2}
    plain = page.plain
    plain["ld_types"] = " ".join(sorted({t for n in nodes for t in _types(n)}))
    articles = [n for n in nodes if _types(n) & _ARTICLE_TYPES]
    listing = len({str(n.get("datePublished") or n.get("headline") or n.get("@id") or id(n)) for n in articles}) > 2
    for node in nodes:
        types = _types(node)
        if types & _ARTICLE_TYPES:
            kind = "ld-list" if listing else "ld"
        elif types & _PAGE_TYPES:
            kind = "ld-page"
        else:
            if types & _SITE_TYPES and "ld_site_name" not in plain:
                name = _text_of(node.get("name"))
                if name and "website" in types:
                    plain["ld_site_name"] = name
            continue
        tname = sorted(types & (_ARTICLE_TYPES | _PAGE_TYPES))[0]
        for prop, f in (("datePublished", "published"), ("dateCreated", "published"), ("uploadDate", "published"),
                        ("datePosted", "published"), ("dateModified", "modified")):
            v = node.get(prop)
            day = iso_day(v) if isinstance(v, str) else None
            if day:
                getattr(page, f).append(Candidate(day, kind, f"ld:{tname}.{prop}"))
        if kind != "ld-page":
            found, person = _ld_names(node.get("author") or node.get("creator"), index)
            cleaned = [c for c in map(clean_author, found) if c]
            if cleaned:
                value = ", ".join(dict.fromkeys(cleaned))
                source = "site" if _is_site(value, names) else kind if person else "ld-org"
                page.author.append(Candidate(value, source, f"ld:{tname}.author" + ("" if person else ".org")))
        for prop, f in (("description", "ld_description"), ("image", "ld_image"), ("inLanguage", "ld_language")):
            v = _text_of(node.get(prop))
            if v and f not in plain:
                plain[f] = v
        publisher = node.get("publisher")
        if isinstance(publisher, dict) and "ld_publisher" not in plain:
            if "name" not in publisher and publisher.get("@id") in index:
                publisher = index[publisher["@id"]]
            name = _text_of(publisher.get("name"))
            if name:
                plain["ld_publisher"] = name


#: The first letters of ``_LEAD_START``'s words (a cheap test first).
