"""Signature files: one versioned JSON file per site, written atomically."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ._meta_types import MetadataHints
from ._model import FitParams, SiteModel
from ._signatures import SIGNATURE_HEX
from ._urls import legacy_site_keys

__all__ = [
    "FINAL_RANK",
    "FORMAT",
    "FORMAT_VERSION",
    "SignatureFileError",
    "SignatureStore",
    "SignatureStoreProtocol",
    "dump_model",
    "load_model",
    "load_site",
    "model_rank",
    "site_filename",
]

FORMAT = "scrapy-deboiler-signatures"
#: Version 2 adds ``provisional``; models that are not provisional are still
#: written as version 1, which every release reads. Releases that read only
#: version 1 refuse provisional files and fit those sites again, rather than
#: take a model of a few pages for a finished one.
#: Version 3 adds ``metadata`` (where the site keeps its byline and dates,
#: ``MetadataHints``), written only by models that learned them: older
#: releases refuse such a file and fit the site again.
FORMAT_VERSION = 3
_VERSIONS = (1, 2, 3)
#: At most this many page keys in a file: a provisional model's, or one
#: that learns (DEBOILER_LEARN stops adding pages to a model that has them).
MAX_PAGE_KEYS = 1_000_000
_PAGE_KEY = re.compile(r"[0-9a-f]{16}\Z")
#: Files larger than this are refused before they are read.
MAX_FILE_BYTES = 64 * 1024 * 1024

# Windows device names, reserved whatever the extension.
_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{p}{i}" for p in ("COM", "LPT") for i in range(10)]
)
_SLUG = re.compile(r"[^a-z0-9.-]+")
_SIGNATURE = re.compile(rf"[0-9a-f]{{{SIGNATURE_HEX}}}\Z")
#: Added to a finished model's page count in its rank, so it beats any
#: provisional one.
FINAL_RANK = 1_000_000_000


def model_rank(model: SiteModel) -> int:
    """How a model ranks against others of its site: more pages wins, and a
    finished model beats every provisional one. The file store and Redis
    keep the higher one."""
    return model.pages + (0 if model.provisional else FINAL_RANK)


def _flock(fd: int, blocking: bool = True) -> bool:
    """An exclusive ``flock`` on ``fd`` (released when it is closed, or its
    process dies); False where locks are not to be had (no fcntl, a
    filesystem without them) or, not ``blocking``, another holds it."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


class SignatureFileError(ValueError):
    """A signature file is missing parts, corrupt, truncated or foreign."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: {reason}")
        self.path = os.fspath(path)
        self.reason = reason


def site_filename(domain: str) -> str:
    """A safe file name for any domain string.

    A readable slug (ASCII letters, digits, dots and dashes, never leading
    dots, at most 60 characters) plus 16 hex digits of the exact string's
    SHA-256, so no path traversal, no reserved device names and no two
    domains sharing a file.
    """
    slug = _SLUG.sub("-", domain.lower()).strip(".-")[:60].strip(".-") or "site"
    if slug.split(".")[0].upper() in _RESERVED:
        slug = "_" + slug
    digest = sha256(domain.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}--{digest}.json"


def _created() -> str:
    # SOURCE_DATE_EPOCH (reproducible-builds.org) makes files byte-identical
    # across runs, as the determinism test needs.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = int(epoch) if epoch and epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def model_to_json(domain: str, model: SiteModel, keys: bool = True) -> dict:
    """The document a signature file holds (see README, "Signature files").
    ``keys``: False leaves out the pages a learning model remembers
    (``seen``): what worker processes are sent to clean with it."""
    from . import __version__

    doc = {
        "format": FORMAT,
        "version": 3 if model.metadata_hints else 2 if model.provisional else 1,
        "generator": f"scrapy-deboiler {__version__}",
        "domain": domain,
        "created": _created(),
        "params": model.params.to_json(),
        "pages": model.pages,
        "pairs": model.pairs,
        "skipped_pairs": model.skipped_pairs,
        "signatures": dict(sorted(model.support.items())),
    }
    if model.provisional:
        doc["provisional"] = {"page_keys": sorted(model.page_keys)}
    elif model.page_keys and keys:  # DEBOILER_LEARN: older readers skip it
        doc["seen"] = {"page_keys": sorted(model.page_keys)}
    if model.metadata_hints:
        doc["metadata"] = model.metadata_hints.to_json()
    return doc


def _new_temp(path: Path) -> tuple[int, str, bool]:
    """A new temporary file beside ``path`` (named as ``sweep`` finds it),
    created with the process's umask as any file it writes (mkstemp's are
    0600: signature files shared by users or containers were unreadable),
    and locked while it is written (``sweep`` leaves locked ones alone).
    Returns its descriptor, its name, and whether it is locked."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
        locked = _flock(fd)
        try:  # a sweep may have taken it between its creation and the lock
            if not locked or os.stat(tmp).st_ino == os.fstat(fd).st_ino:
                return fd, tmp, locked
        except FileNotFoundError:
            pass
        os.close(fd)


def dump_model(domain: str, model: SiteModel, path: str | os.PathLike, keep_better: bool = False) -> Path | None:
    """Write ``model`` to ``path`` atomically: a temporary file in the same
    folder, flushed to disk, then renamed over the target. ``keep_better``:
    unless the file there holds a model of the same site that ranks higher
    (``model_rank``: a finished one, or one of more pages), read under a
    lock of the folder so that writers in other processes check and rename
    one at a time; None when it was kept."""
    path = Path(path)
    data = json.dumps(model_to_json(domain, model), indent=1, sort_keys=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp, locked = _new_temp(path)
    try:
        f = os.fdopen(fd, "w", encoding="utf-8")
        try:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            if not locked:  # (Windows cannot rename an open file; nothing sweeps it there meanwhile)
                f.close()
            if keep_better:
                with _FolderLock(path.parent):
                    if _ranks_higher(path, domain, model):
                        os.unlink(tmp)
                        return None
                    os.replace(tmp, path)
            else:
                os.replace(tmp, path)  # locked still: a sweep cannot take it meanwhile
        finally:
            f.close()
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _ranks_higher(path: Path, domain: str, model: SiteModel) -> bool:
    """Whether the file at ``path`` holds a model of ``domain`` ranking
    higher than ``model`` (one that cannot be read does not)."""
    try:
        found, there = load_site(path)
    except SignatureFileError:
        return False
    return found == domain and model_rank(there) > model_rank(model)


class _FolderLock:
    """An exclusive ``flock`` of a folder, across processes (none where
    locks are not to be had: then the check and the rename only race)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.fd: int | None = None

    def __enter__(self) -> "_FolderLock":
        try:
            self.fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:  # (Windows cannot open a folder)
            return self
        _flock(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _int(doc: dict, key: str, path) -> int:
    value = doc.get(key)
    if type(value) is not int or value < 0:
        raise SignatureFileError(path, f"{key!r} must be a non-negative integer")
    return value


def model_from_json(doc: object, path: str | os.PathLike = "<data>") -> tuple[str, SiteModel]:
    """Validate a signature document; return its domain and model."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SignatureFileError(path, f"not a {FORMAT} file")
    version = doc.get("version")
    if type(version) is not int or version not in _VERSIONS:
        raise SignatureFileError(
            path, f"format version {version!r} is not supported (this reads 1 to 3)"
        )
    domain = doc.get("domain")
    if not isinstance(domain, str):
        raise SignatureFileError(path, "'domain' must be a string")
    try:
        params = FitParams.from_json(doc["params"])
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise SignatureFileError(path, f"bad 'params': {e!r}") from None
    sigs = doc.get("signatures")
    if not isinstance(sigs, dict):
        raise SignatureFileError(path, "'signatures' must be an object")
    for sig, n in sigs.items():
        if not _SIGNATURE.match(sig) or type(n) is not int or n < 1:
            raise SignatureFileError(path, f"bad signature entry {sig[:40]!r}: {n!r}"[:120])
    provisional = "provisional" in doc
    if provisional and version < 2:
        raise SignatureFileError(path, "'provisional' needs format version 2")
    if provisional and "seen" in doc:
        raise SignatureFileError(path, "'provisional' and 'seen' both list pages: one at most")
    keys = _page_keys(doc, "provisional" if provisional else "seen", path)
    hints = None
    if "metadata" in doc:
        if version < 3:
            raise SignatureFileError(path, "'metadata' needs format version 3")
        try:
            hints = MetadataHints.from_json(doc["metadata"])
        except (ValueError, TypeError) as e:
            raise SignatureFileError(path, f"bad 'metadata': {e}") from None
    model = SiteModel(
        params,
        pages=_int(doc, "pages", path),
        pairs=_int(doc, "pairs", path),
        skipped_pairs=_int(doc, "skipped_pairs", path),
        support=dict(sigs),
        provisional=provisional,
        page_keys=keys,
        metadata_hints=hints,
    )
    return domain, model


def _page_keys(doc: dict, name: str, path: str | os.PathLike) -> frozenset[str]:
    """The page keys under ``doc[name]`` (``{"page_keys": [...]}``), if any."""
    if name not in doc:
        return frozenset()
    held = doc[name]
    if not isinstance(held, dict) or not isinstance(held.get("page_keys"), list):
        raise SignatureFileError(path, f"{name!r} must be an object with a 'page_keys' list")
    raw = held["page_keys"]
    if len(raw) > MAX_PAGE_KEYS or not all(isinstance(k, str) and _PAGE_KEY.match(k) for k in raw):
        raise SignatureFileError(path, "bad 'page_keys': expected up to "
                                       f"{MAX_PAGE_KEYS} strings of 16 hex digits")
    return frozenset(raw)


def load_model(path: str | os.PathLike, domain: str | None = None) -> SiteModel:
    """Read and validate a signature file; with ``domain``, also check that
    the file belongs to that site."""
    found, model = load_site(path)
    if domain is not None and found != domain:
        raise SignatureFileError(path, f"belongs to {found!r}, not {domain!r}")
    return model


def load_site(path: str | os.PathLike) -> tuple[str, SiteModel]:
    """Read and validate a signature file; return its domain and model."""
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise SignatureFileError(path, f"{size} bytes is over the {MAX_FILE_BYTES} limit")
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        if raw[:2] == b"\x1f\x8b":
            raise SignatureFileError(path, "gzip-compressed: signature files are plain JSON (gunzip it first)")
        doc = json.loads(raw.decode("utf-8"))
    except SignatureFileError:
        raise
    except OSError as e:
        raise SignatureFileError(path, f"cannot read: {e.strerror or e}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SignatureFileError(path, f"corrupt or truncated JSON: {str(e)[:200]}") from None
    return model_from_json(doc, path)


class SignatureStoreProtocol(Protocol):
    """What the pipeline needs of a signature store: the class that
    DEBOILER_STORE names (``SignatureStore`` by default) is called with the
    signatures folder (DEBOILER_SIGNATURES_DIR), and its objects load and
    save each site's model. A store may also have ``sweep()``, called as
    the spider opens (``SignatureStore.sweep``: temporary files left
    behind); one without it is not swept."""

    def __init__(self, directory: str) -> None: ...

    def load(self, domain: str) -> SiteModel | None:
        """The site's model, or None when the store has none for it."""
        ...

    def save(self, domain: str, model: SiteModel) -> object:
        """Keep the site's model. What it returns is not used, but for
        ``SignatureStore``'s None: it kept a better model it had."""
        ...


class SignatureStore:
    """A folder of signature files, one per site (a
    ``SignatureStoreProtocol``)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)

    def path(self, domain: str) -> Path:
        return self.directory / site_filename(domain)

    def exists(self, domain: str) -> bool:
        return self.path(domain).is_file()

    def load(self, domain: str) -> SiteModel | None:
        """The site's model, or None when it has no file. A bad file raises
        SignatureFileError naming it."""
        path = self.path(domain)
        if not path.is_file():
            for old in legacy_site_keys(domain):  # saved before hosts were IDNA-encoded
                if (older := self.path(old)).is_file():
                    return load_model(older, old)
            return None
        return load_model(path, domain)

    def save(self, domain: str, model: SiteModel, force: bool = False) -> Path | None:
        """Write the site's model, unless its file holds a better one (a
        finished model, or one fitted on more pages: ``model_rank``, the rule
        of Redis mode), which stays: two crawls sharing the folder, one with
        a finished model, the other a provisional one. Returns the file, or
        None when the better one was kept. ``force``: write it whatever is
        there (``fit --refit``)."""
        return dump_model(domain, model, self.path(domain), keep_better=not force)

    def sweep(self, older_than: float = 3600.0) -> int:
        """Delete temporary files that writers killed mid-write left behind:
        those no writer holds locked (a writer's lock goes with its process),
        and, where files cannot be locked, those older than ``older_than``
        seconds. Returns how many."""
        removed = 0
        if not self.directory.is_dir():
            return removed
        limit = time.time() - older_than
        for tmp in self.directory.glob(".*.json.*.tmp"):
            try:
                fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                continue
            try:
                try:
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    unused = True
                except BlockingIOError:  # being written
                    continue
                except (ImportError, OSError):  # no locks here: by its age
                    unused = os.fstat(fd).st_mtime < limit
                if unused:
                    tmp.unlink()
                    removed += 1
            except OSError:
                pass
            finally:
                os.close(fd)
        return removed

    def __iter__(self) -> Iterator[Path]:
        if self.directory.is_dir():
            yield from sorted(self.directory.glob("*.json"))


if TYPE_CHECKING:  # the type checker checks that the default store is one
    _DEFAULT_STORE: type[SignatureStoreProtocol] = SignatureStore
