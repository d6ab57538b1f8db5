"""The DEBOILER_* settings: defaults, and checking them all when a crawl opens.

A mistake in a setting must stop the crawl at once with a message naming the
setting and its value, not surface later as a silent default, a traceback
from a signal handler, or a failed save after an hour of crawling.
"""

from __future__ import annotations

import difflib
import logging
import math
import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit
from typing import Any, Callable

from ._limits import Limits

__all__ = ["DEFAULTS", "DeboilerSettings", "DeboilerSettingsError", "enabled", "read_settings"]

logger = logging.getLogger(__name__)


class DeboilerSettingsError(ValueError):
    """A DEBOILER_* setting has a value it cannot have."""

    def __init__(self, name: str, value: Any, expected: str) -> None:
        super().__init__(f"{name} = {value!r}: {expected}")
        self.name = name
        self.value = value


def _cores() -> int:
    """Cores this process may run on (a container's or ``taskset``'s share)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _default_threads() -> int:
    # A core for the reactor thread (Scrapy), the others (at most four) for
    # cleaning: on 2 cores one cleaning thread crawled faster than two
    # (benchmarks/bench_fullsize.py; docs/pipeline.md).
    return max(1, min(4, _cores() - 1))


def _default_processes() -> int:
    # One worker process wherever there is a second core: full-size pages
    # crawled at 0.82 of the speed without the pipeline with it, 0.44 with
    # the threads, whose cleaning holds the GIL for most of a page; one
    # worker kept up with a crawl process running flat out (docs/pipeline.md).
    # Held pages are signed by the worker that cleans them, from one parse
    # (in Redis mode too, for the pool). The reactor reads their pipes as it
    # reads sockets: POSIX only.
    return 1 if _cores() >= 2 and os.name == "posix" else 0


#: Defaults of the DEBOILER_* settings (README, "Scrapy settings").
DEFAULTS: dict[str, Any] = {
    "DEBOILER_ENABLED": True,
    "DEBOILER_MIN_PAGES": 20,
    "DEBOILER_URL_FIELD": "url",
    "DEBOILER_HTML_FIELD": "html",
    "DEBOILER_ENCODING_FIELD": "encoding",
    "DEBOILER_TEXT_FIELD": "clean_text",
    "DEBOILER_CLEAN_HTML_FIELD": "clean_html",
    "DEBOILER_STATUS_FIELD": "deboiler",
    "DEBOILER_TITLE_FIELD": "clean_title",
    "DEBOILER_KEEP_HTML": False,
    "DEBOILER_SIGNATURES_DIR": "deboiler",
    "DEBOILER_STORE": "scrapy_deboiler.SignatureStore",
    "DEBOILER_LEARN": False,
    "DEBOILER_WATCHDOG_INTERVAL": 0.5,
    "DEBOILER_INLINE_MAX_BYTES": 0,
    "DEBOILER_THREADS": None,  # None: one a core but one, at least 1, at most 4
    "DEBOILER_PROCESSES": None,  # None: one worker process on 2+ cores, else the threads
    "DEBOILER_WORKER_TIMEOUT": 120.0,
    "DEBOILER_MARKDOWN": False,
    "DEBOILER_MARKDOWN_FIELD": "clean_markdown",
    "DEBOILER_MODE": "content",
    "DEBOILER_COMMENTS_FIELD": None,
    "DEBOILER_BODY_ONLY": False,
    "DEBOILER_FAST_EXPORTERS": False,
    "DEBOILER_MAX_PAGE_BYTES": Limits.max_bytes,
    "DEBOILER_MAX_PAGE_ELEMENTS": Limits.max_elements,
    "DEBOILER_MAX_HELD_BYTES": 128 * 1024 * 1024,
    "DEBOILER_MAX_SITES": 10_000,
    "DEBOILER_MAX_HOLD_SECONDS": 120.0,
    "DEBOILER_REPORT": None,
    "DEBOILER_REPORT_VIEWS": 3,
    "DEBOILER_REPORT_VIEW_SITES": 20,
    # Scaling out (docs/scaling-out.md): one model a site for many processes.
    "DEBOILER_REDIS_URL": None,
    "DEBOILER_REDIS_PREFIX": "deboiler",
    "DEBOILER_REDIS_POOL_WAIT": 5.0,
    "DEBOILER_REDIS_POOL_TTL": 86400,
    "DEBOILER_REDIS_TIMEOUT": 2.0,
    "DEBOILER_REDIS_RETRY_INTERVAL": 5.0,
}


@dataclass(frozen=True)
class DeboilerSettings:
    """Every DEBOILER_* setting, checked and converted."""

    enabled: bool
    min_pages: int
    url_field: str
    html_field: str
    encoding_field: str | None
    text_field: str
    clean_html_field: str
    status_field: str
    keep_html: bool
    signatures_dir: str
    store: Any  # the store class (or factory)
    learn: bool
    watchdog_interval: float
    inline_max_bytes: int
    threads: int
    processes: int
    worker_timeout: float
    markdown: bool
    markdown_field: str
    mode: str
    comments_field: str | None
    max_page_bytes: int
    max_page_elements: int
    max_held_bytes: int
    max_sites: int
    max_hold_seconds: float
    report: str | None
    report_views: int
    report_view_sites: int
    title_field: str = "clean_title"
    body_only: bool = False
    fast_exporters: bool = False
    redis_url: str | None = None
    redis_prefix: str = "deboiler"
    redis_pool_wait: float = 5.0
    redis_pool_ttl: int = 86400
    redis_timeout: float = 2.0
    redis_retry_interval: float = 5.0


def _bool(name: str, value: Any) -> bool:
    # Scrapy's own rule (Settings.getbool): bools, 0/1 and their strings,
    # "true"/"false" in any case.
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("1", "true"):
            return True
        if v in ("0", "false"):
            return False
    raise DeboilerSettingsError(name, value, "expected True or False (or 1/0, 'true'/'false')")


def _unset(value: Any) -> bool:
    """None, or what ``-s NAME=None`` and ``-s NAME=`` give on Scrapy's
    command line (strings): how a setting that may be None is turned off."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


def _int(name: str, value: Any, low: int, high: int | None = None) -> int:
    n: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip().replace("_", ""))
        except ValueError:
            n = None
    bounds = f">= {low}" if high is None else f"from {low} to {high}"
    if n is None:
        raise DeboilerSettingsError(name, value, f"expected an integer {bounds}")
    if n < low or (high is not None and n > high):
        raise DeboilerSettingsError(name, value, f"must be an integer {bounds}")
    return n


def _processes(value: Any) -> int:
    if _unset(value):
        return _default_processes()
    n = _int("DEBOILER_PROCESSES", value, 0, 64)
    if n and os.name != "posix":
        raise DeboilerSettingsError("DEBOILER_PROCESSES", value, "worker processes need a POSIX system (use 0)")
    return n


def _float(name: str, value: Any, low_exclusive: float, high: float) -> float:
    x: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = float(value.strip())
        except ValueError:
            x = None
    if x is None or not math.isfinite(x) or not low_exclusive < x <= high:
        raise DeboilerSettingsError(
            name, value, f"must be a number of seconds over {low_exclusive:g} and at most {high:g}")
    return x


def _field(name: str, value: Any, optional: bool = False) -> str | None:
    if optional and _unset(value):
        return None
    if isinstance(value, str) and value.strip() and value == value.strip():
        return value
    expected = "expected a field name (a non-empty string without surrounding spaces)"
    raise DeboilerSettingsError(name, value, expected + (", or None" if optional else ""))


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise DeboilerSettingsError(name, value, "must be one of " + ", ".join(repr(c) for c in choices))


def _writable_dir(name: str, value: Any, where: Callable[[str], str]) -> str:
    """The folder ``where(value)`` (Scrapy's ``data_path``), created if
    missing; it must be a writable folder."""
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
        raise DeboilerSettingsError(name, value, "expected a folder path")
    path = where(os.fspath(value))
    if os.path.exists(path) and not os.path.isdir(path):
        raise DeboilerSettingsError(name, value, f"{path} is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise DeboilerSettingsError(name, value, f"cannot create the folder {path}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise DeboilerSettingsError(name, value, f"the folder {path} is not writable")
    return path


def _writable_file(name: str, value: Any) -> str | None:
    """A file to write at the end of the crawl: its folder must exist and be
    writable, and the path must not be a folder."""
    if _unset(value):
        return None
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
        raise DeboilerSettingsError(name, value, "expected a file path, or None")
    path = os.fspath(value)
    if os.path.isdir(path):
        raise DeboilerSettingsError(name, value, "is a folder, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise DeboilerSettingsError(name, value, f"the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise DeboilerSettingsError(name, value, "is not writable")
    return path


def _store(name: str, value: Any) -> Any:
    if callable(value):
        return value
    if isinstance(value, str) and value.strip():
        from scrapy.utils.misc import load_object

        try:
            return load_object(value.strip())
        except (ImportError, NameError, ValueError, AttributeError) as e:
            raise DeboilerSettingsError(name, value, f"cannot be imported: {e}") from None
    raise DeboilerSettingsError(name, value, "expected a class or its import path")


_PREFIX = re.compile(r"[A-Za-z0-9_.:{}-]{1,100}\Z")


def _redis_url(name: str, value: Any) -> str | None:
    """None (local mode), or a redis://, rediss:// or unix:// URL; the
    client library must be installed."""
    if _unset(value):
        return None
    if not isinstance(value, str) or urlsplit(value.strip()).scheme not in ("redis", "rediss", "unix"):
        raise DeboilerSettingsError(name, _hide_password(value),
                                    "expected a redis://, rediss:// or unix:// URL, or None")
    try:
        import redis  # noqa: F401
    except ImportError:
        raise DeboilerSettingsError(name, _hide_password(value), "needs the redis client library: "
                                    "pip install 'scrapy-deboiler[redis]'") from None
    return value.strip()


def _hide_password(value: Any) -> Any:
    """A URL for error messages: its password replaced by ***."""
    if isinstance(value, str):
        return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", value)
    return value


def _prefix(name: str, value: Any) -> str:
    if isinstance(value, str) and _PREFIX.match(value):
        return value
    raise DeboilerSettingsError(name, value, "expected 1-100 letters, digits or _.:{}-")


def enabled(settings: Any) -> bool:
    """DEBOILER_ENABLED, checked: when off nothing else is read."""
    return _bool("DEBOILER_ENABLED", settings.get("DEBOILER_ENABLED", DEFAULTS["DEBOILER_ENABLED"]))


def fast_exporters(settings: Any) -> bool:
    """DEBOILER_FAST_EXPORTERS, checked: the add-on's orjson exporters for
    the JSON feed formats, asked for (a cleaning plugin does not change the
    bytes of a user's feed unasked)."""
    return _bool("DEBOILER_FAST_EXPORTERS",
                 settings.get("DEBOILER_FAST_EXPORTERS", DEFAULTS["DEBOILER_FAST_EXPORTERS"]))


def read_settings(settings: Any, *, where: Callable[[str], str] = os.path.abspath,
                  check_paths: bool = True) -> DeboilerSettings:
    """Check and convert every DEBOILER_* setting of Scrapy ``settings``;
    raise DeboilerSettingsError naming the first bad one, after one ERROR
    line saying the same (Scrapy reports an error raised while components
    start under an asyncio traceback, where the message comes last).
    Unknown DEBOILER_* names (typos) are logged as warnings. ``where`` places
    DEBOILER_SIGNATURES_DIR (Scrapy's ``data_path``), which is created;
    ``check_paths=False`` leaves the file system and the warnings to the
    pipeline (the spider middleware reads the same settings)."""
    try:
        return _read_settings(settings, where, check_paths)
    except DeboilerSettingsError as e:
        logger.error("scrapy-deboiler: %s; the crawl stops before it starts", e)
        raise


def _read_settings(settings: Any, where: Callable[[str], str], check_paths: bool) -> DeboilerSettings:
    def raw(name: str) -> Any:
        return settings.get(name, DEFAULTS[name])

    for key in settings if check_paths else ():
        if isinstance(key, str) and key.startswith("DEBOILER_") and key not in DEFAULTS:
            close = difflib.get_close_matches(key, DEFAULTS, n=1)
            logger.warning("scrapy-deboiler: unknown setting %s%s", key,
                           f" (did you mean {close[0]}?)" if close else "")

    fields = {n: _field(n, raw(n)) for n in (
        "DEBOILER_URL_FIELD", "DEBOILER_HTML_FIELD", "DEBOILER_TEXT_FIELD",
        "DEBOILER_CLEAN_HTML_FIELD", "DEBOILER_STATUS_FIELD", "DEBOILER_TITLE_FIELD")}
    fields["DEBOILER_ENCODING_FIELD"] = _field("DEBOILER_ENCODING_FIELD", raw("DEBOILER_ENCODING_FIELD"), True)
    fields["DEBOILER_COMMENTS_FIELD"] = _field("DEBOILER_COMMENTS_FIELD", raw("DEBOILER_COMMENTS_FIELD"), True)
    fields["DEBOILER_MARKDOWN_FIELD"] = _field("DEBOILER_MARKDOWN_FIELD", raw("DEBOILER_MARKDOWN_FIELD"))
    # Fields the pipeline writes must not overwrite each other or its input.
    written = ("DEBOILER_TEXT_FIELD", "DEBOILER_CLEAN_HTML_FIELD", "DEBOILER_STATUS_FIELD",
               "DEBOILER_COMMENTS_FIELD", "DEBOILER_MARKDOWN_FIELD", "DEBOILER_TITLE_FIELD")
    for a in written:
        for b in (*written, "DEBOILER_URL_FIELD", "DEBOILER_HTML_FIELD", "DEBOILER_ENCODING_FIELD"):
            if a != b and fields[a] is not None and fields[a] == fields[b]:
                raise DeboilerSettingsError(a, fields[a], f"is also {b}: the pipeline would overwrite it")

    threads = raw("DEBOILER_THREADS")
    signatures_dir = raw("DEBOILER_SIGNATURES_DIR")
    if check_paths:
        signatures_dir = _writable_dir("DEBOILER_SIGNATURES_DIR", signatures_dir, where)
    report = raw("DEBOILER_REPORT")
    report = _writable_file("DEBOILER_REPORT", report) if check_paths else None if _unset(report) else report
    return DeboilerSettings(
        enabled=enabled(settings),
        min_pages=_int("DEBOILER_MIN_PAGES", raw("DEBOILER_MIN_PAGES"), 2),
        url_field=fields["DEBOILER_URL_FIELD"],
        html_field=fields["DEBOILER_HTML_FIELD"],
        encoding_field=fields["DEBOILER_ENCODING_FIELD"],
        text_field=fields["DEBOILER_TEXT_FIELD"],
        clean_html_field=fields["DEBOILER_CLEAN_HTML_FIELD"],
        status_field=fields["DEBOILER_STATUS_FIELD"],
        keep_html=_bool("DEBOILER_KEEP_HTML", raw("DEBOILER_KEEP_HTML")),
        signatures_dir=signatures_dir,
        store=_store("DEBOILER_STORE", raw("DEBOILER_STORE")),
        learn=_bool("DEBOILER_LEARN", raw("DEBOILER_LEARN")),
        watchdog_interval=_float("DEBOILER_WATCHDOG_INTERVAL", raw("DEBOILER_WATCHDOG_INTERVAL"), 0, 60),
        inline_max_bytes=_int("DEBOILER_INLINE_MAX_BYTES", raw("DEBOILER_INLINE_MAX_BYTES"), 0),
        threads=_default_threads() if _unset(threads) else _int("DEBOILER_THREADS", threads, 1, 64),
        processes=_processes(raw("DEBOILER_PROCESSES")),
        worker_timeout=_float("DEBOILER_WORKER_TIMEOUT", raw("DEBOILER_WORKER_TIMEOUT"), 0, 86400),
        markdown=_bool("DEBOILER_MARKDOWN", raw("DEBOILER_MARKDOWN")),
        markdown_field=fields["DEBOILER_MARKDOWN_FIELD"],
        mode=_choice("DEBOILER_MODE", raw("DEBOILER_MODE"), ("boilerplate", "content")),
        comments_field=fields["DEBOILER_COMMENTS_FIELD"],
        title_field=fields["DEBOILER_TITLE_FIELD"],
        body_only=_bool("DEBOILER_BODY_ONLY", raw("DEBOILER_BODY_ONLY")),
        fast_exporters=fast_exporters(settings),
        max_page_bytes=_int("DEBOILER_MAX_PAGE_BYTES", raw("DEBOILER_MAX_PAGE_BYTES"), 1),
        max_page_elements=_int("DEBOILER_MAX_PAGE_ELEMENTS", raw("DEBOILER_MAX_PAGE_ELEMENTS"), 1),
        max_held_bytes=_int("DEBOILER_MAX_HELD_BYTES", raw("DEBOILER_MAX_HELD_BYTES"), 0),
        max_sites=_int("DEBOILER_MAX_SITES", raw("DEBOILER_MAX_SITES"), 1),
        max_hold_seconds=_float("DEBOILER_MAX_HOLD_SECONDS", raw("DEBOILER_MAX_HOLD_SECONDS"), 0, 10**7),
        report=report,
        report_views=_int("DEBOILER_REPORT_VIEWS", raw("DEBOILER_REPORT_VIEWS"), 0),
        report_view_sites=_int("DEBOILER_REPORT_VIEW_SITES", raw("DEBOILER_REPORT_VIEW_SITES"), 0),
        redis_url=_redis_url("DEBOILER_REDIS_URL", raw("DEBOILER_REDIS_URL")),
        redis_prefix=_prefix("DEBOILER_REDIS_PREFIX", raw("DEBOILER_REDIS_PREFIX")),
        redis_pool_wait=_float("DEBOILER_REDIS_POOL_WAIT", raw("DEBOILER_REDIS_POOL_WAIT"), 0, 3600),
        redis_pool_ttl=_int("DEBOILER_REDIS_POOL_TTL", raw("DEBOILER_REDIS_POOL_TTL"), 1),
        redis_timeout=_float("DEBOILER_REDIS_TIMEOUT", raw("DEBOILER_REDIS_TIMEOUT"), 0, 60),
        redis_retry_interval=_float("DEBOILER_REDIS_RETRY_INTERVAL", raw("DEBOILER_REDIS_RETRY_INTERVAL"), 0, 3600),
    )
