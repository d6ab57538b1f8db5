"""The Redis coordinator against a real redis-server: pools capped by one
atomic script under concurrent writers, one model winning, hostile data
refused, a wipe noticed."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from redisserver import redis_server  # noqa: F401 (a fixture)
from scrapy_deboiler import FitParams, Page, SiteModel
from scrapy_deboiler._redis import (FINAL_RANK, KEY_VERSION, RedisCoordinator, key_base, model_rank,
                                    pack_signatures, scheme_digest, unpack_signatures)
from scrapy_deboiler._signatures import SignatureScheme
from scrapy_deboiler._store import model_to_json
from sitegen import article_page

SITE = "alpha.example"


def pages(n: int, site: str = SITE):
    return [Page(html, url) for url, html, _ in (article_page(site, i) for i in range(n))]


def coordinator(server, min_pages: int = 20, **kw) -> RedisCoordinator:
    return RedisCoordinator(server.url, min_pages=min_pages, timeout=5, **kw)


def test_keys_carry_the_version_and_the_signature_scheme():
    base = key_base("deboiler")
    assert base == f"deboiler:v{KEY_VERSION}:{scheme_digest()}:" and len(scheme_digest()) == 16
    other = SignatureScheme(template_min_elements=5)
    assert key_base("deboiler", other) != base


def test_signatures_pack_to_sorted_8_byte_digests_and_back():
    page = pages(1)[0]
    packed = pack_signatures(page.signatures)
    assert len(packed) == 8 * len(page.signatures)
    assert unpack_signatures(packed) == page.signatures
    assert pack_signatures(sorted(page.signatures, reverse=True)) == packed  # canonical


def test_many_concurrent_appends_pool_exactly_min_pages_and_one_model_wins(redis_server):
    """16 workers (threads, each with its own connection) offer 40 pages of
    one site at once, then all fit the pool and publish: the pool holds
    exactly DEBOILER_MIN_PAGES pages, exactly one publish is stored, and
    every worker ends with that model, equal to a fit of the pooled pages."""
    site_pages = pages(40)
    workers = [coordinator(redis_server) for _ in range(16)]
    start = threading.Barrier(len(workers))
    offers: list[list[str]] = [[] for _ in workers]
    published: list[tuple[bool, SiteModel]] = [None] * len(workers)  # type: ignore[list-item]

    def work(k: int) -> None:
        w = workers[k]
        w.connect()
        start.wait()
        for j in range(len(site_pages)):
            p = site_pages[(j * 7 + k) % len(site_pages)]  # each in its own order
            offers[k].append(w.offer(SITE, p.url, p.signatures).status)
        start.wait()
        pooled = w.pool(SITE)
        published[k] = w.publish(SITE, SiteModel.fit(pooled, w.params))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    client = redis_server.client()
    pool = client.hgetall(workers[0].pool_key(SITE))
    assert len(pool) == 20
    assert sum(o.count("added") for o in offers) == 20
    assert all(set(o) <= {"added", "known", "full"} for o in offers)
    assert [won for won, _ in published].count(True) == 1
    models = [m for _, m in published]
    assert all(m.support == models[0].support and m.pages == 20 for m in models)
    by_url = {p.url: p for p in site_pages}
    local = SiteModel.fit([by_url[u.decode()] for u in pool], FitParams())
    assert local.support == models[0].support and not models[0].provisional
    # Later offers get the finished model instead of growing the pool.
    late = workers[0].offer(SITE, "http://alpha.example/late", site_pages[0].signatures)
    assert late.status == "model" and late.model.support == local.support
    assert client.hlen(workers[0].pool_key(SITE)) == 20 and client.ttl(workers[0].pool_key(SITE)) > 0


def test_the_model_with_the_most_pages_wins_and_finished_beats_provisional(redis_server):
    c = coordinator(redis_server, min_pages=6)
    ps = pages(8)
    small = SiteModel.fit(ps[:3])
    small.provisional = True
    bigger = SiteModel.fit(ps[:5])
    bigger.provisional = True
    final = SiteModel.fit(ps[:6])
    assert c.publish(SITE, small)[0]
    assert c.publish(SITE, bigger)[0]
    won, stays = c.publish(SITE, small)
    assert not won and stays.pages == 5 and stays.provisional
    assert c.publish(SITE, final)[0] and model_rank(final) >= FINAL_RANK
    huge = SiteModel.fit(ps)
    huge.provisional = True  # more pages, but provisional: loses
    won, stays = c.publish(SITE, huge)
    assert not won and stays.pages == 6 and not stays.provisional
    assert c.model(SITE).support == final.support


def test_fit_pool_is_the_same_whoever_fits_and_a_small_pool_is_provisional(redis_server):
    a, b = coordinator(redis_server, min_pages=6), coordinator(redis_server, min_pages=6)
    ps = pages(4)
    for p in ps:
        a.offer(SITE, p.url, p.signatures)
    model, n = b.fit_pool(SITE)
    assert n == 4 and model.provisional and len(model.page_keys) == 4
    assert model.support == SiteModel.fit(ps).support
    again, _ = a.fit_pool(SITE)
    assert again.support == model.support


def test_hostile_pool_entries_are_refused_with_a_log_line(redis_server, caplog):
    c = coordinator(redis_server, min_pages=10)
    ps = pages(4)
    for p in ps:
        c.offer(SITE, p.url, p.signatures)
    client = redis_server.client()
    key = c.pool_key(SITE)
    good = pack_signatures(ps[0].signatures)
    client.hset(key, "http://alpha.example/odd-length", good + b"\x01")
    client.hset(key, "http://alpha.example/unsorted", good[8:16] + good[:8])
    client.hset(key, "http://alpha.example/duplicates", good[:8] + good[:8])
    client.hset(key, b"http://alpha.example/\xff\xfe", good)
    caplog.set_level(logging.WARNING)
    pooled = c.pool(SITE)
    assert sorted(u for u, _ in pooled) == sorted(p.url for p in ps)
    refused = [r.getMessage() for r in caplog.records if "refused a pool entry" in r.getMessage()]
    assert len(refused) == 4 and c.refused == 4
    assert any("multiple of 8 bytes" in m for m in refused)
    assert any("sorted and distinct" in m for m in refused)


def test_a_pool_stuffed_beyond_the_limit_is_cut_the_same_way_for_everyone(redis_server, caplog):
    c = coordinator(redis_server, min_pages=3)
    client = redis_server.client()
    for p in pages(6):
        client.hset(c.pool_key(SITE), p.url, pack_signatures(p.signatures))
    pooled = c.pool(SITE)
    assert [u for u, _ in pooled] == sorted(p.url for p in pages(6))[:3]
    assert any("more than DEBOILER_MIN_PAGES" in r.getMessage() for r in caplog.records)


HOSTILE_MODELS = {
    "not JSON": b"{not json",
    "not UTF-8": b"\xff\xfe{}",
    "another format": json.dumps({"format": "pickle", "version": 1}).encode(),
    "a bad signature": None,  # filled below
    "another site": None,
    "another scheme": None,
    "a negative page count": None,
}


def _hostile(kind: str) -> bytes:
    model = SiteModel.fit(pages(3))
    doc = model_to_json(SITE, model)
    if kind == "a bad signature":
        doc["signatures"]["zz" * 8] = 3
    elif kind == "another site":
        doc["domain"] = "evil.example"
    elif kind == "another scheme":
        doc["params"]["scheme"]["template_min_elements"] = 99
    elif kind == "a negative page count":
        doc["pages"] = -5
    return json.dumps(doc).encode()


@pytest.mark.parametrize("kind", list(HOSTILE_MODELS))
def test_hostile_model_documents_are_refused_with_a_log_line(redis_server, caplog, kind):
    c = coordinator(redis_server, min_pages=3)
    doc = HOSTILE_MODELS[kind] or _hostile(kind)
    redis_server.client().hset(c.model_key(SITE), mapping={"rank": FINAL_RANK + 3, "final": 1, "doc": doc})
    caplog.set_level(logging.WARNING)
    assert c.model(SITE) is None and c.refused == 1
    (line,) = [r.getMessage() for r in caplog.records if "refused the model" in r.getMessage()]
    assert SITE in line and c.model_key(SITE) in line
    # An offer meets the hostile "finished" model: refused too, and the page
    # is not pooled (the pool is not what was fitted); fitting the pool falls
    # back to the pages there.
    p = pages(1)[0]
    assert c.offer(SITE, p.url, p.signatures).status == "full"
    # Publishing over a hostile document: the own model stays in use.
    mine = SiteModel.fit(pages(3))
    won, stays = c.publish(SITE, mine)
    assert stays is mine


def test_a_wipe_is_noticed_once_and_a_new_epoch_joined(redis_server):
    a, b = coordinator(redis_server), coordinator(redis_server)
    assert a.connect() == b.connect()
    assert not a.wiped() and not b.wiped()
    redis_server.client().flushall()
    assert a.wiped() and not a.wiped()
    assert b.wiped() and a.epoch == b.epoch  # b joins the epoch a set again


def test_export_scans_models_only(redis_server):
    c = coordinator(redis_server, min_pages=3)
    for site in ("a.example", "b.example:8080", "we*ird?[site]"):
        c.publish(site, SiteModel.fit(pages(3, site)))
    c.offer("c.example", "http://c.example/", pages(1)[0].signatures)
    assert sorted(s for s, _ in c.model_keys()) == ["a.example", "b.example:8080", "we*ird?[site]"]


def test_redis_export_writes_signature_files_and_refuses_hostile_models(redis_server, tmp_path, caplog):
    from scrapy_deboiler._cli import main as cli_main
    from scrapy_deboiler._store import SignatureStore

    caplog.set_level(logging.INFO)
    c = coordinator(redis_server, min_pages=3)
    client = redis_server.client()
    client.mset({f"other:{i}": i for i in range(2000)})  # SCAN walks past what is not ours
    sites = [f"site{i}.example" for i in range(30)]
    for site in sites:
        c.publish(site, SiteModel.fit(pages(3, site)))
    client.hset(c.model_key("evil.example"),
                mapping={"rank": FINAL_RANK + 3, "final": 1, "doc": _hostile("a bad signature")})
    out = tmp_path / "exported"
    assert cli_main(["redis-export", "--redis", redis_server.url, str(out)]) == 1  # one refused
    store = SignatureStore(out)
    assert len(list(store)) == 30
    for site in sites:
        assert store.load(site).support == c.model(site).support
    assert any("refused" in r.getMessage() and "evil.example" in r.getMessage() for r in caplog.records)
    assert any("30 models written" in r.getMessage() and "1 refused" in r.getMessage() for r in caplog.records)


def test_redis_import_publishes_files_and_keeps_better_models(redis_server, tmp_path, caplog):
    from scrapy_deboiler._cli import main as cli_main
    from scrapy_deboiler._store import SignatureStore

    caplog.set_level(logging.INFO)
    folder = tmp_path / "files"
    store = SignatureStore(folder)
    for site in ("a.example", "b.example"):
        store.save(site, SiteModel.fit(pages(4, site)))
    c = coordinator(redis_server, min_pages=3)
    better = SiteModel.fit(pages(6, "b.example"))
    c.publish("b.example", better)
    assert cli_main(["redis-import", "--redis", redis_server.url, str(folder)]) == 0
    assert c.model("a.example").support == store.load("a.example").support
    assert c.model("b.example").pages == 6  # Redis had a better one: kept
    assert any("1 models published" in r.getMessage() and "1 kept" in r.getMessage() for r in caplog.records)
    # Workers now get the imported model instead of pooling.
    p = pages(1, "a.example")[0]
    assert c.offer("a.example", p.url, p.signatures).status == "model"
    (folder / "broken--0000000000000000.json").write_text("{not json")
    assert cli_main(["redis-import", "--redis", redis_server.url, str(folder)]) == 1


def test_redis_commands_name_an_unreachable_redis(tmp_path, capsys):
    from redisserver import free_port
    from scrapy_deboiler._cli import main as cli_main

    url = f"redis://:secret@127.0.0.1:{free_port()}/0"
    assert cli_main(["redis-export", "--redis", url, "--timeout", "1", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "Redis at redis://127.0.0.1:" in err and "secret" not in err


def test_a_wipe_during_an_outage_is_noticed_on_reconnecting(tmp_path):
    from redisserver import RedisServer

    server = RedisServer(tmp_path / "r").start()
    try:
        c = RedisCoordinator(server.url, min_pages=3, timeout=2)
        c.connect()
        assert not c.rejoined
        server.kill()
        server.start()  # empty: no persistence
        c.connect()
        assert c.rejoined
        c.connect()
        assert not c.rejoined
    finally:
        server.kill()
