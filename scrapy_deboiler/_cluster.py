"""Redis mode (DEBOILER_REDIS_URL): held pages pooled across crawling
processes, one model a site for all of them."""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, fail
from twisted.internet.task import deferLater
from twisted.internet.threads import deferToThreadPool

from ._clean import Page
from ._holding import Release
from ._model import SiteModel
from ._pipeline_state import PipelineBase, _HeldPage, _Site
from ._provisional import read_as
from ._redis import FINAL_RANK, model_rank
from ._workplace import sign_page

__all__ = ["Cluster"]

logger = logging.getLogger(__name__)

#: The close waits at most this long for the cluster's last answers.
_CLOSING_REDIS_WAIT = 30.0


def is_redis_error(e: BaseException) -> bool:
    try:
        from redis.exceptions import RedisError
    except ImportError:
        return False
    return isinstance(e, RedisError)


class Cluster(PipelineBase):
    """Redis mode's glue: pools held pages' signatures, fits or adopts the
    cluster's model of a site."""

    def _release_site(self, site: _Site, reason: Release) -> None:
        """Release a site the policy let go: a pooled one is fitted on the
        cluster's pool (what every worker sees), others on what they hold."""
        if site.hold.pooled and self.redis_up and site.model is None and reason != Release.SHUTDOWN:
            self._fit_pool(site, reason)
        else:
            self._release(site, reason)

    def _in_redis(self, f: Any, *args: Any) -> Deferred:
        """``f(*args)`` in the Redis threads: never on the reactor thread."""
        from twisted.internet import reactor

        if self._redis_threads is None:  # closed: fail like an unreachable Redis
            return fail(ConnectionError("the pipeline is closed"))
        d = deferToThreadPool(reactor, self._redis_threads, f, *args)
        self._redis_calls.add(d)

        def answered(result: Any) -> Any:
            self._redis_calls.discard(d)
            return result

        return d.addBoth(answered)

    async def _settle_redis(self) -> None:
        """The close, before the models are saved: the Redis calls in flight
        answer (the offers of the last pages cleaned, the pool's fit they
        start: they come after the last item left, the later the farther
        Redis is), then a site still provisional takes the finished model
        another worker published meanwhile. A crawl closed without them
        saved its provisional model, not the cluster's. At most
        ``_CLOSING_REDIS_WAIT`` seconds."""
        deadline = time.monotonic() + _CLOSING_REDIS_WAIT
        await self._redis_answered(deadline)
        sites = [s for s in self.sites.values()
                 if s.hold.pooled and not s.hold.busy and s.model is not None and s.model.provisional]
        if sites and self.redis_up and self.redis is not None:
            def published(sizes: dict[str, tuple[int, int]]) -> None:
                for site in sites:
                    assert site.model is not None
                    if site.hold.pooled and sizes[site.name][1] > model_rank(site.model):
                        self._fit_pool(site, Release.POOL_MODEL)  # takes the published model (not if busy)

            d = self._in_redis(self.redis.sizes, [s.name for s in sites])
            d.addCallbacks(published, self._redis_failed)
            d.addErrback(self._pipeline_error)
            await self._redis_answered(deadline)
        if self._redis_calls:
            self._inc("redis/close_timeouts")
            logger.warning("deboiler: %d Redis calls still unanswered %gs into the close: the sites waiting "
                           "for them keep the models they have", len(self._redis_calls), _CLOSING_REDIS_WAIT)

    async def _redis_answered(self, deadline: float) -> None:
        from twisted.internet import reactor

        while self._redis_calls and time.monotonic() < deadline:
            await maybe_deferred_to_future(deferLater(reactor, 0.01, lambda: None))

    def _redis_connect(self) -> Deferred:
        assert self.redis is not None
        redis = self.redis

        def up(_: Any) -> None:
            again = self._redis_retry_at > 0
            self.redis_up = True
            self._redis_warned = False
            self._inc("redis/connects")
            logger.info("deboiler: %s site models in Redis at %s (keys %s*)",
                        "pooling again" if again else "pooling", redis.where(), redis.base)
            if redis.rejoined:
                self._inc("redis/wiped")
                logger.warning("deboiler: Redis at %s was wiped while it could not be reached "
                               "(restarted without persistence?): the cluster's pools and models "
                               "are gone; new sites pool again", redis.where())

        d = self._in_redis(redis.connect)
        d.addCallbacks(up, self._redis_failed)
        return d

    def _redis_failed(self, failure: Any) -> None:
        """A Redis call failed: every pooled site falls back to the local
        rules at once (a site holding enough pages is fitted on them now);
        new sites run locally until a retry connects. One warning an outage."""
        if self._redis_threads is None:  # a late answer after the close: no outage
            return
        self._redis_retry_at = time.monotonic() + self._redis_retry
        self._inc("redis/errors")
        was_up, self.redis_up = self.redis_up, False
        held = [s for s in self.sites.values() if s.hold.pooled or s.lookup]
        self._go_local(held)
        if self._redis_warned:
            return
        self._redis_warned = True
        assert self.redis is not None
        logger.warning("deboiler: Redis at %s %s (%s: %s): %d sites with held items fall back to "
                       "local rules; new sites retry Redis every %gs", self.redis.where(),
                       "failed" if was_up else "cannot be reached", failure.type.__name__,
                       failure.getErrorMessage()[:200], len([s for s in held if s.held]), self._redis_retry)
        self._inc("redis/outages")

    def _go_local(self, sites: list[_Site]) -> None:
        for site in sites:
            site.hold.pooled = False
            self._inc("redis/sites_local")
            if site.lookup:
                site.lookup = False
                if site.model is None:  # its signature file, then the local rules
                    self._load(site).addCallback(self._local_rules_after, site)
                    continue
            self._local_rules(site)

    def _local_rules_after(self, _: object, site: _Site) -> None:
        self._local_rules(site)

    def _local_rules(self, site: _Site) -> None:
        """A site that no longer waits for Redis: its model's, or the
        holding policy's, release."""
        if site.hold.pooled or site.lookup or site.loading is not None:
            return  # Redis came back and took it meanwhile, or its file is still being read
        if site.model is not None:
            if site.held:
                self._release(site, Release.MODEL)
            return
        reason = self.policy.at_arrival(site.hold)
        if reason is not None:
            self._release(site, reason)

    def _redis_lookup(self, site: _Site) -> None:
        """A new site: its published model, then its signature file, else
        its pages go to the pool. Items wait for the answer."""
        assert self.redis is not None
        site.lookup = True
        site.hold.pooled = True

        def found(model: SiteModel | None) -> None:
            if not site.lookup:  # Redis failed meanwhile: the site went local
                return
            site.lookup = False
            self._count_refused()
            if model is not None:
                self._adopt(site, model, Release.LOOKUP)
                return
            self._load(site).addCallback(lambda _: from_file())  # pages were pooled as they came

        def from_file() -> None:
            if not site.hold.pooled:  # Redis failed while the file was read
                self._local_rules(site)
            elif site.model is not None and site.source == "file":
                site.hold.pooled = False
                if not site.model.provisional:
                    self._publish_file(site, site.model)
                self._release(site, Release.MODEL)

        d = self._in_redis(self.redis.model, site.name)
        d.addCallbacks(found, self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _publish_file(self, site: _Site, model: SiteModel) -> None:
        """A finished model from this worker's signature file, which Redis
        lacks, becomes the cluster's: a worker without the file (a new
        machine) would pool and fit the site again. (A provisional one goes
        on learning here; Redis ranks models by their pages.)"""
        assert self.redis is not None

        def done(reply: tuple[bool, SiteModel]) -> None:
            if reply[0]:
                self._inc("redis/files_published")

        d = self._in_redis(self.redis.publish, site.name, model)
        d.addCallbacks(done, self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _pool_page(self, site: _Site, page: _HeldPage) -> None:
        """Sign a held page (in a worker process that keeps it parsed, else
        in the cleaning threads) and offer its signatures to the site's
        pool (in the Redis threads)."""
        assert self.redis is not None
        redis = self.redis
        url = page.url.split("#", 1)[0]
        d = self._sign_held(page)
        if d is not None:
            d.addCallback(lambda signed: self._in_redis(redis.offer, site.name, url, signed[0]))
        else:
            d = self.work.in_pool(sign_page, page.html, page.url, page.encoding, self.params)

            def signed(parsed: Page) -> Deferred:
                if site.held.get(page.key) is page:
                    page.parsed = parsed  # still held: cleaned from this parse
                return self._in_redis(redis.offer, site.name, url, parsed.signatures)

            d.addCallback(signed)

        def failed(f: Any) -> None:
            if f.check(ConnectionError, TimeoutError, OSError) or is_redis_error(f.value):
                self._redis_failed(f)
            else:  # signing failed: the page is cleaned (or not) when released
                logger.warning("deboiler: cannot pool %s: %s: %s", url, f.type.__name__, f.getErrorMessage())
                self._inc("redis/pool_errors")

        d.addCallbacks(lambda offer: self._offered(site, offer), failed)
        d.addErrback(self._pipeline_error)

    def _offer(self, site: _Site, url: str, sigs: frozenset[str]) -> None:
        """A page cleaned with a provisional model of the cluster: its
        signatures join the pool, which completes the model once full."""
        assert self.redis is not None
        d = self._in_redis(self.redis.offer, site.name, url.split("#", 1)[0], sigs)
        d.addCallbacks(lambda offer: self._offered(site, offer), self._redis_failed)
        d.addErrback(self._pipeline_error)

    def _offered(self, site: _Site, offer: Any) -> None:
        self._count_refused()
        if offer.status == "added":
            self._inc("redis/pages_pooled")
        if not site.hold.pooled or (site.model is not None and not site.model.provisional):
            return
        if site.hold.busy:
            # Our own fit of the pool is running and may have published the
            # model this offer carries: its result (the model that stays) is
            # adopted when it comes, and said to be fitted here, not taken.
            return
        mine = model_rank(site.model) if site.model is not None else -1
        if offer.model is not None and model_rank(offer.model) > mine:
            self._adopt(site, offer.model, Release.POOL_MODEL)
            return
        reason = self.policy.at_pool(site.hold, offer.size, time.monotonic())
        if reason is not None:
            self._fit_pool(site, reason)

    def _fit_pool(self, site: _Site, reason: Release) -> None:
        """Fit the site's pool (any worker gets the same model), publish it
        unless a model as good is there, and release the held items with the
        model that stays. A pool too small or unreachable: the local rules."""
        assert self.redis is not None
        if site.hold.busy:
            return
        site.hold.busy = True
        self.busy += 1
        started = time.perf_counter()

        def done(result: tuple[SiteModel | None, int]) -> None:
            site.hold.busy = False
            self.busy -= 1
            self._count_refused()
            model, pooled = result
            if model is None:  # under two usable pages in the pool, or a refused model
                if reason in (Release.POOL_FULL, Release.POOL_MODEL):
                    self._go_local([site])  # nothing to use from Redis: the local rules
                else:
                    # Released early (budget, timeout, closing) before the
                    # pool could be fitted (its pages' offers may be on their
                    # way): fitted here on what it holds, provisionally, it
                    # keeps pooling and takes the cluster's model when one is
                    # fitted. Made local, it kept a model of its own for good.
                    self._release(site, reason)
                return
            if site.model is not None and model_rank(model) <= model_rank(site.model):
                self._release(site, reason)  # nothing better than what it has
                return
            self._site_log("deboiler: %s: the cluster's model (%d pooled pages, %d boilerplate signatures%s) "
                           "in %.2fs", site.name or "?", model.pages, len(model.boilerplate),
                           ", provisional" if model.provisional else "", time.perf_counter() - started)
            self._adopt(site, model, reason, logged=True)

        def failed(f: Any) -> None:
            site.hold.busy = False
            self.busy -= 1
            self._redis_failed(f)
            if site.held and site.model is None:
                self._release(site, reason)

        d = self._in_redis(self.redis.fit_pool, site.name)
        d.addCallbacks(done, failed)
        d.addErrback(self._pipeline_error)

    def _adopt(self, site: _Site, model: SiteModel, reason: Release, logged: bool = False) -> None:
        """The site's model came from Redis: use it, save it in the file
        store too (what a worker without Redis reads), release held items.
        ``logged``: the caller said so already (it fitted the pool)."""
        read_as(model, self.min_pages)
        if not logged:  # another worker's: one line, as a model from a file gets
            self._site_log("deboiler: %s uses the cluster's model from Redis (%d pages, %d boilerplate "
                           "signatures%s)", site.name or "?", model.pages, len(model.boilerplate),
                           ", provisional" if model.provisional else "")
        if not model.provisional and model.pages < self.min_pages:
            # Finished on fewer pages than this worker would fit on: another
            # worker (or an earlier crawl) runs with a smaller setting, and its
            # models are the cluster's. Said once: every site shows it.
            self._inc("redis/models_under_min_pages")
            if not self._warned_min_pages:
                self._warned_min_pages = True
                logger.warning("deboiler: the cluster's model of %s was fitted on %d pages, fewer than this "
                               "worker's DEBOILER_MIN_PAGES (%d): another worker, or an earlier crawl, runs "
                               "with a smaller one, and the cluster uses its models; give every worker the "
                               "same (stat deboiler/redis/models_under_min_pages counts such sites)",
                               site.name or "?", model.pages, self.min_pages)
        site.model, site.source = model, "redis"
        site.hold.pooled = model.provisional and self.redis_up
        self._inc("redis/models_provisional" if model.provisional else "redis/models")
        self._save(site, model)
        if site.held:
            self._release(site, reason)

    def _redis_tick(self) -> None:
        """Each watchdog tick: retry an unreachable Redis; else look at the
        pools of sites that hold items (growth, a model published by another
        worker) and whether Redis was wiped. One job at a time."""
        assert self.redis is not None
        if self._redis_polling:
            return
        if not self.redis_up:
            if time.monotonic() >= self._redis_retry_at:
                self._redis_polling = True
                self._redis_retry_at = time.monotonic() + self._redis_retry
                d = self._redis_connect()
                d.addBoth(self._polled)
            return
        sites = [s.name for s in self.sites.values()
                 if s.hold.pooled and not s.lookup and (s.held or (s.model is not None and s.model.provisional))]
        redis = self.redis

        def poll() -> tuple[bool, dict[str, tuple[int, int]]]:
            return redis.wiped(), redis.sizes(sites) if sites else {}

        self._redis_polling = True
        d = self._in_redis(poll)
        d.addCallbacks(self._polled_sites, self._redis_failed)
        d.addErrback(self._pipeline_error)
        d.addBoth(self._polled)

    def _polled(self, _: Any) -> None:
        self._redis_polling = False

    def _polled_sites(self, result: tuple[bool, dict[str, tuple[int, int]]]) -> None:
        wiped, sizes = result
        if wiped:
            self._inc("redis/wiped")
            pooled = [s for s in self.sites.values() if s.hold.pooled and s.held]
            logger.warning("deboiler: Redis at %s was wiped (restarted without persistence, flushed or "
                           "evicted): the pools and models of the cluster are gone; %d sites with held "
                           "items fall back to local rules, new sites pool again",
                           self.redis.where() if self.redis else "?", len(pooled))
            self._go_local(pooled)
            return
        now = time.monotonic()
        for name, (size, rank) in sizes.items():
            site = self.sites.get(name)
            if site is None or not site.hold.pooled or site.hold.busy:
                continue
            mine = model_rank(site.model) if site.model is not None else -1
            if rank > mine and (rank >= FINAL_RANK or site.model is not None):
                # A better model was published (another worker filled the pool).
                self._fit_pool(site, Release.POOL_MODEL)
                continue
            reason = self.policy.at_pool(site.hold, size, now)
            if reason is not None:
                self._fit_pool(site, reason)

    def _count_refused(self) -> None:
        """Pool entries and models refused since last asked: a stat."""
        if self.redis is not None and self.redis.refused != self._redis_refused:
            self._inc("redis/refused", self.redis.refused - self._redis_refused)
            self._redis_refused = self.redis.refused
