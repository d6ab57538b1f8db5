"""Switching the package to its pure-Python walks within one test."""

from __future__ import annotations

import sys


def pure_walks(monkeypatch) -> None:
    """Every module of the package that holds the compiled walks gets None
    instead, as ``SCRAPY_DEBOILER_PURE_PYTHON=1`` gives at import (the walks
    live in several modules: patching one left the others compiled)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("scrapy_deboiler") and getattr(module, "_speedups", None) is not None:
            monkeypatch.setattr(module, "_speedups", None)
