"""Signature files are read and written off the reactor thread, in the order
asked for, and a store that hangs costs no item and does not hang the close."""

from __future__ import annotations

import logging
import threading

import pytest_twisted

from scrapy_deboiler import SignatureStore
from scrapy_deboiler import _store_io

from crawling import crawl, serve_site, stat


def close(*ports):
    for p in ports:
        p.stopListening()


class NotingStore(SignatureStore):
    """The file store, noting each call and the thread it ran on."""

    calls: list[tuple[str, str, bool]] = []

    def load(self, domain):
        model = super().load(domain)
        self.calls.append(("load", threading.current_thread().name, model is not None))
        return model

    def save(self, domain, model, force=False):
        self.calls.append(("save", threading.current_thread().name, True))
        return super().save(domain, model, force)


@pytest_twisted.ensureDeferred
async def test_signature_files_are_read_and_written_on_the_stores_thread(tmp_path):
    url, port = serve_site(8, "alpha")
    NotingStore.calls = []
    try:
        first, items1 = await crawl(tmp_path, [url], DEBOILER_STORE=NotingStore)
        (tmp_path / "items.jsonl").unlink()
        second, items2 = await crawl(tmp_path, [url], DEBOILER_STORE=NotingStore)
    finally:
        close(port)
    assert len(items1) == len(items2) == 8
    assert all(i["deboiler"]["status"] == "cleaned" for i in items1 + items2)
    assert all(i["deboiler"]["model"] == "file" for i in items2)
    assert stat(second, "deboiler/sites_reused") == 1 and stat(second, "deboiler/items_held") == 0
    # First crawl: nothing to read, then the fitted model saved; second: read.
    assert [(op, found) for op, _, found in NotingStore.calls] == [
        ("load", False), ("save", True), ("load", True)]
    assert {thread for _, thread, _ in NotingStore.calls} == {"deboiler-store"}


class HungStore(SignatureStore):
    """A store on a disk that stops answering reads (a hung network mount)."""

    release = threading.Event()

    def load(self, domain):
        self.release.wait(60)
        return super().load(domain)


@pytest_twisted.ensureDeferred
async def test_a_hung_store_costs_no_item_and_does_not_hang_the_close(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(_store_io, "STORE_WAIT", 1.0)
    url, port = serve_site(8, "alpha")
    HungStore.release.clear()
    caplog.set_level(logging.WARNING, logger="scrapy_deboiler")
    try:
        crawler, items = await crawl(tmp_path, [url], DEBOILER_STORE=HungStore, guard=30)
        # Its save waits behind the hung read (the store's calls keep their order).
        saved = list((tmp_path / "signatures").glob("*.json"))
    finally:
        HungStore.release.set()
        close(port)
    assert saved == []
    assert len(items) == 8 and stat(crawler, "deboiler/items_seen") == 8
    # Given up on after a second: the site went on as a new one and was fitted.
    assert stat(crawler, "deboiler/store_timeouts") == 1 and stat(crawler, "deboiler/sites_fitted") == 1
    assert all(i["deboiler"]["status"] == "cleaned" for i in items)
    messages = [r.getMessage() for r in caplog.records]
    assert any("was not read in 1s; the site goes on as a new one" in m for m in messages)
    # The close went on without the save.
    assert any("did not end in 1s; the crawl closes without them" in m for m in messages)
