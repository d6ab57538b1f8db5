"""Elements a browser would not show: the ``hidden`` attribute, inline
styles, and the hiding classes of common CSS frameworks and CMSs."""

from __future__ import annotations

from functools import lru_cache

from lxml import etree

__all__ = ["HIDING_CLASSES", "PANEL_CLASS_WORDS", "PANEL_ROLES"]

#: Class names that hide an element in common CSS frameworks and CMSs
#: (Bootstrap's ``hidden``, ``invisible``, ``sr-only``, ``d-none``;
#: WordPress's ``screen-reader-text``; Drupal's ``element-invisible`` ...),
#: and MediaWiki's ``mw-editsection``: a control beside each heading, not
#: text ("Overview [edit]" in a new user's wiki).
HIDING_CLASSES = frozenset(
    "hidden hide invisible is-hidden u-hidden hidden-text sr-only visually-hidden "
    "screen-reader-text element-invisible offscreen d-none mw-editsection".split()
)


_SHOWN = frozenset("block flex inline grid table contents".split())


@lru_cache(maxsize=4096)
def _class_hides(cls: str) -> bool:
    """Whether a class attribute names a ``HIDING_CLASSES`` class (whole
    names: ``hidden-xs`` hides on phones only). ``d-none`` alone does not
    count when a Bootstrap breakpoint shows the element again
    (``d-none d-md-block``)."""
    tokens = cls.lower().split()
    found = HIDING_CLASSES.intersection(tokens)
    if found == {"d-none"}:
        return not any(t.startswith("d-") and t.rsplit("-", 1)[-1] in _SHOWN for t in tokens)
    return bool(found)


#: ARIA roles of the panels a control opens: a tab's panel, and the
#: ``region`` of an accordion or a disclosure (WAI-ARIA Authoring
#: Practices' accordion pattern: a button with ``aria-expanded`` and
#: ``aria-controls`` over a ``role="region"`` panel).
PANEL_ROLES = frozenset(("tabpanel", "region"))
#: A class holding one of these (any case, inside a word:
#: ``cdr-accordion__content``, Bootstrap's ``tab-pane``, ``a-expander-content``,
#: ``faq__answer``) marks a panel where no role does.
PANEL_CLASS_WORDS = ("accordion", "tab-pane", "expander", "faq")


@lru_cache(maxsize=4096)
def _panel_class(cls: str) -> bool:
    """Whether a class attribute marks a panel (``PANEL_CLASS_WORDS``;
    cached: a page repeats a few classes many times)."""
    low = cls.lower()
    return any(word in low for word in PANEL_CLASS_WORDS)


def _panel(role: str | None, cls: str | None = None) -> bool:
    """Whether an element's ``role`` names a panel (``PANEL_ROLES``; it
    lists tokens, fallbacks after the first: any of them counts) or its
    ``class`` a panel's (``PANEL_CLASS_WORDS``)."""
    return ((role is not None and not PANEL_ROLES.isdisjoint(role.lower().split()))
            or (cls is not None and _panel_class(cls)))


def _is_hidden(el: etree._Element) -> bool:
    """Whether a browser hides ``el``: a ``hidden`` attribute,
    ``aria-hidden="true"``, an inline style with ``display:none`` or
    ``visibility:hidden``, or a hiding class (``_class_hides``): schema.org
    copies of the article, closed menus and dialogs, screen-reader text.
    Readers never see them, so content mode leaves them out. ROUGE-LSum F1
    out of fold, multi-page sites / single pages: attributes and styles
    +0.002 / +0.007 (``hidden`` and ``display`` alone: +0.001 / +0.008);
    classes then +0.003 / +0.005 (without ``d-none``: +0.004 / 0; with
    ``d-none`` even where a breakpoint shows it: +0.003 / +0.001).

    A panel (``PANEL_ROLES``, ``PANEL_CLASS_WORDS``: a tab's, an accordion's) is
    not hidden however it is hidden: its tab or button shows it at a click, and
    documentation and shops keep their specifications, code samples,
    reviews, shipping terms and FAQ answers in the panels not open first
    (``_panel``)."""
    if _panel(el.get("role"), el.get("class")):
        return False
    if el.get("hidden") is not None:
        return True
    value = el.get("aria-hidden")
    if value and value.strip().lower() == "true":
        return True
    value = el.get("style")
    if value:
        value = "".join(value.split()).lower()
        if "display:none" in value or "visibility:hidden" in value:
            return True
    value = el.get("class")
    return bool(value) and _class_hides(value)
