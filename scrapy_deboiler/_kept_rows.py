"""Rules over rows of one shape that content mode's model judged one by
one: a listing's rows (``keep_rows``), a thread's posts' author lines and
dates (``keep_post_heads``), a product's reviews (``keep_like_rows``).
Posts and rows are told by markup: blocks of one place (``place_keys``) in
children of one element. They run after the model: no training depends
on them."""

from __future__ import annotations

import re
from typing import Callable

from ._block import Block
from ._dates import find_days
from ._kept_rules import _PAGE_TAGS, HEAD_WORDS

__all__ = ["BODY_WORDS", "LIKE_FLOOR", "LIKE_ROWS", "ROWS", "head_kind", "keep_like_rows", "keep_post_heads",
           "keep_rows"]


#: A post's text starts at its first kept block of this many words.
BODY_WORDS = 3

#: ``head_kind``'s answers: a name, a ``<time>``, a date written out.
NAME, TIME, DATE = 1, 2, 3

#: Class or id words of a poster's name: forum software's own
#: ("username", "cAuthorPane_author", "MessageCard__name", "tagline
#: author"); markup, not the page's language.
_NAME_CLASS = re.compile(r"author|user|name|poster|byline|nick|member|profile", re.IGNORECASE)

#: How many levels above a block its name class may be.
_NAME_REACH = 3


def head_kind(block: Block) -> int:
    """``TIME`` for a short block that holds a ``<time>``, ``DATE`` for one
    that holds a written day, ``NAME`` for one whose class names a poster,
    else 0: what ``keep_post_heads`` may keep above a post."""
    if block.words > HEAD_WORDS or not block.words:
        return 0
    el = block.element
    if any(True for _ in el.iter("time")):
        return TIME
    if find_days(block.text):
        return DATE
    for _ in range(_NAME_REACH):
        if el is None or el.tag in _PAGE_TAGS:
            break
        if _NAME_CLASS.search((el.get("class") or "") + " " + (el.get("id") or "")):
            return NAME
        el = el.getparent()
    return 0


def _holders_children(kept: list[bool], nodes: list[int], parents: list[int], keys: list,
                      least: int) -> set[int]:
    """The children, ``least`` or more, of the element holding the kept
    blocks of one place (``place_keys``) that hold one of them: a thread's
    posts, a listing's rows."""
    runs: dict = {}
    for i, k in enumerate(kept):
        if k:
            runs.setdefault(keys[i], []).append(i)
    depth = _depths(parents)
    found: set = set()
    for run in runs.values():
        if len(run) < least:
            continue
        children = set(_row_children(run, nodes, parents, depth)) - {-1}
        if len(children) >= least:
            found |= children
    return found


def _depths(parents: list[int]) -> list[int]:
    """Each element's depth below the top (a parent is numbered before its children)."""
    depth: list[int] = []
    for up in parents:
        depth.append(depth[up] + 1 if up >= 0 else 0)
    return depth


def _row_children(run: list[int], nodes: list[int], parents: list[int], depth: list[int]) -> list[int]:
    """For each block of ``run``, the child of the deepest element holding
    them all that holds it (-1 for a block of that element itself, or
    for all where they are in two trees)."""
    top = nodes[run[0]]  # the deepest element holding the run
    for i in run[1:]:
        b = nodes[i]
        while depth[b] > depth[top]:
            b = parents[b]
        while depth[top] > depth[b]:
            top = parents[top]
        while b != top and b >= 0:
            b, top = parents[b], parents[top]
        if top < 0:
            return [-1] * len(run)  # blocks of two trees: no holder
    out = []
    for i in run:
        b = nodes[i]
        if b == top:
            out.append(-1)  # a block of the holder itself
            continue
        while parents[b] != top:
            b = parents[b]
        out.append(b)
    return out


def _owner(parents: list[int], holders: set[int]) -> list[int]:
    """Each element's nearest holder at or above it (-1: none)."""
    out = [-1] * len(parents)
    for e, up in enumerate(parents):  # a parent is numbered before its children
        out[e] = e if e in holders else (out[up] if up >= 0 else -1)
    return out


#: Rows of a listing: this many or more children of one element, each
#: holding a kept block of one place.
ROWS = 3


def keep_rows(kept: list[bool], nodes: list[int], parents: list[int], keys: list) -> list[bool]:
    """A listing's row is kept whole where the model kept most of it: its
    blocks in slots (place, and count of that place before it in the row)
    the model kept in another row too. A forum's topic list kept every
    topic's "by ... » date" line and the titles of the first two topics
    only (a title alone is a link, and later rows score lower)."""
    rows = _holders_children(kept, nodes, parents, keys, ROWS)
    if not rows:
        return kept
    row_of = _owner(parents, rows)
    blocks: dict[int, list[int]] = {}
    for i, node in enumerate(nodes):
        if row_of[node] >= 0:
            blocks.setdefault(row_of[node], []).append(i)
    # A block's slot in its row: its place, and how many blocks of that
    # place the row has before it (a poster's name and "posts · Joined"
    # line are of one place).
    slots: dict[int, list] = {}
    for row, run in blocks.items():
        seen: dict = {}
        slots[row] = []
        for i in run:
            seen[keys[i]] = seen.get(keys[i], -1) + 1
            slots[row].append((keys[i], seen[keys[i]]))
    held: dict = {}  # slot: rows keeping a block there
    for row, run in blocks.items():
        for i, slot in zip(run, slots[row]):
            if kept[i]:
                held.setdefault(slot, set()).add(row)
    out = list(kept)
    for row, run in blocks.items():
        if 2 * sum(kept[i] for i in run) < len(run):
            continue
        for i, slot in zip(run, slots[row]):
            if not kept[i] and held.get(slot, set()) - {row}:
                out[i] = True
    return out


#: Rows of one shape: this many or more children of one element, each
#: holding a block of one place, for ``keep_like_rows``.
LIKE_ROWS = 3


#: A block of such rows is kept with them from this score (the model's is
#: about 0.5): the rest are captions of a gallery, ads, teasers.
LIKE_FLOOR = 0.3


def keep_like_rows(tags: list[str], kept: list[bool], scores: list[float], words: list[int],
                   link_density: list[float], comments: list[bool], nodes: list[int], parents: list[int],
                   keys: list) -> list[bool]:
    """Blocks of one tag and place, each inside one of ``LIKE_ROWS`` or more
    children of one element (a product's reviews), are one kind of thing:
    where the model kept the first of them, the others of ``BODY_WORDS``
    words or more scoring ``LIKE_FLOOR`` or more are kept too, but those
    mostly of links, in a row whose title is a link (a teaser of another
    page) or in readers' comments. The model's score falls with a block's
    position: a new user's product pages kept their first review and lost
    later ones."""
    places: dict = {}
    for i, k in enumerate(keys):
        places.setdefault((k, tags[i]), []).append(i)
    depth = _depths(parents)
    link_blocks = [j for j in range(len(kept)) if 2 * link_density[j] >= 1 and words[j] >= 2]
    out = list(kept)
    for run in places.values():
        if len(run) < LIKE_ROWS or not any(kept[i] for i in run) or all(kept[i] for i in run):
            continue
        # A row wraps its block (a review's <div> around its text): blocks
        # side by side in one element are paragraphs, not rows.
        rows = [r if r != nodes[i] else -1 for i, r in zip(run, _row_children(run, nodes, parents, depth))]
        if len({r for r in rows if r >= 0}) < LIKE_ROWS or not kept[run[0]]:
            continue  # the first row kept: the model's score falls with position
        # A row with a linked title is a teaser of another page: not kept so.
        owner = _owner(parents, set(rows) - {-1})
        linked = {owner[nodes[j]] for j in link_blocks} - {-1}
        for i, row in zip(run, rows):
            if row >= 0 and row not in linked and not kept[i] and scores[i] >= LIKE_FLOOR \
                    and words[i] >= BODY_WORDS and 2 * link_density[i] < 1 and not comments[i]:
                out[i] = True
    return out


def keep_post_heads(words: list[int], kept: list[bool], nodes: list[int], parents: list[int], keys: list,
                    kind: Callable[[int], int]) -> list[bool]:
    """Each post of a thread keeps its author line and its date: a forum's
    reader reads who wrote what and when (WCXB's gold keeps them), and the
    model left these short lines out. Posts are told by markup: kept blocks
    of one place (``place_keys``) in two or more children of the element
    that holds them all; each child is a post, and above its first kept
    block of ``BODY_WORDS`` (an avatar's letter is none) it keeps its first
    name and its first ``<time>``, or its first date where it has no
    ``<time>`` (not the "Joined Dec 23, 2009" of the poster's card above
    the post's own time, nor "3 posts · Joined 2024" after the name). The
    same holds an entry of a listing whose date line the model dropped."""
    posts = _holders_children(kept, nodes, parents, keys, 2)
    if not posts:
        return kept
    post_of = _owner(parents, posts)
    heads: dict = {}  # post: (block, kind) of each block above its text
    begun: set = set()  # posts whose text began
    for i, node in enumerate(nodes):
        post = post_of[node]
        if post < 0 or post in begun:
            continue
        if kept[i]:
            if words[i] >= BODY_WORDS:
                begun.add(post)
        elif found := kind(i):
            heads.setdefault(post, []).append((i, found))
    out = list(kept)
    for post, head in heads.items():
        if post in begun:  # a post with no text of its own has no head either
            for wanted in (NAME, TIME if any(k == TIME for _, k in head) else DATE):
                i = next((i for i, k in head if k == wanted), -1)
                if i >= 0:
                    out[i] = True
    return out
