import json
import os

import pytest

from scrapy_deboiler import Page, SiteModel
from scrapy_deboiler._store import (
    SignatureFileError,
    SignatureStore,
    dump_model,
    load_model,
    model_to_json,
    site_filename,
)
from sitegen import site_pages


@pytest.fixture
def model():
    return SiteModel.fit(Page(h, u) for u, h, _ in site_pages("a.example", 5))


def test_round_trip(tmp_path, model):
    store = SignatureStore(tmp_path)
    path = store.save("a.example", model)
    assert path.parent == tmp_path and os.listdir(tmp_path) == [path.name]  # no temp files
    assert store.load("a.example") == model
    assert store.load("b.example") is None
    doc = json.loads(path.read_text())
    assert doc["format"] == "scrapy-deboiler-signatures" and doc["version"] == 1
    assert doc["domain"] == "a.example" and doc["pages"] == 5
    assert set(doc) >= {"created", "params", "signatures", "pairs", "generator"}


def test_files_are_made_with_the_umask_as_other_files_are(tmp_path, model):
    """Signature files are shared (other users, containers, a web server):
    written through a temporary file, they came out 0600 whatever the umask."""
    old = os.umask(0o022)
    try:
        path = SignatureStore(tmp_path).save("a.example", model)
        assert path.stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        assert SignatureStore(tmp_path).save("a.example", model).stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert os.listdir(tmp_path) == [path.name]


def test_source_date_epoch_makes_files_reproducible(tmp_path, model, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a = dump_model("a.example", model, tmp_path / "a.json").read_bytes()
    b = dump_model("a.example",
                   SiteModel(model.params, model.pages, model.pairs, 0, dict(reversed(model.support.items()))),
                   tmp_path / "b.json").read_bytes()
    assert a == b and b'"2023-11-14T22:13:20Z"' in a


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "corrupt or truncated"),
        (b'{"format": "scrapy-deboiler-signatures", "vers', "corrupt or truncated"),
        (b"\xff\xfe garbage", "corrupt or truncated"),
        (b"[1, 2, 3]", "not a scrapy-deboiler-signatures file"),
        (b'{"format": "something-else"}', "not a scrapy-deboiler-signatures file"),
        (b"[" * 100000 + b"]" * 100000, "corrupt or truncated"),
    ],
)
def test_bad_files_are_refused_with_their_name(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(SignatureFileError) as err:
        load_model(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_wrong_version_bad_entries_and_foreign_domain(tmp_path, model):
    path = dump_model("a.example", model, tmp_path / "a.json")
    doc = json.loads(path.read_text())
    for change, message in [
        ({"version": 99}, "format version 99 is not supported"),
        ({"signatures": {"not-hex": 3}}, "bad signature entry"),
        ({"signatures": {"0123456789abcdef": -1}}, "bad signature entry"),
        ({"pages": "many"}, "'pages' must be"),
        ({"params": {"iou_guard": 1}}, "bad 'params'"),
    ]:
        path.write_text(json.dumps({**doc, **change}))
        with pytest.raises(SignatureFileError, match=message):
            load_model(path)
    path.write_text(json.dumps(doc))
    with pytest.raises(SignatureFileError, match="belongs to 'a.example'"):
        load_model(path, "b.example")


def test_domain_names_map_to_safe_distinct_files(tmp_path, model):
    domains = ["../../x", "CON", "con", "a/b", "a\\b", "x" * 300, "x" * 301, "bücher.de",
               "xn--bcher-kva.de", ".hidden", "..", "", "例え.テスト", "a b", "NUL.txt"]
    names = [site_filename(d) for d in domains]
    assert len(set(names)) == len(domains)
    store = SignatureStore(tmp_path / "store")
    for d, name in zip(domains, names):
        assert "/" not in name and "\\" not in name and not name.startswith(".")
        assert len(name) <= 100 and name.isascii()
        assert name.split(".")[0].split("--")[0].upper() not in {"CON", "NUL", "PRN", "AUX"}
        store.save(d, model)
        assert store.load(d) == model
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == sorted(names)


def test_provisional_models_round_trip_as_version_2(tmp_path, model):
    """A model fitted on too few pages is written as version 2 with the keys
    of its pages; finished models stay version 1, which older releases read."""
    store = SignatureStore(tmp_path)
    keys = frozenset(f"{i:016x}" for i in range(5))
    prov = SiteModel(model.params, model.pages, model.pairs, model.skipped_pairs, dict(model.support),
                     provisional=True, page_keys=keys)
    path = store.save("a.example", prov)
    doc = json.loads(path.read_text())
    assert doc["version"] == 2 and doc["provisional"] == {"page_keys": sorted(keys)}
    assert store.load("a.example") == prov
    store.save("a.example", model)
    doc = json.loads(path.read_text())
    assert doc["version"] == 1 and "provisional" not in doc
    assert store.load("a.example") == model and not model.provisional


def test_a_learning_model_s_pages_round_trip_beside_any_version(tmp_path, model):
    """A finished model that learns (DEBOILER_LEARN) keeps the keys of the
    pages it has seen, in ``seen``: a version 1 file still, which releases
    without ``seen`` read as before. Worker processes get the model without them."""
    keys = frozenset(f"{i:016x}" for i in range(7))
    learning = SiteModel(model.params, model.pages, model.pairs, model.skipped_pairs, dict(model.support),
                         page_keys=keys)
    doc = model_to_json("a.example", learning)
    assert doc["version"] == 1 and doc["seen"] == {"page_keys": sorted(keys)} and "provisional" not in doc
    assert "seen" not in model_to_json("a.example", learning, keys=False)
    path = dump_model("a.example", learning, tmp_path / "a.json")
    loaded = load_model(path)
    assert loaded == learning and loaded.page_keys == keys and not loaded.provisional
    doc["provisional"] = doc["seen"]
    doc["version"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(SignatureFileError, match="'provisional' and 'seen' both list pages"):
        load_model(path)
    del doc["provisional"]
    doc["seen"] = {"page_keys": ["not a key"]}
    path.write_text(json.dumps(doc))
    with pytest.raises(SignatureFileError, match="bad 'page_keys'"):
        load_model(path)


@pytest.mark.parametrize("change, message", [
    ({"version": 1}, "'provisional' needs format version 2"),
    ({"provisional": True}, "'provisional' must be an object"),
    ({"provisional": {"page_keys": ["xyz"]}}, "bad 'page_keys'"),
    ({"provisional": {"page_keys": [1]}}, "bad 'page_keys'"),
    ({"version": True}, "format version True is not supported"),
])
def test_bad_provisional_files_are_refused(tmp_path, model, change, message):
    prov = SiteModel(model.params, model.pages, model.pairs, 0, dict(model.support), provisional=True,
                     page_keys=frozenset(["0123456789abcdef"]))
    path = dump_model("a.example", prov, tmp_path / "a.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(SignatureFileError, match=message):
        load_model(path)


def test_version_1_files_of_earlier_releases_still_load(tmp_path, model):
    path = dump_model("a.example", model, tmp_path / "a.json")
    doc = json.loads(path.read_text())
    doc["generator"] = "scrapy-deboiler 0.0.9"
    path.write_text(json.dumps(doc))
    loaded = load_model(path, "a.example")
    assert loaded == model and loaded.provisional is False and loaded.page_keys == frozenset()


def test_site_keys_are_idna_encoded_and_ipv6_keeps_its_brackets(tmp_path, model):
    """A host's Unicode and punycode forms were two sites (two files); IPv6
    hosts lost their brackets, so [2001:db8::1]:8080 and [2001:db8::1:8080]
    shared a key. Keys are what Scrapy's requests carry (w3lib's IDNA)."""
    from scrapy.http import Request

    from scrapy_deboiler._urls import site_of_url

    same = ["http://Bücher.example/a", "https://BÜCHER.example./b", "http://xn--bcher-kva.example/c",
            "http://XN--BCHER-KVA.EXAMPLE/d", Request("http://bücher.example/e").url]
    assert {site_of_url(u) for u in same} == {"xn--bcher-kva.example"}
    assert site_of_url("http://bücher.example:8080/") == "xn--bcher-kva.example:8080"
    assert site_of_url("http://例え.テスト/") == "xn--r8jz45g.xn--zckzah"
    assert site_of_url("http://[2001:db8::1]:8080/x") == "[2001:db8::1]:8080"
    assert site_of_url("http://[2001:db8::1:8080]/x") == "[2001:db8::1:8080]"
    assert site_of_url("http://[2001:DB8::1]:80/") == site_of_url("http://[2001:db8::1]/") == "[2001:db8::1]"
    assert site_of_url("http://Example.COM:443/") == "example.com:443" and site_of_url("/x") == ""
    names = {site_filename(site_of_url(u)) for u in ("http://[2001:db8::1]:8080/", "http://[2001:db8::1:8080]/")}
    assert len(names) == 2 and all(n.startswith("2001-db8-1") and n.endswith(".json") for n in names)
    assert site_filename("xn--bcher-kva.example").startswith("xn--bcher-kva.example--")


def test_a_file_saved_under_a_hosts_unicode_key_is_still_found(tmp_path, model):
    """Files saved before keys were IDNA-encoded carry the Unicode form: a
    site keyed by its punycode form finds them (and saves under its own)."""
    store = SignatureStore(tmp_path)
    store.save("bücher.example:8080", model)  # as a release before this one keyed it
    assert store.load("xn--bcher-kva.example:8080") == model
    assert store.load("xn--other-kva.example") is None
    store.save("xn--bcher-kva.example:8080", model)
    assert store.path("xn--bcher-kva.example:8080").is_file()
