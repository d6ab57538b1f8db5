"""The DEBOILER_* settings: declared once, and all checked when a crawl opens.

A mistake in a setting must stop the crawl at once with a message naming the
setting and its value, not surface later as a silent default, a traceback
from a signal handler, or a failed save after an hour of crawling.

Each setting is one field of ``DeboilerSettings``: its attribute and Python
type, and, in ``setting(...)``, its name, kind (what it accepts and the range:
``Integer(2)``, ``Seconds(60)``, ``FieldName(written=True)`` ...), default and
what it does. ``SETTINGS`` (the table), ``DEFAULTS`` and ``read_settings``
come from those fields, so a new setting is one field here and one row in
docs/settings.md (tests/test_settings.py checks the two agree).
"""

from __future__ import annotations

import difflib
import logging
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit

from ._limits import Limits

__all__ = ["DEFAULTS", "SETTINGS", "DeboilerSettings", "DeboilerSettingsError", "Setting", "enabled",
           "read_settings"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


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


def _unset(value: Any) -> bool:
    """None, or what ``-s NAME=None`` and ``-s NAME=`` give on Scrapy's
    command line (strings): how a setting that may be None is turned off."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


# -- kinds: what a setting accepts, and its range --------------------------------

class Kind(Generic[T]):
    """How a setting's value is checked and converted to a ``T``."""

    def read(self, name: str, value: Any) -> T:
        """``value`` checked and converted; DeboilerSettingsError if it cannot be."""
        raise NotImplementedError


@dataclass(frozen=True)
class Flag(Kind[bool]):
    """Scrapy's own rule (Settings.getbool): bools, 0/1 and their strings,
    "true"/"false" in any case."""

    def read(self, name: str, value: Any) -> bool:
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


@dataclass(frozen=True)
class Integer(Kind[int]):
    """An integer from ``low`` to ``high`` (no upper bound: None); integral
    floats and strings (with _ separators) are accepted."""

    low: int
    high: int | None = None

    def read(self, name: str, value: Any) -> int:
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
        bounds = f">= {self.low}" if self.high is None else f"from {self.low} to {self.high}"
        if n is None:
            raise DeboilerSettingsError(name, value, f"expected an integer {bounds}")
        if n < self.low or (self.high is not None and n > self.high):
            raise DeboilerSettingsError(name, value, f"must be an integer {bounds}")
        return n


@dataclass(frozen=True)
class WorkerProcesses(Integer):
    """A number of worker processes: over 0 only on POSIX, where the reactor
    can read their pipes."""

    def read(self, name: str, value: Any) -> int:
        n = super().read(name, value)
        if n and os.name != "posix":
            raise DeboilerSettingsError(name, value, "worker processes need a POSIX system (use 0)")
        return n


@dataclass(frozen=True)
class Seconds(Kind[float]):
    """A finite number of seconds over 0 and at most ``high``."""

    high: float

    def read(self, name: str, value: Any) -> float:
        x: float | None = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            x = float(value)
        elif isinstance(value, str):
            try:
                x = float(value.strip())
            except ValueError:
                x = None
        if x is None or not math.isfinite(x) or not 0 < x <= self.high:
            raise DeboilerSettingsError(name, value, f"must be a number of seconds over 0 and at most {self.high:g}")
        return x


_FIELD_NAME = "expected a field name (a non-empty string without surrounding spaces)"


@dataclass(frozen=True)
class FieldName(Kind[str]):
    """An item field's name. ``written``: the pipeline writes it, so no other
    field setting may name it too."""

    written: bool = False

    def read(self, name: str, value: Any) -> str:
        if isinstance(value, str) and value.strip() and value == value.strip():
            return value
        raise DeboilerSettingsError(name, value, _FIELD_NAME)


@dataclass(frozen=True)
class OptionalFieldName(Kind[str | None]):
    """An item field's name, or None (or "None" or "": turned off)."""

    written: bool = False

    def read(self, name: str, value: Any) -> str | None:
        if _unset(value):
            return None
        if isinstance(value, str) and value.strip() and value == value.strip():
            return value
        raise DeboilerSettingsError(name, value, _FIELD_NAME + ", or None")


@dataclass(frozen=True)
class Choice(Kind[str]):
    """One of ``choices``, in any case."""

    choices: tuple[str, ...]

    def read(self, name: str, value: Any) -> str:
        if isinstance(value, str) and value.strip().lower() in self.choices:
            return value.strip().lower()
        raise DeboilerSettingsError(name, value, "must be one of " + ", ".join(repr(c) for c in self.choices))


class PathKind(Kind[T]):
    """A path the crawl writes to: ``read`` takes it as given (the spider
    middleware's reading), ``on_disk`` checks the file system."""

    def read(self, name: str, value: Any) -> T:
        return cast(T, value)

    def on_disk(self, name: str, value: Any, where: Callable[[str], str]) -> T:
        raise NotImplementedError


@dataclass(frozen=True)
class Folder(PathKind[str]):
    """The folder ``where(value)`` (Scrapy's ``data_path``), created if
    missing; it must be a writable folder."""

    def on_disk(self, name: str, value: Any, where: Callable[[str], str]) -> str:
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


@dataclass(frozen=True)
class OutputFile(PathKind[str | None]):
    """A file to write at the end of the crawl, or None: its folder must
    exist and be writable, and the path must not be a folder."""

    def read(self, name: str, value: Any) -> str | None:
        return None if _unset(value) else cast(str, value)

    def on_disk(self, name: str, value: Any, where: Callable[[str], str]) -> str | None:
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


@dataclass(frozen=True)
class ClassPath(Kind[Callable[..., Any]]):
    """A class (or any callable), or its import path."""

    def read(self, name: str, value: Any) -> Callable[..., Any]:
        if callable(value):
            return cast("Callable[..., Any]", value)
        if isinstance(value, str) and value.strip():
            from scrapy.utils.misc import load_object

            try:
                return cast("Callable[..., Any]", load_object(value.strip()))
            except (ImportError, NameError, ValueError, AttributeError) as e:
                raise DeboilerSettingsError(name, value, f"cannot be imported: {e}") from None
        raise DeboilerSettingsError(name, value, "expected a class or its import path")


def _hide_password(value: Any) -> Any:
    """A URL for error messages: its password replaced by ***."""
    if isinstance(value, str):
        return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", value)
    return value


@dataclass(frozen=True)
class RedisUrl(Kind[str | None]):
    """None (local mode), or a redis://, rediss:// or unix:// URL; the
    client library must be installed. Messages hide the URL's password."""

    def read(self, name: str, value: Any) -> str | None:
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


_PREFIX = re.compile(r"[A-Za-z0-9_.:{}-]{1,100}\Z")


@dataclass(frozen=True)
class KeyPrefix(Kind[str]):
    """A Redis key prefix: 1-100 letters, digits or _.:{}-."""

    def read(self, name: str, value: Any) -> str:
        if isinstance(value, str) and _PREFIX.match(value):
            return value
        raise DeboilerSettingsError(name, value, "expected 1-100 letters, digits or _.:{}-")


# -- the table -------------------------------------------------------------------

@dataclass(frozen=True)
class Setting(Generic[T]):
    """One DEBOILER_* setting: a row of ``SETTINGS``."""

    name: str
    kind: Kind[T]
    #: As Scrapy's settings hold it (``DEFAULTS``); None with ``when_unset``.
    default: Any
    doc: str
    #: The value when the setting is None (or "None", ""): worked out then.
    when_unset: Callable[[], T] | None = None
    #: Its field of DeboilerSettings.
    attribute: str = ""

    def read(self, value: Any) -> T:
        if self.when_unset is not None and _unset(value):
            return self.when_unset()
        return self.kind.read(self.name, value)


_SETTING = "deboiler_setting"


def setting(name: str, kind: Kind[T], default: Any, doc: str, *,
            when_unset: Callable[[], T] | None = None) -> T:
    """A field of DeboilerSettings declaring its setting (typed as the value
    the kind reads, so mypy checks the field's type against the kind)."""
    return cast(T, field(metadata={_SETTING: Setting(name, kind, default, doc, when_unset)}))


@dataclass(frozen=True)
class DeboilerSettings:
    """Every DEBOILER_* setting, checked and converted. Its fields declare
    the settings, in the order of ``DEFAULTS`` and ``SETTINGS`` (read_settings
    reads the field names first, then the paths, then the rest)."""

    enabled: bool = setting("DEBOILER_ENABLED", Flag(), True, "off: NotConfigured")
    min_pages: int = setting("DEBOILER_MIN_PAGES", Integer(2), 20,
                             "distinct pages of a site held before fitting")
    url_field: str = setting("DEBOILER_URL_FIELD", FieldName(), "url", "input field: the page's URL")
    html_field: str = setting("DEBOILER_HTML_FIELD", FieldName(), "html", "input field: the page's HTML")
    encoding_field: str | None = setting("DEBOILER_ENCODING_FIELD", OptionalFieldName(), "encoding",
                                         "input field: the encoding of bytes HTML")
    site_field: str | None = setting("DEBOILER_SITE_FIELD", OptionalFieldName(), None,
                                     "input field: the page's site, where not its URL's host")
    text_field: str = setting("DEBOILER_TEXT_FIELD", FieldName(written=True), "clean_text",
                              "output field: the text kept")
    clean_html_field: str = setting("DEBOILER_CLEAN_HTML_FIELD", FieldName(written=True), "clean_html",
                                    "output field: the HTML kept")
    status_field: str = setting("DEBOILER_STATUS_FIELD", FieldName(written=True), "deboiler",
                                "output field: what was done to the page")
    comments_field: str | None = setting("DEBOILER_COMMENTS_FIELD", OptionalFieldName(written=True), None,
                                         "content mode: the user comments left out go here")
    markdown_field: str = setting("DEBOILER_MARKDOWN_FIELD", FieldName(written=True), "clean_markdown",
                                  "output field of DEBOILER_MARKDOWN")
    title_field: str = setting("DEBOILER_TITLE_FIELD", FieldName(written=True), "clean_title",
                               "output field: the page's headline")
    metadata_field: str = setting("DEBOILER_METADATA_FIELD", FieldName(written=True), "page_metadata",
                                  "output field of DEBOILER_METADATA")
    keep_html: bool = setting("DEBOILER_KEEP_HTML", Flag(), False, "keep the raw HTML field after cleaning")
    signatures_dir: str = setting("DEBOILER_SIGNATURES_DIR", Folder(), "deboiler",
                                  "where models are saved (under Scrapy's data_path, or absolute)")
    store: Callable[..., Any] = setting(  # noqa: RUF009 (a field(), as the others)
        "DEBOILER_STORE", ClassPath(), "scrapy_deboiler.SignatureStore",
        "the store class: Store(directory) with load(site), save(site, model)")
    learn: bool = setting("DEBOILER_LEARN", Flag(), False, "finished models keep learning too")
    watchdog_interval: float = setting("DEBOILER_WATCHDOG_INTERVAL", Seconds(60), 0.5,
                                       "seconds between the watchdog's looks at held items")
    inline_max_bytes: int = setting("DEBOILER_INLINE_MAX_BYTES", Integer(0), 0,
                                    "pages up to this size are cleaned on the reactor thread")
    threads: int = setting("DEBOILER_THREADS", Integer(1, 64), None,
                           "threads that parse, fit and clean (None: one a core but one, 1-4)",
                           when_unset=_default_threads)
    processes: int = setting("DEBOILER_PROCESSES", WorkerProcesses(0, 64), None,
                             "worker processes instead of the threads (None: 1 on 2+ cores and POSIX)",
                             when_unset=_default_processes)
    worker_timeout: float = setting("DEBOILER_WORKER_TIMEOUT", Seconds(86400), 120.0,
                                    "seconds a worker process with pages may answer nothing")
    markdown: bool = setting("DEBOILER_MARKDOWN", Flag(), False, "also write what was kept as CommonMark")
    metadata: bool = setting("DEBOILER_METADATA", Flag(), False,
                             "also write the page's author, dates, language, site name ... (learned per site)")
    mode: str = setting("DEBOILER_MODE", Choice(("boilerplate", "content")), "content",
                        "content: the main content only; boilerplate: remove what the site's pages share")
    body_only: bool = setting("DEBOILER_BODY_ONLY", Flag(), False,
                              "content mode: clean_text without the headline, byline and captions")
    fast_exporters: bool = setting("DEBOILER_FAST_EXPORTERS", Flag(), False,
                                   "the add-on's orjson exporters for the JSON feeds")
    max_page_bytes: int = setting("DEBOILER_MAX_PAGE_BYTES", Integer(1), Limits.max_bytes,
                                  "longer pages are skipped, not parsed")
    max_page_elements: int = setting("DEBOILER_MAX_PAGE_ELEMENTS", Integer(1), Limits.max_elements,
                                     "pages with more start tags are skipped, not parsed")
    max_held_bytes: int = setting("DEBOILER_MAX_HELD_BYTES", Integer(0), 128 * 1024 * 1024,
                                  "held HTML before the oldest sites are released")
    max_sites: int = setting("DEBOILER_MAX_SITES", Integer(1), 10_000, "sites kept in memory")
    max_hold_seconds: float = setting("DEBOILER_MAX_HOLD_SECONDS", Seconds(10**7), 120.0,
                                      "a site whose oldest held item waited this long is released")
    report: str | None = setting("DEBOILER_REPORT", OutputFile(), None,
                                 "write the crawl report to this file when the spider closes")
    report_views: int = setting("DEBOILER_REPORT_VIEWS", Integer(0), 3, "marked-up pages per site in the report")
    report_view_sites: int = setting("DEBOILER_REPORT_VIEW_SITES", Integer(0), 20,
                                     "sites with marked-up pages in the report")
    # Scaling out (docs/scaling-out.md): one model a site for many processes.
    redis_url: str | None = setting("DEBOILER_REDIS_URL", RedisUrl(), None,
                                    "the cluster's Redis (None: no coordination)")
    redis_prefix: str = setting("DEBOILER_REDIS_PREFIX", KeyPrefix(), "deboiler", "start of the Redis keys")
    redis_pool_wait: float = setting("DEBOILER_REDIS_POOL_WAIT", Seconds(3600), 5.0,
                                     "seconds a quiet worker waits for a pool that stopped growing")
    redis_pool_ttl: int = setting("DEBOILER_REDIS_POOL_TTL", Integer(1), 86400,
                                  "seconds a pool lives after its last page")
    redis_timeout: float = setting("DEBOILER_REDIS_TIMEOUT", Seconds(60), 2.0,
                                   "seconds for connecting and each reply")
    redis_retry_interval: float = setting("DEBOILER_REDIS_RETRY_INTERVAL", Seconds(3600), 5.0,
                                          "seconds between attempts to reach an unreachable Redis")


#: The table: every DEBOILER_* setting, in the order of DeboilerSettings.
SETTINGS: tuple[Setting[Any], ...] = tuple(
    replace(f.metadata[_SETTING], attribute=f.name) for f in fields(DeboilerSettings))
_BY_NAME: dict[str, Setting[Any]] = {s.name: s for s in SETTINGS}

#: Defaults of the DEBOILER_* settings (docs/settings.md).
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS}


def _read(settings: Any, name: str) -> Any:
    s = _BY_NAME[name]
    return s.read(settings.get(name, s.default))


def enabled(settings: Any) -> bool:
    """DEBOILER_ENABLED, checked: when off nothing else is read."""
    return cast(bool, _read(settings, "DEBOILER_ENABLED"))


def fast_exporters(settings: Any) -> bool:
    """DEBOILER_FAST_EXPORTERS, checked: the add-on's orjson exporters for
    the JSON feed formats, asked for (a cleaning plugin does not change the
    bytes of a user's feed unasked)."""
    return cast(bool, _read(settings, "DEBOILER_FAST_EXPORTERS"))


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
    for key in settings if check_paths else ():
        if isinstance(key, str) and key.startswith("DEBOILER_") and key not in DEFAULTS:
            close = difflib.get_close_matches(key, DEFAULTS, n=1)
            logger.warning("scrapy-deboiler: unknown setting %s%s", key,
                           f" (did you mean {close[0]}?)" if close else "")

    # The field names first, then the paths (the folder is created once the
    # fields are known not to overwrite each other), then the rest.
    names = [s for s in SETTINGS if isinstance(s.kind, (FieldName, OptionalFieldName))]
    paths = [s for s in SETTINGS if isinstance(s.kind, PathKind)]
    values: dict[str, Any] = {s.attribute: s.read(settings.get(s.name, s.default)) for s in names}
    _check_overwrites(names, values)
    for s in paths:
        raw = settings.get(s.name, s.default)
        kind = cast(PathKind[Any], s.kind)
        values[s.attribute] = kind.on_disk(s.name, raw, where) if check_paths else s.read(raw)
    for s in SETTINGS:
        if s.attribute not in values:
            values[s.attribute] = s.read(settings.get(s.name, s.default))
    return DeboilerSettings(**values)


def _check_overwrites(names: list[Setting[Any]], values: dict[str, Any]) -> None:
    """Fields the pipeline writes must not overwrite each other or its input."""
    written = [s for s in names if cast("FieldName | OptionalFieldName", s.kind).written]
    for a in written:
        for b in (*written, *(s for s in names if s not in written)):
            value = values[a.attribute]
            if a is not b and value is not None and value == values[b.attribute]:
                raise DeboilerSettingsError(a.name, value, f"is also {b.name}: the pipeline would overwrite it")
