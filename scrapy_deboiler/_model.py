"""A per-site boilerplate model: which subtree signatures neighbouring pages
share, and how often."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from hashlib import blake2b
from itertools import chain
from typing import TYPE_CHECKING

from ._meta_types import MetadataHints
from ._signatures import DEFAULT_SCHEME, SignatureScheme, checked

if TYPE_CHECKING:  # _clean imports this module
    from ._clean import Page

__all__ = ["FIT_MIN_PAGES", "FitParams", "SiteModel", "PageSignatures"]

#: The fewest pages a site model is fitted on (the pipeline, the CLI's
#: default ``--min-pages``); a site with fewer is extracted page by page.
#: Content mode, out of fold (docs/measurements.md, "Single pages and small
#: sites"): fitted on 3 or 4 pages a site model beats none (ROUGE-LSum F1
#: +0.038, +0.008); on 2 pages the two are even (+0.001, shingle F1
#: -0.002), and in a crawl such a model is provisional and goes on learning.
FIT_MIN_PAGES = 2

#: A page as the model sees it: its URL and the digests of its text-holding
#: candidate subtrees. Anything iterable of str works.
PageSignatures = tuple[str, Iterable[str]]


@dataclass(frozen=True)
class FitParams:
    """How a site model is fitted. Defaults were chosen on annotated pages
    (docs/measurements.md, "Choosing the defaults")."""

    #: A pair of neighbours sharing more than this share of their signatures
    #: (intersection over union) is near-identical and gives no evidence.
    iou_guard: float = 0.95
    #: Neighbour pairs that must share a signature for it to be boilerplate;
    #: capped at the number of usable pairs so two-page sites still work.
    min_support: int = 2
    #: Each page is compared with this many following pages in URL order.
    window: int = 1
    scheme: SignatureScheme = DEFAULT_SCHEME

    def __post_init__(self) -> None:
        # The ranges a signature file may hold (``from_json``): a model fitted
        # with other values could be saved but never read back.
        values = {"iou_guard": self.iou_guard, "min_support": self.min_support, "window": self.window}
        checked(values, "iou_guard", (int, float), 0, 1)
        checked(values, "min_support", (int,), 1, 10**9)
        checked(values, "window", (int,), 1, 1000)

    def to_json(self) -> dict:
        data = asdict(self)
        data["scheme"] = self.scheme.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict) -> "FitParams":
        return cls(
            iou_guard=float(checked(data, "iou_guard", (int, float), 0, 1)),
            min_support=checked(data, "min_support", (int,), 1, 10**9),
            window=checked(data, "window", (int,), 1, 1000),
            scheme=SignatureScheme.from_json(data["scheme"]),
        )


#: Near copies (``distinct_pages``): a pair differs in at most this share of
#: the smaller page's signatures ...
NEAR_COPY_DIFFER = 0.1
#: ... and shares at least this share of the smaller page's *rare*
#: signatures (held by at most half the pages compared). Measured on the dev
#: sites of 5+ pages, each page added again with a visible per-request line
#: (1,136 pairs of copies; 7,065 pairs of distinct pages, fitted plain): the
#: whole-set IoU cannot tell them apart (the line changes every signature
#: above it: the 0.95 guard skips 65 % of the copies; at 0.90, 94 % of the
#: copies and 73 distinct pairs, template-heavy sites), while these two tests
#: take 93 % of the copies and 31 distinct pairs (0.4 %: versions of one
#: story on washingtonpost, reuters, wsj). With 0.25 for the first, 95 % and
#: 257: whole sections of nytimes counted once, ROUGE-LSum -0.02. A copy
#: missed still adds one pair, under ``min_support``.
#: Rare signatures keep a site of one layout (calendar pages: all they share
#: is shared by every page) from counting as copies of one page.
NEAR_COPY_RARE = 0.5
#: Rare signatures held by more pages than this are not indexed for finding
#: copies (a bound on the pairs counted: a bigger group of copies is left
#: to the output guard).
_MAX_COPY_GROUP = 32
#: Up to this many distinct pages, ``distinct_pages`` intersects every pair
#: of pages' rare signatures (set operations in C); above, it indexes the
#: pages holding each rare signature (a Python step each, but linear).
_PAIRWISE = 64


def distinct_pages(seq: list[frozenset[str]]) -> tuple[list[frozenset[str]], int]:
    """``seq`` (in neighbour order) without exact and near copies of an
    earlier page, and how many were left out.

    A subtree is template because many *different* pages share it: copies
    of one article under several URLs (session ids, tracking parameters,
    print versions) share the article, and counted as pairs they made it
    template (issue 30). Cost: one count of the signatures and the pairs of
    pages sharing rare ones, no comparison of every pair.
    """
    n = len(seq)
    if n < 2:
        return seq, 0
    first: dict[frozenset[str], int] = {}
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, fs in enumerate(seq):  # exact copies, whatever the batch
        j = first.setdefault(fs, i)
        if j != i:
            parent[i] = j
    # Exact copies count once here, so three copies of a page among four do
    # not make its signatures common. Under four distinct pages, limit < 2:
    # no signature is rare, and nothing is counted.
    limit = min(len(first) // 2, _MAX_COPY_GROUP)
    if limit >= 2:
        # Counted and intersected in C (Counter over chain, set operations):
        # a generator over every signature of the site, and a Counter
        # update for every pair of pages holding each rare one, were most
        # of a fit.
        df = Counter(chain.from_iterable(first))
        rare_sigs = {s for s, k in df.items() if 2 <= k <= limit}
        if rare_sigs:
            own = {i: fs.intersection(rare_sigs) for i, fs in enumerate(seq) if parent[i] == i}
            common = {s for s, k in df.items() if k > limit}
            rare = {i: len(seq[i]) - len(seq[i].intersection(common)) for i in own}  # held by <= limit
            pairs = []  # (a, b), a < b: sharing enough of the smaller's rare signatures
            if len(own) <= _PAIRWISE:  # every pair's intersection, in C
                owned = list(own.items())
                for at, (a, sigs) in enumerate(owned):
                    for b, other in owned[at + 1:]:
                        k = len(sigs.intersection(other))
                        if k and k >= NEAR_COPY_RARE * min(rare[a], rare[b]):
                            pairs.append((a, b))
            else:  # the pages holding each rare signature: linear in what they hold
                holders: dict[str, list[int]] = {}
                for i, sigs in own.items():
                    for s in sigs:
                        holders.setdefault(s, []).append(i)
                for a, sigs in own.items():
                    for b, k in Counter(chain.from_iterable(holders[s] for s in sigs)).items():
                        if b > a and k >= NEAR_COPY_RARE * min(rare[a], rare[b]):
                            pairs.append((a, b))
            for a, b in sorted(pairs):
                x, y = seq[a], seq[b]
                if max(len(x - y), len(y - x)) > NEAR_COPY_DIFFER * min(len(x), len(y)):
                    continue
                ra, rb = root(a), root(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    kept = [fs for i, fs in enumerate(seq) if root(i) == i]
    return kept, n - len(kept)


#: A document's copies: an article, its AMP and its print page. Signatures
#: held by 2 to this many pages may be a document's text under its copies'
#: layouts; held by more, a layout's (``_OneDocument``).
COPY_GROUP = 3
#: A pair of pages that share at least this many such signatures (a title,
#: a byline and a paragraph), and little of their layouts, are one document.
SAME_DOCUMENT_SHARED = 3


class _OneDocument:
    """Whether two neighbours are one document under two layouts: an
    article and its AMP or print copy (``/story/``, ``/story/amp/``,
    ``/story/print/`` are neighbours in URL order). They share its text,
    which its copies alone hold, and little of their layouts. Counted as
    pairs, every paragraph of a site's articles had support 2 and was
    template: a new user's 50 articles came out as their related box and
    comments. ``distinct_pages`` leaves out copies under one layout (they
    differ in few signatures); these differ in their whole layout. Pages
    of one layout share most of it, and so do pages of a section or an era
    of a site that share parts few pages hold: 3 of the 1,186 pairs of
    neighbours of the dev and WCXB sites of 4+ pages are taken for one document (pages
    of two eras of a site sharing a few of its widgets), and each of their
    pages is compared with its layout's next page instead."""

    __slots__ = ("copied", "layout")

    def __init__(self, seq: list[frozenset[str]]) -> None:
        df = Counter(chain.from_iterable(seq)) if len(seq) > COPY_GROUP else Counter()
        self.copied = frozenset(s for s, k in df.items() if 2 <= k <= COPY_GROUP)
        self.layout = frozenset(s for s, k in df.items() if k > COPY_GROUP)

    def __call__(self, a: frozenset[str], b: frozenset[str], shared: frozenset[str]) -> bool:
        k = len(shared & self.copied)
        if k < SAME_DOCUMENT_SHARED:
            return False
        layout = self.layout
        both, mine, theirs = len(shared & layout), len(a & layout), len(b & layout)
        # Under half of either's layout; or, sharing more of the document
        # than of layouts, under half of the two layouts (a series'
        # introduction on its parts' copies is held by more than three).
        return 2 * both < min(mine, theirs) or (k > both and 2 * both < mine + theirs - both)


#: How many pages past its copy a page looks for the next document to be
#: compared with (an article's AMP and print copies: two).
_LOOK_PAST = 3
#: A pair sharing under 1/``POOR_PAIR`` of the smaller page's signatures
#: shares no layout: the page looks past its neighbour too.
POOR_PAIR = 10


def _next_document(a: frozenset[str], ahead: list[frozenset[str]], guard: float,
                   one_document: _OneDocument) -> frozenset[str] | None:
    """What ``a`` shares with the page of ``ahead`` it shares most with that
    is another document (not a near-identical page, not a copy), or None:
    pages of two layouts interleaved in URL order (``/a``, ``/a/amp``,
    ``/b``...) are compared each with its own layout's next page."""
    best: frozenset[str] | None = None
    for c in ahead:
        shared = a & c
        union = len(a) + len(c) - len(shared)
        if union and len(shared) / union < guard and (best is None or len(shared) > len(best)) \
                and not one_document(a, c, shared):
            best = shared
    return best


def _fit_order(url: str, sigs: frozenset[str]) -> tuple[str, str]:
    # Ties between equal URLs are broken by content, so input order never
    # changes which pages become neighbours.
    return url, blake2b("".join(sorted(sigs)).encode("ascii"), digest_size=8).hexdigest()


@dataclass
class SiteModel:
    """Support counts of shared subtree signatures for one site.

    Holds digests and counts only: never page HTML or trees.
    """

    params: FitParams = field(default_factory=FitParams)
    pages: int = 0
    pairs: int = 0
    skipped_pairs: int = 0
    support: dict[str, int] = field(default_factory=dict)
    #: Fitted on fewer pages than wanted (a crawl stopped or released the
    #: site early): it keeps learning from later pages until it has them.
    provisional: bool = False
    #: For a provisional model, digests of the pages it has seen (URL and
    #: content), so a page seen again adds no evidence twice.
    page_keys: frozenset[str] = frozenset()
    #: Of ``pages``, those left out as exact or near copies of another page
    #: fitted with them (``distinct_pages``); not saved in signature files.
    copies: int = 0
    #: Where the site keeps its byline and dates (``_metadata.learn_hints``),
    #: learned at the fit where metadata was asked for; None: not learned.
    metadata_hints: MetadataHints | None = None
    _boilerplate: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _near: frozenset[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def fit(cls, pages: Iterable[PageSignatures | Page], params: FitParams | None = None) -> "SiteModel":
        model = cls(params or FitParams())
        model.update(pages)
        return model

    def update(self, pages: Iterable[PageSignatures | Page]) -> "SiteModel":
        """Add the evidence of more pages (compared among themselves), as
        (url, signatures) pairs or ``Page`` objects, which unpack as one.
        Pages without signatures (empty, skipped) share nothing and would
        only break the chain between their neighbours: they are left out.
        Copies of a page count once (``distinct_pages``): every fit, of
        pages or of signatures sent by workers, pooled or learnt, comes here."""
        keyed = [(url, fs) for url, sigs in pages if (fs := frozenset(sigs))]
        keyed.sort(key=lambda kv: kv[0])
        if len({url for url, _ in keyed}) < len(keyed):  # equal URLs: order them by content
            keyed.sort(key=lambda kv: _fit_order(*kv))
        seq, copies = distinct_pages([fs for _, fs in keyed])
        window = max(1, self.params.window)
        guard = self.params.iou_guard
        support = self.support
        one_document = _OneDocument(seq)
        for i, a in enumerate(seq):
            for j in range(i + 1, min(i + 1 + window, len(seq))):
                b = seq[j]
                shared = a & b
                union = len(a) + len(b) - len(shared)
                if not union or len(shared) / union >= guard:
                    self.skipped_pairs += 1
                    continue
                if one_document(a, b, shared):
                    # Its neighbour is its copy under another layout: the
                    # page is compared with the page after them that shares
                    # most with it (its own layout's), one pair as before.
                    self.skipped_pairs += 1
                    other = _next_document(a, seq[j + 1 : j + 1 + _LOOK_PAST], guard, one_document)
                    if other is None:
                        continue
                    shared = other
                elif POOR_PAIR * len(shared) < min(len(a), len(b)):
                    # Next to a page of another layout (a print page beside
                    # the next article): its own layout's page a little further.
                    other = _next_document(a, seq[j + 1 : j + 1 + _LOOK_PAST], guard, one_document)
                    if other is not None and len(other) > len(shared):
                        shared = other
                self.pairs += 1
                for sig in shared:
                    support[sig] = support.get(sig, 0) + 1
        self.pages += len(seq) + copies
        self.copies += copies
        self._boilerplate = None
        return self

    def merge(self, other: "SiteModel") -> "SiteModel":
        """Add another model's evidence to this one (same signature scheme)."""
        if other.params.scheme != self.params.scheme:
            raise ValueError("cannot merge models fitted with different signature schemes")
        # Support counts neighbour pairs: pairs of another window, or counts
        # read against another threshold, do not add up to either model.
        differ = [f"{name} {getattr(self.params, name)!r} and {getattr(other.params, name)!r}"
                  for name in ("window", "iou_guard", "min_support")
                  if getattr(self.params, name) != getattr(other.params, name)]
        if differ:
            raise ValueError(f"cannot merge models fitted with different parameters: {'; '.join(differ)}")
        for sig, n in other.support.items():
            self.support[sig] = self.support.get(sig, 0) + n
        self.pages += other.pages
        self.pairs += other.pairs
        self.skipped_pairs += other.skipped_pairs
        self.copies += other.copies
        if self.metadata_hints is None:
            self.metadata_hints = other.metadata_hints
        self._boilerplate = None
        return self

    @property
    def threshold(self) -> int:
        return max(1, min(self.params.min_support, self.pairs))

    @property
    def boilerplate(self) -> frozenset[str]:
        """Signatures whose support reaches the threshold."""
        if self._boilerplate is None:
            t = self.threshold
            self._boilerplate = frozenset(s for s, n in self.support.items() if n >= t)
            self._near = None
        return self._boilerplate

    @property
    def near_boilerplate(self) -> frozenset[str]:
        """Signatures some neighbour pairs share, too few to be boilerplate:
        content mode's hint (computed once, not per page)."""
        bp = self.boilerplate
        if self._near is None:
            self._near = frozenset(self.support.keys() - bp)
        return self._near

    def with_params(self, **changes) -> "SiteModel":
        """The same evidence judged with other thresholds."""
        params = replace(self.params, **changes)
        if params.scheme != self.params.scheme:
            raise ValueError("the signature scheme is fixed once a model is fitted")
        return SiteModel(params, self.pages, self.pairs, self.skipped_pairs, dict(self.support),
                         self.provisional, self.page_keys, self.copies, self.metadata_hints)
