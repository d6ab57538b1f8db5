"""The compiled walks (``_speedups``), imported in one place.

Every module that has a compiled walk takes ``_speedups`` from here, and
uses its pure-Python walk when it is None: when the extension was not
built (no compiler at install time), or when the environment variable
``SCRAPY_DEBOILER_PURE_PYTHON`` is set to anything but ``""`` or ``"0"``
(read once, at import). The switch runs the Python reference walks in an
installed copy, to compare outputs or time them, without uninstalling the
extension; the tests (``tests/test_speedups.py``) compare the two on
generated pages.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["PURE_PYTHON", "speedups"]

#: Whether ``SCRAPY_DEBOILER_PURE_PYTHON`` asked for the Python walks.
PURE_PYTHON = os.environ.get("SCRAPY_DEBOILER_PURE_PYTHON", "").strip() not in ("", "0")

speedups: ModuleType | None = None
if not PURE_PYTHON:
    try:
        from . import _speedups
    except ImportError:  # not built: the Python walks give the same results
        pass
    else:
        speedups = _speedups
