"""Dates written on pages, read as ISO 8601 days, for ``_metadata``.

Our own small reader rather than a general date parser (dateparser, or
htmldate's internals, which are not its public API): a byline's date comes
in a handful of shapes (``2024-03-05``, ``05.03.2024``, ``March 5, 2024``,
``5 de marzo de 2024``, ``2024年3月5日``), and reading only those is fast
(microseconds a string) and never guesses a date out of a price or a phone
number. Month names come in the languages most of the web is written in;
a date in any other is still read where it is written with digits.
htmldate reads the page as a whole where this finds nothing
(``_metadata``).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from functools import lru_cache

__all__ = ["iso_day", "find_days", "url_day", "yearless_date", "YEAR_RANGE"]

#: Years a page's own date can have: older ones are history it tells
#: ("founded in 1887"), later ones are not dates at all.
YEAR_RANGE = (1995, date.today().year + 1)

#: Month names, January first, in the languages most pages are written in;
#: their first three letters are read too ("Sep", "déc"), and accents are
#: ignored ("fevrier", "février").
_MONTH_NAMES = {
    "en": "january february march april may june july august september october november december",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
    "da": "januar februar marts april maj juni juli august september oktober november december",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
    "pl2": "styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień",
    "cs": "ledna února března dubna května června července srpna září října listopadu prosince",
    "ro": "ianuarie februarie martie aprilie mai iunie iulie august septembrie octombrie noiembrie decembrie",
    "tr": "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
    "fi": "tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta "
          "syyskuuta lokakuuta marraskuuta joulukuuta",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "ru2": "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    "uk": "січня лютого березня квітня травня червня липня серпня вересня жовтня листопада грудня",
    "el": "ιανουαρίου φεβρουαρίου μαρτίου απριλίου μαΐου ιουνίου ιουλίου αυγούστου σεπτεμβρίου "
          "οκτωβρίου νοεμβρίου δεκεμβρίου",
    "id": "januari februari maret april mei juni juli agustus september oktober november desember",
    "hu": "január február március április május június július augusztus szeptember október november december",
}
#: Short forms that are not a name's first three letters.
_MONTH_EXTRA = {"sept": 9, "june": 6, "july": 7, "mrz": 3, "mär": 3, "avr": 4, "juil": 7, "févr": 2,
                "janv": 1, "déc": 12, "okt": 10, "dez": 12, "mei": 5, "mrt": 3, "ago": 8, "dic": 12,
                "set": 9, "out": 10, "fev": 2, "abr": 4}


_MARKS = re.compile("[\u0300-\u036f]")


def _fold(text: str) -> str:
    """Lower case without accents ("Février" and "fevrier" agree)."""
    text = text.lower()
    return text if text.isascii() else _MARKS.sub("", unicodedata.normalize("NFD", text))


def _month_table() -> dict[str, int]:
    table: dict[str, int] = {}
    for names in _MONTH_NAMES.values():
        for i, name in enumerate(names.split(), 1):
            for form in (name, name[:3]):
                table.setdefault(_fold(form), i)
    for form, i in _MONTH_EXTRA.items():
        table.setdefault(_fold(form), i)
    # Three-letter forms that are words of their own in another language
    # and no month there ("mar" is the sea in Spanish, but March in most):
    # kept, as a day and a year must stand beside them.
    return table


_MONTHS = _month_table()
_MONTH = "(" + "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|e|º|°|\.)?"
_YEAR = r"(\d{4})"
#: Any word where a month name may stand in the shape that opens with it
#: (``_PATTERNS``' "mdy"), the month table asked after the match: the
#: alternation of the 312 names, tried at each position, took twice as
#: long. The same matches: a match of a word that is no month spans only
#: that word, digits, a day's suffix and spaces, where no match of a name
#: can start (a name follows no letter or digit).
_WORD = r"([^\W\d_]{3,})\.?"
#: Shapes of a date, each with the order of its groups.
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\d.])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d])"), "ymd"),
    (re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})"), "ymd"),
    (re.compile(r"(?<![\w.])" + _DAY + r"\s*(?:de\s+|of\s+)?" + r"(?<!\w)" + _MONTH + r"(?!\w)"
                + r",?\s*(?:de\s+|del\s+)?" + _YEAR + r"(?!\d)"), "dmy"),
    (re.compile(r"(?<!\w)" + _WORD + r"(?!\w)\s*" + _DAY + r",?\s*" + _YEAR + r"(?!\d)"), "mdy"),
    (re.compile(r"(?<![\d.])(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?![\d])"), "num"),
]


def _day(y: int, m: int, d: int) -> str | None:
    """``YYYY-MM-DD`` of a valid date in ``YEAR_RANGE``, else None."""
    if not (YEAR_RANGE[0] <= y <= YEAR_RANGE[1]):
        return None
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


_YEARLESS = re.compile(r"^(?:\w+,?\s+)?(?:" + _MONTH + r"\s*" + _DAY + r"|" + _DAY + r"\s*(?:de\s+)?" + _MONTH
                       + r")(?:\s*,?\s*\d{2,4})?$")


def yearless_date(text: str) -> bool:
    """Whether ``text`` is a date and nothing more, with or without its
    year ("Sep 16", "16. September", "Monday, Jun 2")."""
    return bool(_YEARLESS.match(_fold(text.strip())))


#: A year a date may hold; not preceded by a digit either (tested by hand:
#: a lookbehind here tripled the time of the scan, most of ``find_days``'
#: on a long text).
_YEAR_AT = re.compile(r"(?:19|20)\d{2}(?!\d)")
#: Characters on either side of a year that a date around it spans.
_SPAN = 40
#: Texts up to this long are remembered with their days (``find_days``):
#: a site's bylines and date boxes repeat from page to page (half the
#: calls on a crawl's pages were repeats).
_MEMO_CHARS = 400


def find_days(text: str, month_first: bool = False, limit: int = 20) -> list[tuple[int, str]]:
    """(position, ``YYYY-MM-DD``) of each date written in ``text``, in the
    order they stand (at most ``limit``). ``month_first``: read a numeric
    date whose day and month could be either way (``03/05/2024``) month
    first, as American pages write it; day first otherwise.

    Every shape holds a four-digit year: the shapes are tried only on the
    stretch around each (a search of the whole text for every shape was
    most of the time of reading a page's metadata)."""
    if not text:
        return []
    if len(text) > _MEMO_CHARS:
        return _find_days(text, month_first, limit)
    return list(_short_days(text, month_first, limit))


@lru_cache(maxsize=8192)
def _short_days(text: str, month_first: bool, limit: int) -> tuple[tuple[int, str], ...]:
    return tuple(_find_days(text, month_first, limit))


def _find_days(text: str, month_first: bool, limit: int) -> list[tuple[int, str]]:
    found: dict[int, str] = {}
    end = -1
    for y in _YEAR_AT.finditer(text):
        start = y.start()
        if start and text[start - 1].isdecimal():  # (``\d`` is the decimal digits)
            continue
        if y.end() + 12 <= end:  # its date is inside the stretch read
            continue
        lo = max(0, start - _SPAN)
        end = y.end() + _SPAN
        window = _fold(text[lo:end])  # positions are the folded text's: only their order matters
        for pattern, order in _PATTERNS:
            for m in pattern.finditer(window):
                if lo + m.start() in found or (order == "mdy" and m.group(1) not in _MONTHS):
                    continue
                day = _read(m.groups(), order, month_first)
                if day:
                    found[lo + m.start()] = day
        if len(found) >= limit:
            break
    return sorted(found.items())[:limit]


def _read(g: tuple, order: str, month_first: bool) -> str | None:
    if order == "ymd":
        return _day(int(g[0]), int(g[1]), int(g[2]))
    if order == "dmy":
        return _day(int(g[2]), _MONTHS[g[1]], int(g[0]))
    if order == "mdy":
        return _day(int(g[2]), _MONTHS[g[0]], int(g[1]))
    a, b, y = int(g[0]), int(g[2]), int(g[3])
    if a > 12 or (not month_first and b <= 12):
        return _day(y, b, a)
    return _day(y, a, b)


#: A date written year first with the month's name: Highwire's and PubMed's
#: ``citation_publication_date`` ("2023 Jan 7"), read in ``iso_day`` only
#: (a page's text writes a year first before other things).
_YEAR_FIRST = re.compile(r"(\d{4})\s+" + _MONTH + r"\s+(\d{1,2})$")


def iso_day(value: str, month_first: bool = False) -> str | None:
    """The day a machine-readable date states (``2024-03-05T10:00:00+01:00``
    is the 5th: the day where it was written, not in UTC), or the first
    date written in a short text; None if there is none."""
    if not value:
        return None
    value = value.strip()
    if len(value) >= 10 and value[4] == "-" and value[7] == "-" and value[:4].isdigit():
        day = _day_of_iso(value[:10])
        if day:
            return day
    if value.isdigit() and len(value) in (10, 13):  # a Unix timestamp (seconds or ms)
        return None  # no time zone: the day is a guess
    m = _YEAR_FIRST.match(_fold(value))
    if m and m.group(2) in _MONTHS:
        return _day(int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3)))
    found = find_days(value[:200], month_first, limit=1)
    return found[0][1] if found else None


def _day_of_iso(text: str) -> str | None:
    try:
        return _day(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return None


_URL_DAY = re.compile(r"/((?:19|20)\d{2})([/-]?)(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])(?!\d)")


def url_day(url: str) -> str | None:
    """The day a URL's path states (``/2024/03/05/slug``), or None."""
    m = _URL_DAY.search(url or "")
    return _day(int(m.group(1)), int(m.group(3)), int(m.group(4))) if m else None
