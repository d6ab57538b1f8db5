"""Learn each website's boilerplate from its own pages and strip it."""

from ._clean import CleanResult, Page, clean_page
from ._fit_clean import fit_and_clean
from ._limits import DEFAULT_LIMITS, Limits, Skip, check_page
from ._loading import ParsedHTML, decode_html, parse_html
from ._model import FitParams, SiteModel
from ._signatures import DEFAULT_SCHEME, Candidates, SignatureScheme, SignedTree, sign_tree
from ._text import tree_text

from ._store import SignatureFileError, SignatureStore, SignatureStoreProtocol
from ._redis import RedisCoordinator
from ._content import ContentModelError

__version__ = "0.1.0"

# The Scrapy parts import Scrapy; the core above does not.
_SCRAPY_PARTS = {
    "Addon": "._addon",
    "DeboilerPipeline": "._pipeline",
    "DeboilerSpiderMiddleware": "._middleware",
    "FastJsonItemExporter": "._exporters",
    "FastJsonLinesItemExporter": "._exporters",
}


#: The Spark job imports pyspark (the ``spark`` extra) when it is asked for.
_SPARK_PARTS = {"clean_dataframe": "._spark"}


def __getattr__(name: str):
    if name in _SCRAPY_PARTS or name in _SPARK_PARTS:
        import importlib

        module = _SCRAPY_PARTS.get(name) or _SPARK_PARTS[name]
        return getattr(importlib.import_module(module, __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Addon",
    "DeboilerPipeline",
    "DeboilerSpiderMiddleware",
    "FastJsonItemExporter",
    "FastJsonLinesItemExporter",
    "clean_dataframe",
    "ContentModelError",
    "SignatureFileError",
    "SignatureStore",
    "SignatureStoreProtocol",
    "RedisCoordinator",
    "Candidates",
    "CleanResult",
    "DEFAULT_LIMITS",
    "DEFAULT_SCHEME",
    "FitParams",
    "Limits",
    "Page",
    "ParsedHTML",
    "SignatureScheme",
    "SignedTree",
    "SiteModel",
    "Skip",
    "check_page",
    "clean_page",
    "decode_html",
    "fit_and_clean",
    "parse_html",
    "sign_tree",
    "tree_text",
]
