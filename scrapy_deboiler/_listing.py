"""A listing among a page's blocks: entries of a list are short and alike,
each scores low, and a page of them can keep a line or nothing
(``keep_listing``, called from ``_decide.decide`` and ``_content.judge_blocks``)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["LISTING_ALONE", "LISTING_ENTRY_WORDS", "LISTING_FITTED", "LISTING_KEPT", "LISTING_MENU_LINKS",
           "LISTING_MIN", "LISTING_RUN", "LISTING_SHARE", "ListingLimits", "keep_listing", "listing_sliver"]


#: A page that kept fewer than ``LISTING_KEPT`` of its ``LISTING_MIN`` or
#: more words, ``LISTING_SHARE`` of which are ``LISTING_RUN`` or more blocks
#: of one place outside readers' comments, of ``LISTING_ENTRY_WORDS`` words
#: or more each on average, is a listing: ``keep_listing``.
LISTING_KEPT = 40
LISTING_MIN = 150
LISTING_RUN = 8
LISTING_SHARE = 0.3
LISTING_ENTRY_WORDS = 5
#: Blocks this much link text (a language picker's thousand names) are
#: menus: they do not count in the words a listing's run must hold a share of.
LISTING_MENU_LINKS = 0.5


class ListingLimits(NamedTuple):
    """A page's words, its run's blocks and their share of the words, for
    ``keep_listing``."""

    min_words: int
    run: int
    share: float
    kept: int = LISTING_KEPT


#: A page alone keeps its menus and sidebars: a listing is a long run on a
#: long page. A page whose site's template is gone (a site model) is mostly
#: its own: three rows that hold half of what is left are its list (a
#: forum's topic list of eight rows kept its name alone, in a new user's
#: crawl), where the page kept about its headline alone (a short post kept
#: 34 words and then a caption's line).
LISTING_ALONE = ListingLimits(LISTING_MIN, LISTING_RUN, LISTING_SHARE)
LISTING_FITTED = ListingLimits(30, 3, 0.5, 15)


def listing_sliver(words: list[int], kept: list[bool], limits: ListingLimits = LISTING_ALONE) -> bool:
    """Whether a page of ``limits.min_words`` or more words kept fewer than
    ``limits.kept``: the pages ``keep_listing`` looks at."""
    return sum(words) >= limits.min_words and sum(w for w, k in zip(words, kept) if k) < limits.kept


def keep_listing(words: list[int], kept: list[bool], nodes: list[int], parents: list[int],
                 keys: list, comments: list[bool] | None = None,
                 link_density: list[float] | None = None, head: int = -1,
                 limits: ListingLimits = LISTING_ALONE) -> list[bool]:
    """``kept``, or on a listing that kept a sliver every block inside the
    element that holds its entries. Entries of a list (a table of news
    links, cars for rent, a product's reviews) are short and alike, and each
    one scores low, so a page of them can keep a line or nothing, with or
    without a site model. What gives the list away is its run: many blocks of
    one place (``place_keys``) holding much of the page's words. A run mostly
    in readers' comments (``comments``) is not one: under a short post they
    are not its content; nor a run of names of a word or two (a shop's
    brands, a blog's tags); nor a run that ends before the first block the
    page kept (its heading) or before the headline (``head``, -1: none):
    a page's menus come before it, its entries after (a topic page alone
    kept a menu's "News" at its top, and then kept 20 menus for a list).
    Out of fold (docs/measurements.md): WCXB's listings 0.603 to
    0.613, no page worse. Menus outside the run (``link_density`` of
    ``LISTING_MENU_LINKS`` or more) are not words it must hold a share of:
    a trending page's language pickers held four times its entries' words.
    ``limits``: ``LISTING_ALONE``, or ``LISTING_FITTED`` under a site model."""
    if not listing_sliver(words, kept, limits):
        return kept
    menus = 0
    if link_density is not None:
        menus = sum(w for w, d in zip(words, link_density) if d >= LISTING_MENU_LINKS)
    total = sum(words) - menus
    first = max(head, next((i for i, k in enumerate(kept) if k), -1))
    runs: dict = {}
    for i, key in enumerate(keys):
        runs.setdefault(key, []).append(i)
    best: list[int] = []
    best_words = 0
    for run in runs.values():
        if len(run) >= limits.run and run[-1] > first \
                and not (comments and 2 * sum(comments[i] for i in run) > len(run)):
            held = sum(words[i] for i in run)
            if held > best_words and held >= LISTING_ENTRY_WORDS * len(run):
                best, best_words = run, held
    if link_density is not None:  # the run's own linked entries count
        total += sum(words[i] for i in best if link_density[i] >= LISTING_MENU_LINKS)
    if not best or best_words < limits.share * total:
        return kept
    count = len(parents)
    held_blocks = [0] * count
    for i in best:
        held_blocks[nodes[i]] += 1
    for e in range(count - 1, 0, -1):  # children come after their parents
        if parents[e] >= 0:
            held_blocks[parents[e]] += held_blocks[e]
    common = max(e for e in range(count) if held_blocks[e] == len(best))  # the deepest holding them all
    inside = [False] * count
    for e in range(count):
        inside[e] = e == common or (parents[e] >= 0 and inside[parents[e]])
    return [k or inside[node] for k, node in zip(kept, nodes)]
