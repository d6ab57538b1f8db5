"""What a page offers for each metadata field (``Candidate``,
``PageCandidates``) and where a site keeps them (``MetadataHints``): the
data ``_candidates`` reads and ``_metadata`` chooses and learns from. No
imports of the rest: a ``SiteModel`` holds its hints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._dates import find_days
from ._meta_text import _fold

#: A page's days are read in this much of its visible text (the page's
#: own date stands near its top).
SHOWN_CHARS = 30_000
#: The fields of ``page_metadata``, in order.
FIELDS = ("author", "published", "modified", "language", "site_name", "canonical_url", "description", "image")


@dataclass(frozen=True)
class Candidate:
    """One value a page offers for a field, and where: ``source`` is the
    kind of place (``SOURCES``), ``key`` the place itself (a structured-data
    field, or an element path for the page's own elements), which per-site
    learning compares across pages."""

    value: str
    source: str
    key: str
    #: Position among the page's candidate elements (-1: not an element).
    order: int = -1
    #: "comment" inside readers' comments, "box" inside a box of other
    #: pages' items (related posts, a sidebar): not the page's own value
    #: unless the site says so; "" elsewhere.
    aside: str = ""


#: Kinds of source, most trusted first where a page has no hints.
SOURCES = ("ld", "meta", "md-meta", "md", "text", "dom", "time", "near", "url", "ld-list", "ld-org", "site", "ld-page")


@dataclass
class PageCandidates:
    """All a page offers, read once (``page_candidates``): what
    ``page_metadata`` chooses from and ``learn_hints`` learns from."""

    url: str
    author: list[Candidate] = field(default_factory=list)
    published: list[Candidate] = field(default_factory=list)
    modified: list[Candidate] = field(default_factory=list)
    #: site_name, canonical_url, description, image, declared language.
    plain: dict[str, str] = field(default_factory=dict)
    #: The page's visible text outside the template (``shown_days`` and
    #: ``shown_text`` read it when asked: most pages' choices never do).
    shown: str = ""
    #: The visible text, for the language.
    text: str = ""
    #: Read numeric dates month first (an American page).
    month_first: bool = False
    #: Positions of the ``<h2>`` and ``<h3>`` after the headline.
    headings: list[int] = field(default_factory=list)
    #: Author candidates inside the template: a one-author site's byline
    #: is the same on every page (``_choose_author`` takes one just below
    #: the headline).
    shared_author: list[Candidate] = field(default_factory=list)

    _days: set[str] | None = field(default=None, repr=False)
    _folded: str | None = field(default=None, repr=False)

    @property
    def shown_days(self) -> set[str]:
        """Days the page's visible text (outside the template) writes."""
        if self._days is None:
            self._days = {day for _, day in find_days(self.shown[:SHOWN_CHARS], self.month_first, limit=200)}
        return self._days

    @property
    def shown_text(self) -> str:
        """The visible text outside the template, case and space folded."""
        if self._folded is None:
            self._folded = _fold(self.shown)
        return self._folded

    def summary(self) -> dict[str, list[list[str]]]:
        """What ``learn_hints`` needs of this page, as plain JSON (sorted
        [key, value, source] triples a field): small enough to travel with
        a page's signatures to where its site's model is fitted."""
        return {f: sorted([c.key, c.value, c.source] for c in getattr(self, f) if c.source != "near")
                for f in _LEARNED}


# Structured data -----------------------------------------------------------

#: The fields learned per site.
_LEARNED = ("author", "published", "modified")


#: The format of ``MetadataHints.to_json``.
HINTS_VERSION = 1


@dataclass
class MetadataHints:
    """Where one site keeps each field: the candidate keys
    (``Candidate.key``) that gave one value a page on its pages, best
    first, and keys that gave several (boxes of other pages' items), which
    are never used alone. Plain data: ``to_json`` is a deterministic dict
    for the signature file."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    avoid: dict[str, list[str]] = field(default_factory=dict)
    pages: int = 0
    #: The learned author keys whose names differ from page to page (a
    #: question's asker; not a one-author blog's byline): read inside the
    #: template too (``inside``). Optional in the file: older ones lack it.
    varied: list[str] = field(default_factory=list)

    def inside(self) -> dict[str, list[str]]:
        """The keys of each field read inside the template
        (``_bylines.place_elements``): the learned dates' places, and the
        authors' that vary."""
        return {"published": self.fields.get("published", []), "modified": self.fields.get("modified", []),
                "author": self.varied}

    def to_json(self) -> dict:
        return {
            "version": HINTS_VERSION,
            "pages": self.pages,
            "fields": {f: list(v) for f, v in sorted(self.fields.items()) if v},
            "avoid": {f: sorted(v) for f, v in sorted(self.avoid.items()) if v},
            **({"varied": sorted(self.varied)} if self.varied else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping) -> "MetadataHints":
        """Read ``to_json``'s dict; raises ValueError on anything else."""
        if not isinstance(data, Mapping) or data.get("version") != HINTS_VERSION:
            raise ValueError("not metadata hints of this version")
        out = cls(pages=int(data.get("pages") or 0))
        for name in ("fields", "avoid"):
            part = data.get(name) or {}
            if not isinstance(part, Mapping):
                raise ValueError(f"metadata hints: {name} is not a mapping")
            for f, keys in part.items():
                if f not in _LEARNED or not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                    raise ValueError(f"metadata hints: bad {name} entry {f!r}")
                getattr(out, name)[f] = list(keys)
        varied = data.get("varied") or []
        if not isinstance(varied, list) or not all(isinstance(k, str) for k in varied):
            raise ValueError("metadata hints: bad varied entry")
        out.varied = list(varied)
        return out

    def __bool__(self) -> bool:
        return any(self.fields.values()) or any(self.avoid.values())
