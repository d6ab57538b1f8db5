"""Signature files: one versioned JSON file per site, written atomically."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

from ._model import FitParams, SiteModel
from ._signatures import SIGNATURE_HEX

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SignatureFileError",
    "SignatureStore",
    "dump_model",
    "load_model",
    "load_site",
    "site_filename",
]

FORMAT = "scrapy-deboiler-signatures"
#: Version 2 adds ``provisional``; models that are not provisional are still
#: written as version 1, which every release reads. Releases that read only
#: version 1 refuse provisional files and fit those sites again, rather than
#: take a model of a few pages for a finished one.
FORMAT_VERSION = 2
_VERSIONS = (1, 2)
#: At most this many page keys in a provisional file.
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


def model_to_json(domain: str, model: SiteModel) -> dict:
    """The document a signature file holds (see README, "Signature files")."""
    from . import __version__

    doc = {
        "format": FORMAT,
        "version": 2 if model.provisional else 1,
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
    return doc


def _new_temp(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path`` (named as ``sweep`` finds it),
    created with the process's umask as any file it writes (mkstemp's are
    0600: signature files shared by users or containers were unreadable)."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue


def dump_model(domain: str, model: SiteModel, path: str | os.PathLike) -> Path:
    """Write ``model`` to ``path`` atomically: a temporary file in the same
    folder, flushed to disk, then renamed over the target."""
    path = Path(path)
    data = json.dumps(model_to_json(domain, model), indent=1, sort_keys=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


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
            path, f"format version {version!r} is not supported (this reads 1 and 2)"
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
    provisional, keys = False, frozenset()
    if "provisional" in doc:
        prov = doc["provisional"]
        if version < 2:
            raise SignatureFileError(path, "'provisional' needs format version 2")
        if not isinstance(prov, dict) or not isinstance(prov.get("page_keys"), list):
            raise SignatureFileError(path, "'provisional' must be an object with a 'page_keys' list")
        raw = prov["page_keys"]
        if len(raw) > MAX_PAGE_KEYS or not all(isinstance(k, str) and _PAGE_KEY.match(k) for k in raw):
            raise SignatureFileError(path, "bad 'page_keys': expected up to "
                                           f"{MAX_PAGE_KEYS} strings of 16 hex digits")
        provisional, keys = True, frozenset(raw)
    model = SiteModel(
        params,
        pages=_int(doc, "pages", path),
        pairs=_int(doc, "pairs", path),
        skipped_pairs=_int(doc, "skipped_pairs", path),
        support=dict(sigs),
        provisional=provisional,
        page_keys=keys,
    )
    return domain, model


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


class SignatureStore:
    """A folder of signature files, one per site."""

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
            return None
        return load_model(path, domain)

    def save(self, domain: str, model: SiteModel) -> Path:
        return dump_model(domain, model, self.path(domain))

    def sweep(self, older_than: float = 3600.0) -> int:
        """Delete temporary files that writers killed mid-write left behind
        (older than ``older_than`` seconds, so no live write is touched);
        returns how many."""
        removed = 0
        if not self.directory.is_dir():
            return removed
        limit = time.time() - older_than
        for tmp in self.directory.glob(".*.json.*.tmp"):
            try:
                if tmp.stat().st_mtime < limit:
                    tmp.unlink()
                    removed += 1
            except OSError:
                pass
        return removed

    def __iter__(self) -> Iterator[Path]:
        if self.directory.is_dir():
            yield from sorted(self.directory.glob("*.json"))
