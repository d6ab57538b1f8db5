"""Choosing the compiled or the pure-Python walks within one test."""

from __future__ import annotations

import sys

try:  # the extension itself, also where SCRAPY_DEBOILER_PURE_PYTHON switches the package's use off
    from scrapy_deboiler import _speedups as compiled_walks
except ImportError:  # not built (tests/test_speedups.py fails then)
    compiled_walks = None


def use_walks(compiled: bool, monkeypatch) -> None:
    """Every module of the package that holds the walks (``_speedups``, as
    ``_compiled`` gave it at import) gets the extension, or None for the
    pure-Python walks: the walks live in several modules, and patching one
    left the others as they were."""
    for name, module in list(sys.modules.items()):
        if name.startswith("scrapy_deboiler.") and name != "scrapy_deboiler._speedups" and hasattr(
                module, "_speedups"):
            monkeypatch.setattr(module, "_speedups", compiled_walks if compiled else None)


def pure_walks(monkeypatch) -> None:
    """The pure-Python walks everywhere, as ``SCRAPY_DEBOILER_PURE_PYTHON=1`` gives."""
    use_walks(False, monkeypatch)
