"""The Redis coordinator: one model a site for a cluster of crawling processes.

Workers pool each held page's compact signatures (its URL and its sorted
8-byte signatures) in a per-site Redis hash. One Lua script accepts at most
``min_pages`` distinct URLs, so the pool of a site is the same set of pages
whoever reads it; ``SiteModel.fit`` does not depend on input order, so every
worker that fits the pool gets the same model. A second script publishes a
model only if it ranks higher (more pages; finished beats provisional) than
the one there: no lock, and the model with the most pages wins.

Everything read back is untrusted, like a signature file: pool entries and
model documents are validated (``_store.model_from_json``), never unpickled.
The methods are synchronous and block on the network: callers run them off
the reactor thread, with the short timeouts given here.

Key layout (docs/scaling-out.md), ``B = {prefix}:v1:{scheme}:``:

* ``B epoch``: a token set by the first worker; its loss means Redis was wiped;
* ``B pool:{site}``: hash, URL -> sorted 8-byte signatures; expires (``pool_ttl``);
* ``B model:{site}``: hash with ``rank``, ``final`` and ``doc`` (a signature
  file's JSON).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from ._model import FitParams, SiteModel
from ._pagekey import pooled_key
from ._signatures import DEFAULT_SCHEME, SignatureScheme
from ._store import FINAL_RANK, MAX_FILE_BYTES, SignatureFileError, model_from_json, model_rank, model_to_json

__all__ = [
    "FINAL_RANK",
    "KEY_VERSION",
    "Offer",
    "PoolEntryError",
    "RedisCoordinator",
    "key_base",
    "model_rank",
    "pack_signatures",
    "unpack_signatures",
]

logger = logging.getLogger(__name__)

#: The key layout's version, in every key.
KEY_VERSION = 1
#: Pool entries larger than this are refused (a page with a million signed
#: subtrees): 8 bytes a signature.
MAX_ENTRY_BYTES = 8 * 1024 * 1024
#: URLs longer than this are refused as pool fields.
MAX_URL_CHARS = 16 * 1024

# Add a page's signatures to a site's pool, unless the site has a finished
# model (returned instead) or the pool is full. Atomic: a Lua script runs
# alone, so concurrent workers never pool more than the limit.
#   KEYS: pool, model   ARGV: limit, ttl (s), url, signatures
#   -> {2, size, doc} a finished model exists | {1, size} added |
#      {0, size} the URL is pooled already | {-1, size} the pool is full
_OFFER = """
if redis.call('HGET', KEYS[2], 'final') == '1' then
  local doc = redis.call('HGET', KEYS[2], 'doc')
  if doc then return {2, redis.call('HLEN', KEYS[1]), doc} end
end
local n = redis.call('HLEN', KEYS[1])
if redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then return {0, n} end
if n >= tonumber(ARGV[1]) then return {-1, n} end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1, n + 1}
"""

# Compare-and-set a model: kept only if it ranks higher than the one stored.
#   KEYS: model   ARGV: rank, final (0/1), doc
#   -> {1, doc} stored | {0, doc of the model that stays}
_PUBLISH = """
local cur = tonumber(redis.call('HGET', KEYS[1], 'rank') or '-1') or -1
if tonumber(ARGV[1]) > cur then
  redis.call('HSET', KEYS[1], 'rank', ARGV[1], 'final', ARGV[2], 'doc', ARGV[3])
  return {1, ARGV[3]}
end
return {0, redis.call('HGET', KEYS[1], 'doc') or ''}
"""


class PoolEntryError(ValueError):
    """A pool entry (URL and signatures) read from Redis is malformed."""


def scheme_digest(scheme: SignatureScheme = DEFAULT_SCHEME) -> str:
    """16 hex digits naming a signature scheme: pools and models of other
    schemes live under other keys and never mix."""
    data = json.dumps(scheme.to_json(), sort_keys=True, separators=(",", ":")).encode()
    return sha256(data).hexdigest()[:16]


def key_base(prefix: str, scheme: SignatureScheme = DEFAULT_SCHEME) -> str:
    """``{prefix}:v1:{scheme digest}:``, the start of every key."""
    return f"{prefix}:v{KEY_VERSION}:{scheme_digest(scheme)}:"


def pack_signatures(sigs: Iterable[str]) -> bytes:
    """A page's signatures (16-hex-digit strings) as sorted 8-byte digests:
    canonical, so equal pages pool equal bytes."""
    return bytes.fromhex("".join(sorted(set(sigs))))


def unpack_signatures(data: bytes) -> frozenset[str]:
    """The inverse of ``pack_signatures``; malformed data (length, order,
    duplicates, size) raises PoolEntryError."""
    if not isinstance(data, bytes) or len(data) % 8 or len(data) > MAX_ENTRY_BYTES:
        raise PoolEntryError(f"signatures must be a multiple of 8 bytes, at most {MAX_ENTRY_BYTES}")
    hexed = data.hex()
    sigs = [hexed[i:i + 16] for i in range(0, len(hexed), 16)]
    if any(a >= b for a, b in zip(sigs, sigs[1:])):
        raise PoolEntryError("signatures must be sorted and distinct")
    return frozenset(sigs)


@dataclass(frozen=True)
class Offer:
    """What pooling one page gave."""

    #: "added", "known" (the URL is pooled already), "full" or "model".
    status: str
    #: The pool's size afterwards.
    size: int
    #: The site's finished model, when it has one (status "model").
    model: SiteModel | None = None


class RedisCoordinator:
    """Pools, models and the epoch of one cluster in one Redis database."""

    def __init__(self, url: str, *, min_pages: int, prefix: str = "deboiler", pool_ttl: int = 86400,
                 timeout: float = 2.0, params: FitParams | None = None, client: Any = None) -> None:
        self.url = url
        self.min_pages = min_pages
        self.params = params or FitParams()
        self.base = key_base(prefix, self.params.scheme)
        self.pool_ttl = pool_ttl
        if client is None:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                          health_check_interval=0)
        self.client = client
        self._offer = client.register_script(_OFFER)
        self._publish = client.register_script(_PUBLISH)
        self.epoch: bytes | None = None
        self.rejoined = False
        #: Lines about refused data, for the caller to count (a stat).
        self.refused = 0

    # -- keys --------------------------------------------------------------

    def pool_key(self, site: str) -> str:
        return f"{self.base}pool:{site}"

    def model_key(self, site: str) -> str:
        return f"{self.base}model:{site}"

    @property
    def epoch_key(self) -> str:
        return f"{self.base}epoch"

    def where(self) -> str:
        """The Redis URL without its password, for log lines."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"

    # -- the epoch -----------------------------------------------------------

    def connect(self) -> bytes:
        """Check Redis answers and join the cluster's epoch (set by the first
        worker). Returns the epoch token."""
        token = os.urandom(8).hex().encode()
        self.client.set(self.epoch_key, token, nx=True)
        old, self.epoch = self.epoch, self.client.get(self.epoch_key) or token
        #: The epoch changed since this worker last joined one: Redis was
        #: wiped while it could not be reached.
        self.rejoined = old is not None and old != self.epoch
        return self.epoch

    def wiped(self) -> bool:
        """Whether the epoch this worker joined is gone (Redis restarted
        without persistence, FLUSHALL, evicted): then every pool and model
        went too. Joins the new epoch."""
        now = self.client.get(self.epoch_key)
        if now is not None and now == self.epoch:
            return False
        old = self.epoch
        self.connect()
        return old is not None

    # -- pools -------------------------------------------------------------

    def offer(self, site: str, url: str, sigs: Iterable[str]) -> Offer:
        """Pool one page of ``site``; see ``_OFFER``."""
        packed = pack_signatures(sigs)
        reply = self._offer(keys=[self.pool_key(site), self.model_key(site)],
                            args=[self.min_pages, self.pool_ttl, url, packed])
        code, size = int(reply[0]), int(reply[1])
        if code == 2:
            model = self._model(site, reply[2])
            if model is not None:
                return Offer("model", size, model)
            return Offer("full", size)
        return Offer({1: "added", 0: "known", -1: "full"}[code], size)

    def sizes(self, sites: list[str]) -> dict[str, tuple[int, int]]:
        """Each site's pool size and its model's rank (-1: none), in one
        round trip."""
        pipe = self.client.pipeline(transaction=False)
        for site in sites:
            pipe.hlen(self.pool_key(site))
            pipe.hget(self.model_key(site), "rank")
        replies = pipe.execute()
        out = {}
        for i, site in enumerate(sites):
            try:
                rank = int(replies[2 * i + 1]) if replies[2 * i + 1] is not None else -1
            except (TypeError, ValueError):
                rank = -1
            out[site] = (int(replies[2 * i]), rank)
        return out

    def pool(self, site: str) -> list[tuple[str, frozenset[str]]]:
        """The site's pooled pages, validated: malformed entries are left
        out with a log line. At most ``min_pages`` entries, the first by
        URL, so every reader fits the same pages."""
        raw = self.client.hgetall(self.pool_key(site))
        pages = []
        for field, value in sorted(raw.items()):
            try:
                url = field.decode("utf-8") if isinstance(field, bytes) else field
                if not isinstance(url, str) or len(url) > MAX_URL_CHARS:
                    raise PoolEntryError(f"URL over {MAX_URL_CHARS} characters")
                pages.append((url, unpack_signatures(value)))
            except (PoolEntryError, UnicodeDecodeError) as e:
                self.refused += 1
                logger.warning("deboiler: refused a pool entry of %r in Redis (%s): %s", site,
                               self.pool_key(site), e)
        if len(pages) > self.min_pages:
            logger.warning("deboiler: the pool of %r in Redis holds %d pages, more than "
                           "DEBOILER_MIN_PAGES (%d): fitting the first %d by URL", site, len(pages),
                           self.min_pages, self.min_pages)
            self.refused += 1
            pages = pages[:self.min_pages]
        return pages

    # -- models ------------------------------------------------------------

    def model(self, site: str) -> SiteModel | None:
        """The site's published model, or None (also when it is refused)."""
        return self._model(site, self.client.hget(self.model_key(site), "doc"))

    def _model(self, site: str, doc: Any) -> SiteModel | None:
        if doc is None or doc == b"":
            return None
        try:
            return self.parse_model(site, doc)
        except SignatureFileError as e:
            self.refused += 1
            logger.warning("deboiler: refused the model of %r in Redis, %s (it is not used)", site, e)
            return None

    def parse_model(self, site: str, doc: Any, where: str | None = None) -> SiteModel:
        """Validate a model document read from Redis exactly as a signature
        file is validated; it must also name ``site`` and use this scheme."""
        where = where or self.model_key(site)
        if not isinstance(doc, bytes) or len(doc) > MAX_FILE_BYTES:
            raise SignatureFileError(where, f"not a document of at most {MAX_FILE_BYTES} bytes")
        try:
            data = json.loads(doc.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise SignatureFileError(where, f"corrupt JSON: {str(e)[:200]}") from None
        domain, model = model_from_json(data, where)
        if domain != site:
            raise SignatureFileError(where, f"belongs to {domain!r}, not {site!r}")
        if model.params.scheme != self.params.scheme:
            raise SignatureFileError(where, "fitted with another signature scheme than its key says")
        return model

    def publish(self, site: str, model: SiteModel) -> tuple[bool, SiteModel]:
        """Store ``model`` unless one that ranks as high is there. Returns
        whether it was stored, and the model that stays (``model`` itself
        when the stored one is refused)."""
        doc = json.dumps(model_to_json(site, model), sort_keys=True, separators=(",", ":"))
        reply = self._publish(keys=[self.model_key(site)],
                              args=[model_rank(model), 0 if model.provisional else 1, doc])
        if int(reply[0]) == 1:
            return True, model
        winner = self._model(site, reply[1])
        return False, winner if winner is not None else model

    def fit_pool(self, site: str) -> tuple[SiteModel | None, int]:
        """Fit the site's pool (None when it has under two usable pages) and
        publish it; returns the model that stays and the pages fitted."""
        current = self.model(site)
        if current is not None and not current.provisional:
            return current, current.pages  # published already (or imported)
        pages = self.pool(site)
        if len(pages) < 2:
            return current, len(pages)
        model = SiteModel.fit(pages, self.params)
        if len(pages) < self.min_pages:
            model.provisional = True
            model.page_keys = frozenset(pooled_key(url) for url, _ in pages)
        _, winner = self.publish(site, model)
        return winner, len(pages)

    # -- export and import ----------------------------------------------------

    def model_keys(self) -> Iterator[tuple[str, bytes]]:
        """(site, key) of every model under this prefix and scheme, by SCAN
        (never KEYS: it would block Redis on a large database)."""
        start = f"{self.base}model:"
        pattern = _glob_escape(start) + "*"
        for key in self.client.scan_iter(match=pattern, count=500):
            k = key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else key
            yield k[len(start):], key

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass


def _glob_escape(s: str) -> str:
    """``s`` as a literal in a SCAN MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in s)
