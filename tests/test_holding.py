"""The holding policy on its own: which site waits, when it goes, and why."""

from dataclasses import dataclass

from scrapy_deboiler._holding import Hold, HoldingPolicy


@dataclass
class Crawl:
    closing: bool = False
    quiet: bool = False
    starved: bool = False


QUIET, BUSY_CRAWL, CLOSING, STARVED = Crawl(quiet=True), Crawl(), Crawl(closing=True), Crawl(starved=True)


def names(released):
    return sorted((h.name, why) for h, why in released)


def test_a_local_site_goes_at_the_threshold():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9)
    site = Hold("a", pages=4)
    assert policy.at_arrival(site) is None
    site.pages = 5
    assert policy.at_arrival(site) == "threshold"
    site.busy = True
    assert policy.at_arrival(site) is None


def test_a_pooled_site_goes_by_its_pool_not_by_what_it_holds():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9)
    site = Hold("a", pages=9, pooled=True)
    assert policy.at_arrival(site) is None
    assert policy.at_pool(site, 3, now=1.0) is None and site.pool_grew == 1.0
    assert policy.at_pool(site, 3, now=2.0) is None and site.pool_grew == 1.0  # did not grow
    assert policy.at_pool(site, 5, now=3.0) == "pool_full" and site.pool_grew == 3.0


def test_quiet_takes_two_ticks_and_a_pooled_site_waits_for_its_pool_to_stop_growing():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9, pool_wait=5.0)
    local, pooled = Hold("local", pages=2), Hold("pooled", pages=2, pooled=True)
    policy.at_pool(pooled, 3, now=100.0)
    assert policy.at_tick([local, pooled], QUIET, busy=False, now=101.0) == []
    assert names(policy.at_tick([local, pooled], QUIET, busy=False, now=101.5)) == [("local", "quiet")]
    local.pages = 0  # released
    assert policy.at_tick([local, pooled], QUIET, busy=False, now=104.0) == []
    policy.at_pool(pooled, 4, now=104.5)  # another worker pooled a page: wait again
    assert policy.at_tick([pooled], QUIET, busy=False, now=108.0) == []
    assert names(policy.at_tick([pooled], QUIET, busy=False, now=109.5)) == [("pooled", "pool_quiet")]


def test_a_stall_of_this_process_is_not_taken_for_a_quiet_pool():
    """A pool watched for 0.5 s, then a 10 s gap between two looks (the
    whole process stalled, and the pages on their way to the pool with it):
    the gap counts as ``look_gap``, and the site waits for looks that
    really watch the pool, not for a clock that ran while nobody looked."""
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9, pool_wait=3.0, look_gap=1.0)
    pooled = Hold("pooled", pages=3, pooled=True)
    policy.at_pool(pooled, 4, now=100.0)
    policy.at_pool(pooled, 4, now=100.5)
    policy.at_tick([pooled], QUIET, busy=False, now=110.0)
    assert policy.at_tick([pooled], QUIET, busy=False, now=110.0) == []  # 0.5 s + 1 s watched
    policy.at_pool(pooled, 4, now=110.1)
    for now in (110.6, 111.1):  # 2.0, 2.5 s watched
        policy.at_pool(pooled, 4, now=now)
        assert policy.at_tick([pooled], QUIET, busy=False, now=now) == []
    policy.at_pool(pooled, 4, now=111.6)
    assert names(policy.at_tick([pooled], QUIET, busy=False, now=111.6)) == [("pooled", "pool_quiet")]
    # A page after the stall starts the wait again.
    policy.at_pool(pooled, 5, now=112.2)
    assert pooled.pool_watched == 0.0 and policy.at_tick([pooled], QUIET, busy=False, now=113.0) == []


def test_activity_or_a_running_fit_resets_quiet():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9)
    site = Hold("a", pages=2)
    policy.at_tick([site], QUIET, busy=False, now=0)
    policy.at_tick([site], BUSY_CRAWL, busy=False, now=0)
    assert policy.at_tick([site], QUIET, busy=False, now=0) == []
    assert policy.at_tick([site], QUIET, busy=True, now=0) == []
    assert policy.at_tick([site], QUIET, busy=False, now=0) == []
    assert names(policy.at_tick([site], QUIET, busy=False, now=0)) == [("a", "quiet")]


def test_closing_releases_everything_and_starving_unless_a_fit_runs():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9)
    sites = [Hold("a", pages=1), Hold("b", pages=3, pooled=True), Hold("c", pages=0)]
    assert names(policy.at_tick(sites, CLOSING, busy=True, now=0)) == [("a", "closing"), ("b", "closing")]
    assert policy.at_tick(sites, STARVED, busy=True, now=0) == []
    assert names(policy.at_tick(sites, STARVED, busy=False, now=0)) == [("a", "starved"), ("b", "starved")]


def test_the_budget_releases_the_oldest_sites_first_until_the_rest_fits():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=100)
    sites = [Hold("new", pages=1, bytes=60, first=9), Hold("old", pages=1, bytes=30, first=1),
             Hold("mid", pages=2, bytes=50, first=5), Hold("fitting", pages=2, bytes=90, first=0, busy=True)]
    assert [h.name for h in policy.over_budget(sites, held_bytes=140)] == ["old", "mid"]
    assert policy.over_budget(sites, held_bytes=100) == []


def test_a_site_waiting_too_long_goes_while_the_crawl_runs():
    policy = HoldingPolicy(min_pages=5, max_held_bytes=10**9, max_hold=60.0)
    old, new = Hold("old", pages=1, since=100.0), Hold("new", pages=3, since=150.0)
    pooled, fitting = Hold("pooled", pages=1, since=0.0, pooled=True), Hold("fitting", pages=2, since=0.0, busy=True)
    assert policy.at_tick([old, new, pooled, fitting], BUSY_CRAWL, busy=False, now=159.9) == []
    # The pooled site goes by its pool; a fitting one's items wait for the fit.
    assert names(policy.at_tick([old, new, pooled, fitting], BUSY_CRAWL, busy=True, now=160.0)) == [
        ("old", "timeout")]
    assert names(policy.at_tick([new], BUSY_CRAWL, busy=False, now=210.0)) == [("new", "timeout")]
    # Without max_hold a site waits for the threshold, the budget or the end.
    assert HoldingPolicy(min_pages=5, max_held_bytes=10**9).at_tick([old], BUSY_CRAWL, busy=False, now=1e9) == []


def test_release_reasons_are_named_once_and_documented():
    """A reason is a member of ``Release``, whose value is its stat's key: a
    misspelt reason fails instead of making a new stat, and the docs list
    exactly the stats there are."""
    import re
    from pathlib import Path

    import pytest

    from scrapy_deboiler._holding import Release

    with pytest.raises(ValueError):
        Release("treshold")
    assert f"released/{Release.AFTER_FIT}" == "released/after_fit"
    root = Path(__file__).resolve().parent.parent
    text = "".join(p.read_text() for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    assert set(re.findall(r"released/([a-z_]+)", text)) == {r.value for r in Release}
