"""What names and dates look like in a page's text: bylines cleaned to a
name (``clean_author``), name-shaped strings, folding for comparison."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any


from ._dates import find_days, yearless_date


def _is_url(value: str) -> bool:
    v = value.strip().lower()
    return v.startswith(("http://", "https://", "//", "www.", "/"))


def _text_of(value: Any) -> str | None:
    """A JSON-LD value as one string (the first of a list, an object's
    ``url`` or ``@id`` for an image)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("url") or value.get("contentUrl") or value.get("@id")
        if isinstance(value, list):
            value = value[0] if value else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _norm(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


# Author names ----------------------------------------------------------------

#: Words before a name in a byline, in the languages most pages use
#: ("By", "von", "par", "Autor:"): cut off, as a name is what is asked.
_LEAD_WORDS = (r"(?:(?:written|posted|published|reviewed|edited|updated|authored|compiled|reported|story|"
               r"photos?|text|words|fact[- ]checked|medically reviewed|escrito|publicado|geschrieben|écrit|"
               r"scritto|geschreven|skrevet|napisany)\s+)?"
               r"(?:by|von|par|por|door|av|af|przez|от|tarafından|da|di|via)(?![\w])")
_LABEL_WORDS = (r"(?:authors?|autor(?:es|in|a)?|auteurs?|autore|autori|författare|forfatter|tekijä|yazar|"
                r"автор|作者|著者|저자|writer|byline|redakteur|redacteur|redactor|redacción)(?![\w])")
_BYLINE_LEAD = re.compile(r"^\s*(?:" + _LEAD_WORDS + r"|" + _LABEL_WORDS + r")\s*[:：\-–]?\s*", re.I)
#: A byline's own text starts with one of these ("By", "Written by",
#: "Author:"): the element is a byline, whatever its class says. "da" and
#: "di" (Italian, Portuguese) begin sentences too: not here.
_LEAD_START = re.compile(
    r"^\s*(?:(?:written|posted|published|authored|escrito|publicado|geschrieben|écrit|scritto)\s+)?"
    r"(?:by|von|par|por|door|av|af|przez|от)\s*:?(?:\s|$)|^\s*" + _LABEL_WORDS + r"\s*[:：]", re.I)
#: A byline word inside a short text, the name after it ("Guide by Will
#: Judd", "Article by: Cara Dumaplin", "Jun 2 Written By Polly Barks").
_LEAD_INSIDE = re.compile(r"(?:^|(?<=\s))(?:by|von|par|por|door|przez|от|via)\s*:?\s+(?=\S)|"
                          + _LABEL_WORDS + r"\s*[:：]\s*",
                          re.I)
#: Where a byline's name ends: a separator, a line break, "|".
_NAME_END = re.compile(r"\s*(?:\||•|·|—|–|»|«|›|\s-\s|\n|\bon\b\s+\w+\s+\d|\bupdated\b|\bpublished\b|\bposted\b|"
                       r"\b(?:publiée?|mise? à jour|veröffentlicht|aktualisiert|publicad[oa]|actualizad[oa]|"
                       r"pubblicat[oa]|aggiornat[oa]|gepubliceerd|bijgewerkt|opublikowan[oy]|publicerad|udgivet|"
                       r"publisert)\b|\b(?:at|um|à|alle)\s+\d|\d{1,2}:\d{2})\s*",
                       re.I)
_DIGIT = re.compile(r"\d")
_URLISH = re.compile(r"https?://|www\.|@\w+\.\w|\.(?:com|org|net)\b|[§{}<>=]", re.I)
#: Values that name no one.
_NO_NAME = frozenset(("undefined", "null", "none", "unknown", "n/a", "author", "by", "admin admin", "false",
                      "home", "startseite", "accueil", "inicio"))  # a breadcrumb's first step ("Home » Services")
#: A name longer than this (characters, words) is a sentence, not a name.
MAX_NAME_CHARS = 80
MAX_NAME_WORDS = 10


@lru_cache(maxsize=8192)
def clean_author(text: str | None) -> str | None:
    """The name in a byline ("By Jane Doe | March 3, 2024" -> "Jane
    Doe"), or None where it holds none (too long, a URL, a date only).
    What follows a byline word ("Guide by", "This post was written by")
    is the name; a byline of several lines ("Sep 16" / "Written By" /
    "Jane Doe") gives its first line that is one. Remembered: a site's
    pages repeat their author links and bylines (58 % of the calls on a
    crawl's pages were repeats)."""
    if not text:
        return None
    text = html.unescape(text)
    lead = _LEAD_INSIDE.search(text)
    if lead:
        text = text[lead.end():]
    for line in text.split("\n"):
        name = _clean_line(_norm(line))
        if name and not yearless_date(name):
            return name
    return None


def _clean_line(text: str) -> str | None:
    for _ in range(2):
        text = _BYLINE_LEAD.sub("", text, count=1)
    days = find_days(text, limit=1)
    if days:
        text = text[:days[0][0]] if days[0][0] > 0 else _YEARLESS.sub("", text[10:], count=1)
        # the word that led to the date ("Jane Doe on", "David at", "Hans am")
        text = _BEFORE_DATE.sub("", text)
    text = _NAME_END.split(text, 1)[0]
    text = text.strip(" \t,;:|·•-–—/()[]")
    if (not text or len(text) > MAX_NAME_CHARS or len(text.split()) > MAX_NAME_WORDS
            or _URLISH.search(text) or len(_DIGIT.findall(text)) > 2 or not any(c.isalpha() for c in text)
            or text.lower() in _NO_NAME or not _BYLINE_LEAD.sub("", text).strip()):
        return None
    return text


_YEARLESS = re.compile(r"^[\d\s,./-]*")
_BEFORE_DATE = re.compile(r"[\s,]+[^\W\d_A-Z]{1,3}[\s,]*$")


#: Short lower-case words inside names ("Ludwig van Beethoven", "Maria da
#: Silva", "Ibn al Arabi") and between them ("Kim and Lee").
_NAME_PARTICLES = frozenset("van von der den de da das do dos di du del della la le bin ibn al el y e zu ter "
                            "and und et i og och en".split())


def name_shaped(text: str) -> bool:
    """Whether ``text`` is written as a name: in a script with capitals,
    each word capitalised but for particles ("van", "de"); "By default,
    all items..." is a sentence that starts like a byline, "Personal
    finance" a category. Scripts without capitals pass."""
    words = [w for w in re.split(r"[\s,&/]+", text) if any(c.isalpha() for c in w)]
    cased = [w for w in words if any(c.isupper() or c.islower() for c in w)]
    if not cased:
        return True
    for w in cased:
        first = next(c for c in w if c.isalpha())
        if not first.isupper() and w.lower().strip(".") not in _NAME_PARTICLES:
            return False
    return True


def _first_last(name: str) -> str:
    """"Roy, Aniruddha" (citation metas) as "Aniruddha Roy"."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and all(parts) and len(parts[0].split()) <= 3 and len(parts[1].split()) <= 3:
        return f"{parts[1]} {parts[0]}"
    return name


# The page's own elements -----------------------------------------------------------

#: Words in a class or id that mark an author ("authoring", "authority"
#: do not), a date.
