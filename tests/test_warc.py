"""Crawl archives in: WARC files written by a real crawler (Debian's wget
crawling the demo website on 127.0.0.1), uncompressed and truncated ones,
and ARC."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from test_cli import NEUTRAL, ROOT, read, write

sys.path.insert(0, os.path.join(ROOT, "example_project"))
from website import SITES, DemoSite, serve  # noqa: E402

ARTICLES = 8


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scrapy_deboiler", *map(str, args)], capture_output=True,
                          text=True, cwd=NEUTRAL, env={**os.environ, "SOURCE_DATE_EPOCH": "1700000000"})


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """wget's WARC files of the demo website (gzip per record, and plain),
    and the pages the site serves, by URL."""
    servers = serve(0, n_articles=ARTICLES)
    out = tmp_path_factory.mktemp("wget")
    pages = {}
    try:
        for (url, _), key in zip(servers, SITES):
            for path, html in DemoSite(key, ARTICLES).pages.items():
                pages[url.rstrip("/") + path] = html
        for name, extra in (("crawl", []), ("plain", ["--no-warc-compression"])):
            subprocess.run(["wget", "--recursive", "--level=inf", "--no-verbose", "--waitretry=0",
                            f"--warc-file={out / name}", f"--directory-prefix={out / name}-files", *extra,
                            *(u for u, _ in servers)], check=True, timeout=300, capture_output=True)
    finally:
        for _, server in servers:
            server.shutdown()
    return out, pages


def left_out(stderr: str) -> dict[str, int]:
    m = re.search(r"archive: (\d+) records, (\d+) HTML responses; left out: (\d+) not responses, (\d+) with "
                  r"a non-2xx status, (\d+) not HTML", stderr)
    assert m, stderr
    return dict(zip(("records", "html", "not_response", "status", "not_html"), map(int, m.groups())))


def test_every_html_page_of_a_wget_warc_is_one_record_cleaned_as_from_json_lines(tmp_path, crawl):
    folder, pages = crawl
    warc = folder / "crawl.warc.gz"
    proc = run_cli("clean", warc, tmp_path / "warc.jsonl", "--min-pages", "3")
    assert proc.returncode == 0, proc.stderr
    out = read(tmp_path / "warc.jsonl")
    assert sorted(o["url"] for o in out) == sorted(pages)  # every page, once
    counts = left_out(proc.stderr)
    assert counts["html"] == len(pages) == len(out)
    # robots.txt, the stylesheet and the images: what wget saved that is not HTML
    saved = [f for f in (folder / "crawl-files").rglob("*") if f.is_file()]
    assert counts["not_html"] == sum(f.suffix in (".txt", ".css", ".png") for f in saved) >= len(SITES) + 2
    assert counts["not_response"] > 0  # warcinfo, requests, wget's own log
    for o in out:
        assert set(o) == {"warc_record_id", "url", "warc_date", "clean_text", "clean_html", "clean_title", "deboiler"}
        assert o["warc_record_id"].startswith("<urn:uuid:") and re.match(r"\d{4}-\d\d-\d\dT", o["warc_date"])
        # the news listing /city/: its site model matches 96 % of its text
        assert o["deboiler"]["status"] in ("cleaned", "emptied")
    # The same pages as JSON Lines (decoded text, as a crawl would store
    # them) give the same clean text and the same site models.
    write(tmp_path / "pages.jsonl", [{"url": u, "html": h} for u, h in sorted(pages.items())])
    proc = run_cli("clean", tmp_path / "pages.jsonl", tmp_path / "jsonl.jsonl", "--min-pages", "3")
    assert proc.returncode == 0, proc.stderr
    by_url = {o["url"]: o for o in read(tmp_path / "jsonl.jsonl")}
    for o in out:
        assert o["clean_text"] == by_url[o["url"]]["clean_text"] and o["clean_text"]
        assert o["clean_title"] == by_url[o["url"]]["clean_title"] and o["clean_title"]
        assert o["deboiler"] == by_url[o["url"]]["deboiler"]


def test_uncompressed_warc_and_worker_processes_give_the_same_records(tmp_path, crawl):
    folder, _ = crawl
    assert run_cli("clean", folder / "crawl.warc.gz", tmp_path / "a.jsonl").returncode == 0
    proc = run_cli("clean", folder / "plain.warc", tmp_path / "b.jsonl", "--jobs", "2", "--max-memory", "1")
    assert proc.returncode == 0, proc.stderr
    a = {o["url"]: o for o in read(tmp_path / "a.jsonl")}
    b = read(tmp_path / "b.jsonl")
    assert len(a) == len(b)
    for o in b:
        assert {k: v for k, v in o.items() if k not in ("warc_record_id", "warc_date")} == {
            k: v for k, v in a[o["url"]].items() if k not in ("warc_record_id", "warc_date")}
    proc = run_cli("clean", folder / "crawl.warc.gz", tmp_path / "c.jsonl", "--jobs", "2", "--max-memory", "1")
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()


@pytest.mark.parametrize("name", ["crawl.warc.gz", "plain.warc"])
def test_a_truncated_warc_keeps_the_records_before_the_cut_and_fails_clearly(tmp_path, crawl, name):
    folder, _ = crawl
    full = run_cli("clean", folder / name, tmp_path / "full.jsonl")
    assert full.returncode == 0, full.stderr
    data = (folder / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(data[: int(len(data) * 0.6)])
    proc = run_cli("clean", cut, tmp_path / "out.jsonl")
    assert proc.returncode == 1
    assert "truncated" in proc.stderr and str(cut) in proc.stderr and "Traceback" not in proc.stderr
    out = read(tmp_path / "out.jsonl")
    urls = [o["url"] for o in read(tmp_path / "full.jsonl")]
    assert 0 < len(out) < len(urls)
    assert [o["url"] for o in out] == urls[: len(out)]  # the records before the cut, whole
    assert all(o["deboiler"]["status"] in ("cleaned", "emptied") and o["clean_text"] for o in out)


def test_a_missing_archive_reader_is_named_and_no_output_is_written(tmp_path, crawl):
    """Without the ``warc`` extra nothing is read: the message says what to
    install and does not claim the output holds records (it used to)."""
    folder, _ = crawl
    blocked = ("import runpy, sys; sys.modules['fastwarc'] = None; sys.argv[0] = 'scrapy-deboiler'; "
               "runpy.run_module('scrapy_deboiler', run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", blocked, "clean", str(folder / "crawl.warc.gz"),
                           str(tmp_path / "out.jsonl")], capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 2, proc.stderr
    assert "needs FastWARC: pip install 'scrapy-deboiler[warc]'" in proc.stderr
    assert "output holds" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()


def arc_record(url: str, mime: str, body: bytes, status: str = "200 OK") -> bytes:
    http = f"HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    return f"{url} 127.0.0.1 20260101120000 {mime.split(';')[0]} {len(http)}\n".encode() + http + b"\n"


def test_arc_files_are_read_too(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    from sitegen import site_pages

    version = b"1 0 scrapy-deboiler tests\nURL IP-address Archive-date Content-type Archive-length\n"
    records = [b"filedesc://test.arc 0.0.0.0 20260101120000 text/plain %d\n" % len(version) + version + b"\n"]
    pages = site_pages("arc.example", 6)
    for url, html, _ in pages:
        records.append(arc_record(url, "text/html; charset=iso-8859-1", html.encode("iso-8859-1")))
    records.append(arc_record("http://arc.example/logo.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 40))
    records.append(arc_record("http://arc.example/gone", "text/html", b"<html>gone</html>", "404 Not Found"))
    # As archivers write it (a gzip member per record), and as one gzip stream.
    (tmp_path / "members.arc.gz").write_bytes(b"".join(gzip.compress(r) for r in records))
    (tmp_path / "stream.arc.gz").write_bytes(gzip.compress(b"".join(records)))
    outs = []
    for name in ("members.arc.gz", "stream.arc.gz"):
        proc = run_cli("clean", tmp_path / name, tmp_path / "out.jsonl")
        assert proc.returncode == 0, proc.stderr
        out = read(tmp_path / "out.jsonl")
        assert [o["url"] for o in out] == [u for u, _, _ in pages]
        counts = left_out(proc.stderr)
        assert (counts["html"], counts["not_html"], counts["status"]) == (6, 1, 1)
        for o, (_, _, article) in zip(out, pages):
            assert o["deboiler"]["status"] == "cleaned"
            assert article.splitlines()[-1] in o["clean_text"]
        outs.append(out)
    assert outs[0] == outs[1]


def test_zstd_in_and_out_and_a_small_memory_bound_change_nothing(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    from test_cli import records

    recs = records()
    write(tmp_path / "in.jsonl", recs)
    assert run_cli("clean", tmp_path / "in.jsonl", tmp_path / "a.jsonl").returncode == 0
    import zstandard

    (tmp_path / "in.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress((tmp_path / "in.jsonl").read_bytes()))
    for jobs in ("1", "2"):
        proc = run_cli("clean", tmp_path / "in.jsonl.zst", tmp_path / "b.jsonl.zst", "--max-memory", "1",
                       "--jobs", jobs)
        assert proc.returncode == 0, proc.stderr
        with zstandard.ZstdDecompressor().stream_reader(open(tmp_path / "b.jsonl.zst", "rb")) as f:
            assert f.read() == (tmp_path / "a.jsonl").read_bytes()
    assert shutil.which("wget")  # the WARC tests' crawler is installed


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_truncated_compressed_json_lines_file_keeps_the_records_before_the_cut(tmp_path, suffix):
    import zstandard

    sys.path.insert(0, os.path.dirname(__file__))
    from sitegen import site_pages

    # Big enough for several zstd blocks (128 KB each): a cut keeps some.
    recs = [{"id": f"{k}/{i}", "url": u, "html": h} for k in range(8)
            for i, (u, h, _) in enumerate(site_pages(f"s{k}.example", 20, paragraphs=20))]
    data = "".join(json.dumps(r) + "\n" for r in recs).encode()
    packed = gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)
    (tmp_path / f"in.jsonl{suffix}").write_bytes(packed[: len(packed) * 2 // 3])
    proc = run_cli("clean", tmp_path / f"in.jsonl{suffix}", tmp_path / "out.jsonl")
    assert proc.returncode == 1 and "truncated or corrupt" in proc.stderr and "Traceback" not in proc.stderr
    out = read(tmp_path / "out.jsonl")
    assert 0 < len(out) < len(recs) and [o["id"] for o in out] == [r["id"] for r in recs[: len(out)]]


@pytest.fixture(scope="module")
def encoded_crawl(tmp_path_factory):
    """wget's WARC of three sites whose server sends its pages chunked,
    gzip-compressed (wget asks for it), and both: archivers store bodies as
    they came, so the WARC holds chunk sizes and gzip data."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    sys.path.insert(0, os.path.dirname(__file__))
    from sitegen import site_pages

    sites = {kind: {u.split("/", 3)[3]: h.encode("utf-8") for u, h, _ in site_pages(f"{kind}.example", 6)}
             for kind in ("chunked", "gzip", "both")}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            kind, _, path = self.path.lstrip("/").partition("/")
            body = sites[kind][path]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            if kind != "chunked" and "gzip" in self.headers.get("Accept-Encoding", ""):
                body = gzip.compress(body)
                self.send_header("Content-Encoding", "gzip")
            if kind == "gzip":
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for at in range(0, len(body), 700):
                piece = body[at:at + 700]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    out = tmp_path_factory.mktemp("encoded")
    urls = {f"{base}/{kind}/{path}": html for kind, pages in sites.items() for path, html in pages.items()}
    try:
        subprocess.run(["wget", "--no-verbose", "--compression=gzip", f"--warc-file={out / 'enc'}",
                        f"--directory-prefix={out / 'files'}", *urls], check=True, timeout=300, capture_output=True)
    finally:
        server.shutdown()
    return out / "enc.warc.gz", urls


def test_chunked_and_compressed_bodies_are_decoded_as_a_crawl_would_have(tmp_path, encoded_crawl):
    """Chunk sizes came out inside the text ("labo 2bc ratory") and gzip
    bodies were skipped as binary: the pages are the ones the server sent."""
    warc, pages = encoded_crawl
    raw = gzip.decompress(warc.read_bytes())
    assert b"Transfer-Encoding: chunked" in raw and b"Content-Encoding: gzip" in raw  # as sent
    proc = run_cli("clean", warc, tmp_path / "warc.jsonl", "--min-pages", "3")
    assert proc.returncode == 0, proc.stderr
    out = read(tmp_path / "warc.jsonl")
    assert sorted(o["url"] for o in out) == sorted(pages)
    write(tmp_path / "pages.jsonl", [{"url": u, "html": h.decode()} for u, h in sorted(pages.items())])
    assert run_cli("clean", tmp_path / "pages.jsonl", tmp_path / "jsonl.jsonl", "--min-pages", "3").returncode == 0
    by_url = {o["url"]: o for o in read(tmp_path / "jsonl.jsonl")}
    for o in out:
        assert o["deboiler"]["status"] == "cleaned" and o["clean_text"]
        assert o["clean_text"] == by_url[o["url"]]["clean_text"]
        assert o["clean_html"] == by_url[o["url"]]["clean_html"]


def test_http_payloads_cut_short_unknown_or_stored_decoded(tmp_path):
    from scrapy_deboiler._warc import http_payload

    page = b"<html><body><p>" + b"words " * 400 + b"</p></body></html>"
    chunked = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(page[i:i + 300]), page[i:i + 300])
                       for i in range(0, len(page), 300)) + b"0\r\n\r\n"
    assert http_payload(chunked, "chunked", None, 10**6) == (page, None)
    cut = http_payload(chunked[:500], "chunked", None, 10**6)[0]  # what a body cut short has
    assert len(cut) > 300 and page.startswith(cut)
    assert http_payload(page, "chunked", "gzip", 10**6) == (page, None)  # stored decoded, headers kept
    packed = gzip.compress(page)
    assert http_payload(packed, None, "gzip", 10**6) == (page, None)
    cut = http_payload(packed[:len(packed) // 2], None, "gzip", 10**6)[0]
    assert cut and page.startswith(cut)
    assert http_payload(packed, None, "gzip", 100) == (page[:100], None)  # a bomb stops at the cap
    import zlib as _zlib

    raw_deflate = _zlib.compressobj(wbits=-15)
    raw_deflate = raw_deflate.compress(page) + raw_deflate.flush()
    assert http_payload(raw_deflate, None, "deflate", 10**6) == (page, None)
    assert http_payload(_zlib.compress(page), None, "deflate", 10**6) == (page, None)
    assert (http_payload(b"\x00\x01 not gzip", None, "gzip", 10**6)
            == (None, "Content-Encoding gzip could not be decoded"))
    assert http_payload(page, None, "compress", 10**6)[0] is None


@pytest.mark.parametrize("where", ["middle", "end"])
def test_damage_inside_a_warc_keeps_the_records_before_it(tmp_path, crawl, where):
    """A record that cannot be read (bytes lost in the middle, junk after
    the last record) wrote no output at all, with exit code 2 and a message
    naming neither the file nor where."""
    folder, _ = crawl
    data = (folder / "plain.warc").read_bytes()
    full = run_cli("clean", folder / "plain.warc", tmp_path / "full.jsonl")
    urls = [o["url"] for o in read(tmp_path / "full.jsonl")]
    if where == "middle":  # a record's header garbled halfway through the file
        at = data.index(b"WARC/1.0\r\nWARC-Type: response", len(data) // 2)
        data = data[:at] + b"XXXX/9.9" + data[at + 8:]
    else:
        data += b"\x00garbage the copy left behind\r\n" * 3
    bad = tmp_path / "bad.warc"
    bad.write_bytes(data)
    proc = run_cli("clean", bad, tmp_path / "out.jsonl")
    assert proc.returncode == 1, proc.stderr
    # FastWARC 2 stops at the record it cannot read, earlier ones after the last one read
    assert str(bad) in proc.stderr and re.search(r"unreadable (record|data), after the record at byte \d+",
                                                  proc.stderr)
    assert "the output holds their records" in proc.stderr and "Traceback" not in proc.stderr
    out = [o["url"] for o in read(tmp_path / "out.jsonl")]
    if where == "middle":
        assert 0 < len(out) < len(urls)
    assert out == urls[: len(out)] and (where == "middle" or out == urls)
    assert full.returncode == 0
    fit = run_cli("fit", bad, "--signatures", tmp_path / "sigs", "--min-pages", "3")
    assert fit.returncode == 1 and "fitted on their records" in fit.stderr  # as clean: 1, not 2
    assert list((tmp_path / "sigs").iterdir())


@pytest.mark.parametrize("name,content", [
    ("notes.warc", b"These are my notes, not an archive.\n" * 20),
    ("records.warc.gz", gzip.compress(b'{"url": "http://a.example/", "html": "<p>x</p>"}\n', mtime=0)),
    ("crawl.warc.zst", b"(\xb5/\xfd" + b"\x00" * 40),
], ids=["text", "json-lines", "zstd"])
def test_a_file_that_is_no_archive_it_can_read_is_named_and_nothing_is_written(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    proc = run_cli("clean", path, tmp_path / "out.jsonl")
    assert proc.returncode == 2 and str(path) in proc.stderr and "Traceback" not in proc.stderr
    assert ("not read; decompress it" if name.endswith(".zst") else "is not a WARC file") in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()


def arc_file(tmp_path, n: int = 30) -> tuple[list[bytes], list[str]]:
    sys.path.insert(0, os.path.dirname(__file__))
    from sitegen import site_pages

    version = b"1 0 scrapy-deboiler tests\nURL IP-address Archive-date Content-type Archive-length\n"
    records = [b"filedesc://test.arc 0.0.0.0 20260101120000 text/plain %d\n" % len(version) + version + b"\n"]
    pages = site_pages("arc.example", n)
    records += [arc_record(url, "text/html; charset=utf-8", html.encode()) for url, html, _ in pages]
    return records, [u for u, _, _ in pages]


@pytest.mark.parametrize("packing", ["plain", "members"])
def test_a_truncated_arc_keeps_every_whole_record_before_the_cut(tmp_path, packing):
    """A plain ARC cut short was cleaned whole (its last record half read,
    exit 0); a gzip one lost the whole records warcio had read ahead."""
    records, urls = arc_file(tmp_path)
    data = b"".join(records) if packing == "plain" else b"".join(gzip.compress(r) for r in records)
    ends = []  # where each record ends in the file
    for r in records:
        ends.append((ends[-1] if ends else 0) + len(r if packing == "plain" else gzip.compress(r)))
    cut = (ends[20] + ends[21]) // 2  # inside record 21, the 21st page
    path = tmp_path / ("cut.arc" if packing == "plain" else "cut.arc.gz")
    path.write_bytes(data[:cut])
    proc = run_cli("clean", path, tmp_path / "out.jsonl")
    assert proc.returncode == 1 and str(path) in proc.stderr and "Traceback" not in proc.stderr
    assert "truncated" in proc.stderr
    assert [o["url"] for o in read(tmp_path / "out.jsonl")] == urls[:20]


def test_revisit_records_are_named_in_the_archive_line(tmp_path):
    """Deduplicating archivers (wget --warc-cdx, Heritrix) store a page seen
    before as a revisit record without a body: it is counted as such, not
    lumped with requests and metadata."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "dedup.warc.gz"
    html = b"<html><head><title>A</title></head><body><p>" + b"Words of the page. " * 40 + b"</p></body></html>"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        first = w.create_warc_record("http://a.example/", "response", payload=io.BytesIO(html),
                                     http_headers=headers)
        w.write_record(first)
        w.write_record(w.create_warc_record("http://a.example/", "request",
                                            payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n")))
        w.write_record(w.create_revisit_record("http://a.example/?again", first.rec_headers.get_header(
            "WARC-Payload-Digest"), "http://a.example/", first.rec_headers.get_header("WARC-Date"),
            http_headers=headers))
    proc = run_cli("clean", path, tmp_path / "out.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert left_out(proc.stderr) == {"records": 3, "html": 1, "not_response": 1, "status": 0, "not_html": 0}
    assert "1 revisits (deduplicated: no body of their own)" in proc.stderr
    assert len(read(tmp_path / "out.jsonl")) == 1


@pytest.mark.parametrize("name,content", [("empty.warc", b""), ("empty.warc.gz", gzip.compress(b"", mtime=0))],
                         ids=["plain", "gzip"])
def test_an_empty_archive_is_an_empty_output_and_one_warning(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    proc = run_cli("clean", tmp_path / name, tmp_path / "out.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert f"{tmp_path / name}: an empty archive (no records)" in proc.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == b""
