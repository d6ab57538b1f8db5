"""Rules over the blocks content mode's model kept: what a kept block
brings with it (the code its paragraph introduces) and what it does not
(readers' comments under an article, a quote's line over nothing)."""

from __future__ import annotations

__all__ = ["ARTICLE_WORDS", "CODE_REACH", "QUOTE_LINE_WORDS", "drop_bare_quotes", "drop_comments", "keep_code"]


#: How many levels above a code block its container with the kept block
#: before it may be (``keep_code``): a Sphinx page's ``<pre>`` sits in a
#: ``div.highlight`` beside the paragraph that introduces it.
CODE_REACH = 2


def keep_code(tags: list[str], kept: list[bool], nodes: list[int], parents: list[int]) -> list[bool]:
    """A code block (``<pre>``) right after a kept block of its container
    is kept: short commands ("tox -e py312,lint") score low alone, and a
    documentation page lost the code its paragraph introduced."""
    for i in range(1, len(tags)):
        if tags[i] == "pre" and not kept[i] and kept[i - 1]:
            ups = set()
            up = parents[nodes[i]]
            for _ in range(CODE_REACH):
                if up < 0:
                    break
                ups.add(up)
                up = parents[up]
            a = nodes[i - 1]
            while a >= 0 and a not in ups:
                a = parents[a]
            kept[i] = a >= 0
    return kept


#: Words a page keeps outside readers' comments, before them, for the
#: comments after them to be left out (``drop_comments``).
ARTICLE_WORDS = 100


#: Headings that may title the comments below them.
_HEADINGS = frozenset(("h2", "h3", "h4", "h5", "h6"))


def drop_comments(words: list[int], kept: list[bool], comments: list[bool],
                  tags: list[str] | None = None) -> list[bool]:
    """Readers' comments under an article are left out of its text, as
    the docs promise (``comments_field`` gathers them): the model judged
    them as text, and kept an article's three or four comments. Only those
    after the last block kept outside comments, on a page that kept
    ``ARTICLE_WORDS`` there: a forum's posts are its text. A heading right
    above the comments is theirs ("Comentarios (4)") and goes too."""
    own = [i for i, (k, c) in enumerate(zip(kept, comments)) if k and not c]
    if not own or sum(words[i] for i in own) < ARTICLE_WORDS:
        return kept
    last = own[-1]
    out = [k and not (c and i > last) for i, (k, c) in enumerate(zip(kept, comments))]
    if tags is not None and tags[last] in _HEADINGS and last + 1 < len(kept) and comments[last + 1] and len(own) > 1:
        out[last] = False
    return out


#: A quote's own line ("lucia_dev wrote:") of at most this many words.
QUOTE_LINE_WORDS = 8


def drop_bare_quotes(tags: list[str], words: list[int], kept: list[bool], nodes: list[int],
                     parents: list[int]) -> list[bool]:
    """A quote whose quoted text is left out (``drop_repeats``: a forum
    reply quotes the post it answers) goes with its own short line: the
    reply kept "lucia_dev wrote:" over nothing."""
    for i, tag in enumerate(tags):
        if tag != "blockquote" or not kept[i] or words[i] > QUOTE_LINE_WORDS:
            continue
        inner = []
        for j in range(i + 1, len(tags)):
            n = parents[nodes[j]]
            while n >= 0 and n != nodes[i]:
                n = parents[n]
            if n < 0:
                break
            inner.append(j)
        if inner and not any(kept[j] for j in inner):
            kept[i] = False
    return kept
