"""Learn each website's boilerplate from its own pages and strip it."""

from ._clean import CleanResult, Page, clean_page, fit_and_clean
from ._loading import ParsedHTML, decode_html, parse_html
from ._model import FitParams, SiteModel
from ._signatures import DEFAULT_SCHEME, Candidates, SignatureScheme, SignedTree, sign_tree
from ._text import tree_text

__version__ = "0.1.0"

__all__ = [
    "Candidates",
    "CleanResult",
    "DEFAULT_SCHEME",
    "FitParams",
    "Page",
    "ParsedHTML",
    "SignatureScheme",
    "SignedTree",
    "SiteModel",
    "clean_page",
    "decode_html",
    "fit_and_clean",
    "parse_html",
    "sign_tree",
    "tree_text",
]
