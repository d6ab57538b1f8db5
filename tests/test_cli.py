import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

import pytest
from lxml import etree

from scrapy_deboiler._text import tree_text
from sitegen import site_pages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Commands run from an empty folder: ``python -m`` puts the working folder
#: on sys.path, and the checkout there would shadow the installed package.
NEUTRAL = tempfile.mkdtemp(prefix="deboiler-cwd-")


def cli(*args, env=None):
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_deboiler", *map(str, args)],
        capture_output=True, text=True, cwd=NEUTRAL,
        env={**os.environ, "SOURCE_DATE_EPOCH": "1700000000", **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def records():
    recs = []
    for site in ("a.example", "b.example"):
        for i, (url, html, _) in enumerate(site_pages(site, 7)):
            recs.append({"id": f"{site}/{i}", "url": url, "html": html, "extra": [i]})
    url, html, _ = site_pages("lonely.example", 1)[0]
    recs.append({"id": "lonely", "url": url, "html": html})
    # Duplicate URL: both records must come out.
    recs.append({"id": "dup", "url": recs[0]["url"], "html": recs[0]["html"]})
    return recs


def write(path, recs, bad_lines=()):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
        for line in bad_lines:
            f.write(line + "\n")


def read(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_clean_gives_one_record_per_input_in_order(tmp_path):
    recs = records()
    bad = ['{"id": "broken', '{"id": "nohtml", "url": "http://a.example/x"}', '[1, 2]',
           '{"id": "nothtml", "url": "http://a.example/y", "html": 5}']
    write(tmp_path / "in.jsonl.gz", recs, bad)
    cli("clean", tmp_path / "in.jsonl.gz", tmp_path / "out.jsonl.gz", "--signatures", tmp_path / "sigs")
    out = read(tmp_path / "out.jsonl.gz")
    assert len(out) == len(recs) + len(bad)
    assert [o.get("id") for o in out[: len(recs)]] == [r["id"] for r in recs]
    for r, o in zip(recs, out):
        assert "html" not in o and o.get("extra") == r.get("extra")
        assert o["clean_text"] and o["clean_html"].startswith("<html")
    a0 = out[0]
    assert a0["deboiler"]["status"] == "cleaned" and a0["deboiler"]["model"] == "fitted"
    # Seven distinct pages: the duplicate URL is the same page again.
    assert a0["deboiler"]["fit_pages"] == 7 and "Privacy policy" not in a0["clean_text"]
    # The sizes a crawl's items carry, for the same summaries (run_demo.py, reports).
    for r, o in zip(recs, out):
        assert o["deboiler"]["html_chars"] == len(r["html"]) > o["deboiler"]["clean_html_chars"] > 0
    lonely = out[len(recs) - 2]  # content mode (the default): extracted on its own
    assert lonely["deboiler"]["status"] == "single_page" and "1 page" in lonely["deboiler"]["reason"]
    assert lonely["clean_text"].splitlines()[0] == records()[-2]["html"].split("<h1>")[1].split("</h1>")[0]
    assert "Privacy policy" not in lonely["clean_text"] and "cookies" not in lonely["clean_text"]
    assert out[-5]["clean_text"] == a0["clean_text"]  # the duplicate URL
    assert [o["deboiler"]["status"] for o in out[len(recs):]] == ["error"] * 4
    assert "invalid JSON on line" in out[len(recs)]["deboiler"]["reason"]
    assert out[len(recs) + 1]["id"] == "nohtml"
    assert len(os.listdir(tmp_path / "sigs")) == 2


def test_boilerplate_mode_keeps_what_pages_do_not_share(tmp_path):
    recs = records()
    write(tmp_path / "in.jsonl", recs)
    cli("clean", tmp_path / "in.jsonl", tmp_path / "b.jsonl", "--mode", "boilerplate")
    cli("clean", tmp_path / "in.jsonl", tmp_path / "c.jsonl", "--mode", "content")
    b, c = read(tmp_path / "b.jsonl"), read(tmp_path / "c.jsonl")
    assert b[len(recs) - 2]["deboiler"]["status"] == "unchanged"  # one page: nothing to learn
    assert "Privacy policy" in b[len(recs) - 2]["clean_text"]
    for ob, oc in zip(b[:14], c[:14]):
        assert "Privacy policy" not in ob["clean_text"]
        assert ob["clean_html"].startswith("<html") and oc["clean_html"].startswith("<html")
        # content mode's HTML: the kept text in the page's elements, no wrapper the page lacked
        assert oc["clean_html"].count("<h1>") == 1 and "<article>" not in oc["clean_html"]
        assert tree_text(etree.fromstring(oc["clean_html"], etree.HTMLParser())) == oc["clean_text"]
        # content mode keeps the article's paragraphs
        assert set(oc["clean_text"].splitlines()[1:]) <= set(ob["clean_text"].splitlines())


def test_second_run_reuses_signature_files(tmp_path):
    write(tmp_path / "in.jsonl", records())
    cli("fit", tmp_path / "in.jsonl", "--signatures", tmp_path / "sigs")
    files = sorted(os.listdir(tmp_path / "sigs"))
    assert len(files) == 2
    # The second crawl has only one page of a.example: the file still applies.
    write(tmp_path / "later.jsonl", records()[3:4])
    cli("clean", tmp_path / "later.jsonl", tmp_path / "out.jsonl", "--signatures", tmp_path / "sigs")
    (o,) = read(tmp_path / "out.jsonl")
    assert o["deboiler"]["model"] == "file" and "Privacy policy" not in o["clean_text"]
    summary = cli("inspect", tmp_path / "sigs" / files[0]).stdout
    assert "a.example" in summary and "pages          7" in summary
    js = json.loads(cli("inspect", "--json", tmp_path / "sigs" / files[0]).stdout)
    assert js["pages"] == 7 and js["boilerplate"] > 0


def test_copies_of_one_page_are_one_page(tmp_path):
    """A site whose only page comes twice (a start URL fetched again, a
    record repeated) is one page: no model of copies, which would find no
    boilerplate and, saved, remove nothing from the site's later pages."""
    pages = site_pages("twice.example", 6)
    url, html, _ = pages[0]
    write(tmp_path / "in.jsonl", [{"url": url, "html": html}, {"url": url + "#top", "html": html}])
    cli("clean", tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--signatures", tmp_path / "sigs",
        "--mode", "boilerplate")
    out = read(tmp_path / "out.jsonl")
    assert [o["deboiler"]["status"] for o in out] == ["unchanged", "unchanged"]
    assert "2 page(s) (1 distinct)" in out[0]["deboiler"]["reason"]
    assert not (tmp_path / "sigs").exists() or not os.listdir(tmp_path / "sigs")
    # The site's later pages get a model of their own, which removes its template.
    write(tmp_path / "later.jsonl", [{"url": u, "html": h} for u, h, _ in pages])
    cli("clean", tmp_path / "later.jsonl", tmp_path / "out2.jsonl", "--signatures", tmp_path / "sigs",
        "--mode", "boilerplate")
    out = read(tmp_path / "out2.jsonl")
    assert {o["deboiler"]["model"] for o in out} == {"fitted"} and {o["deboiler"]["fit_pages"] for o in out} == {6}
    assert all("Privacy policy" not in o["clean_text"] for o in out)


def test_a_corrupt_signature_file_is_refitted(tmp_path):
    write(tmp_path / "in.jsonl", records())
    cli("fit", tmp_path / "in.jsonl", "--signatures", tmp_path / "sigs")
    name = sorted(os.listdir(tmp_path / "sigs"))[0]
    (tmp_path / "sigs" / name).write_text('{"format": "scrapy-deboiler-sig')
    proc = cli("clean", tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--signatures", tmp_path / "sigs")
    assert name in proc.stderr and "refitting" in proc.stderr
    assert read(tmp_path / "out.jsonl")[0]["deboiler"]["model"] == "fitted"
    assert json.loads((tmp_path / "sigs" / name).read_text())["pages"] == 7


@pytest.mark.parametrize("jobs", [1, 2])
def test_any_order_and_any_number_of_processes_give_identical_files(tmp_path, jobs):
    recs = records()
    write(tmp_path / "in.jsonl", recs)
    cli("clean", tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--signatures", tmp_path / "s1")
    shuffled = recs[:]
    random.Random(7).shuffle(shuffled)
    write(tmp_path / "shuffled.jsonl", shuffled)
    cli("clean", tmp_path / "shuffled.jsonl", tmp_path / "out2.jsonl", "--signatures", tmp_path / "s2",
        "--jobs", jobs)
    for name in os.listdir(tmp_path / "s1"):
        assert (tmp_path / "s1" / name).read_bytes() == (tmp_path / "s2" / name).read_bytes()
    first = {o["id"]: o for o in read(tmp_path / "out.jsonl")}
    for o in read(tmp_path / "out2.jsonl"):
        assert o == first[o["id"]]
    if jobs > 1:
        cli("clean", tmp_path / "in.jsonl", tmp_path / "out3.jsonl", "--jobs", jobs)
        assert (tmp_path / "out3.jsonl").read_bytes() == (tmp_path / "out.jsonl").read_bytes()
        # Gzip output too: no file name (these differ) or time in its header.
        cli("clean", tmp_path / "in.jsonl", tmp_path / "a.jsonl.gz")
        cli("clean", tmp_path / "in.jsonl", tmp_path / "b.jsonl.gz", "--jobs", jobs)
        assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
        assert read(tmp_path / "a.jsonl.gz") == read(tmp_path / "out.jsonl")


def test_domain_field_groups_pages(tmp_path):
    recs = records()
    for r in recs:
        r["site"] = "everything"
    write(tmp_path / "in.jsonl", recs)
    cli("fit", tmp_path / "in.jsonl", "--signatures", tmp_path / "sigs", "--domain-field", "site")
    (name,) = os.listdir(tmp_path / "sigs")
    assert name.startswith("everything--")


def test_bad_arguments_fail_cleanly(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "scrapy_deboiler", "clean", tmp_path / "missing.jsonl",
                           tmp_path / "o.jsonl"], capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 2 and "missing.jsonl" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "--jobs/-j: 0 is under 1"), (["--min-pages", "1"], "--min-pages: 1 is under 2"),
    (["--max-memory", "-5"], "--max-memory: -5 is under 1"), (["--min-support", "0"], "--min-support: 0 is under 1"),
    (["--max-fit-pages", "0"], "--max-fit-pages: 0 is under 2"), (["--iou-guard", "1.5"], "1.5 is not between 0 and 1"),
    (["--comments-field", "clean_text"], "'clean_text' is a field the output already has"),
])
def test_out_of_range_options_stop_the_run_before_any_work(tmp_path, args, message):
    write(tmp_path / "in.jsonl", records()[:3])
    proc = subprocess.run([sys.executable, "-m", "scrapy_deboiler", "clean", tmp_path / "in.jsonl",
                           tmp_path / "o.jsonl", *args], capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_records_that_are_not_pages_fail_the_run_when_none_is_cleaned(tmp_path):
    run = [sys.executable, "-m", "scrapy_deboiler", "clean"]
    # Other field names: every record comes out, flagged, and the run fails saying why.
    write(tmp_path / "in.jsonl", [{"link": r["url"], "body": r["html"]} for r in records()[:3]])
    proc = subprocess.run([*run, tmp_path / "in.jsonl", tmp_path / "o.jsonl"], capture_output=True, text=True,
                          cwd=NEUTRAL)
    assert proc.returncode == 1, proc.stderr
    assert "none of the 3 records could be cleaned" in proc.stderr and "--html-field" in proc.stderr
    assert "record 1: no 'html' string in record" in proc.stderr
    assert [o["deboiler"]["status"] for o in read(tmp_path / "o.jsonl")] == ["error"] * 3
    # Naming the fields makes the same file a success.
    cli("clean", tmp_path / "in.jsonl", tmp_path / "o.jsonl", "--url-field", "link", "--html-field", "body")
    assert {o["deboiler"]["status"] for o in read(tmp_path / "o.jsonl")} == {"cleaned"}
    # Some records in error among cleaned ones: flagged, and the run succeeds.
    write(tmp_path / "mixed.jsonl", [*records()[:3], {"link": "x"}])
    proc = subprocess.run([*run, tmp_path / "mixed.jsonl", tmp_path / "o.jsonl"], capture_output=True, text=True,
                          cwd=NEUTRAL)
    assert proc.returncode == 0 and "record 4: no 'html' string in record" in proc.stderr, proc.stderr


def test_a_file_that_is_not_json_lines_fails_naming_the_json_error(tmp_path):
    """Records that are not valid JSON: the closing message names the JSON
    error (line, column, what the parser said), not the field options,
    which would not help."""
    good = json.dumps(records()[0])
    (tmp_path / "in.jsonl").write_text(good[:-1] + "\n" + good[:-1] + "\n", encoding="utf-8")  # no closing }
    proc = subprocess.run([sys.executable, "-m", "scrapy_deboiler", "clean", tmp_path / "in.jsonl",
                           tmp_path / "o.jsonl"], capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "none of the 2 records could be cleaned" in last, last
    assert f"invalid JSON on line 1, column {len(good)}: " in last and "delimiter" in last, last
    assert "--url-field" not in last and "--html-field" not in last, last
    reasons = [o["deboiler"]["reason"] for o in read(tmp_path / "o.jsonl")]
    assert reasons[1].startswith(f"invalid JSON on line 2, column {len(good)}: "), reasons


def test_a_byte_order_mark_before_the_first_record_is_not_an_error(tmp_path):
    write(tmp_path / "in.jsonl", records()[:3])
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "in.jsonl").read_bytes())
    cli("clean", tmp_path / "bom.jsonl", tmp_path / "o.jsonl")
    assert {o["deboiler"]["status"] for o in read(tmp_path / "o.jsonl")} == {"cleaned"}


def test_fit_on_records_without_their_html_says_so(tmp_path):
    """A crawl's output keeps its HTML only with DEBOILER_KEEP_HTML: `fit`
    on it fitted nothing, said "0 sites" and exited 0 (a new user's
    signature folder stayed empty). It fails, naming the fields, when no
    record holds a page, and warns when some do not."""
    cleaned = [{k: v for k, v in r.items() if k != "html"} | {"clean_text": "x"} for r in records()[:4]]
    write(tmp_path / "out.jsonl", cleaned)
    run = [sys.executable, "-m", "scrapy_deboiler", "fit", tmp_path / "out.jsonl", "--signatures", tmp_path / "s"]
    proc = subprocess.run(run, capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 1, proc.stderr
    assert "none of the 4 records holds a page to fit on (fields 'url' and 'html'" in proc.stderr, proc.stderr
    write(tmp_path / "mixed.jsonl", records()[:4] + cleaned[:1])
    run[4] = tmp_path / "mixed.jsonl"
    proc = subprocess.run(run, capture_output=True, text=True, cwd=NEUTRAL)
    assert proc.returncode == 0 and "1 of the 5 records hold no page to fit on" in proc.stderr, proc.stderr
    assert os.listdir(tmp_path / "s")


def test_a_signatures_path_that_is_a_file_is_named(tmp_path):
    write(tmp_path / "in.jsonl", records()[:3])
    (tmp_path / "afile").write_text("x")
    for args in (["clean", tmp_path / "in.jsonl", tmp_path / "o.jsonl"], ["fit", tmp_path / "in.jsonl"]):
        proc = subprocess.run([sys.executable, "-m", "scrapy_deboiler", *args, "--signatures", tmp_path / "afile"],
                              capture_output=True, text=True, cwd=NEUTRAL)
        assert proc.returncode == 2 and "afile: is a file, not a folder" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_content_mode_leaves_comments_out_and_can_keep_them(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "example_project"))
    from lxml import html as lxml_html
    from website import DemoSite

    site = DemoSite("news", n_articles=12)
    paths = [p for p in site.pages if p.endswith(".html")]
    write(tmp_path / "in.jsonl", [{"url": f"http://news.example{p}", "html": site.pages[p]} for p in paths])
    cli("clean", tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--comments-field", "comments")
    for path, out in zip(paths, read(tmp_path / "out.jsonl")):
        said = lxml_html.fromstring(site.pages[path]).xpath('//li[@class="comment"]/p/text()')
        assert said and not any(c in out["clean_text"] for c in said)
        assert all(c in out["comments"] for c in said)
        assert "Trending now" not in out["clean_text"] and "Read more" not in out["clean_text"]


@pytest.mark.parametrize("size", [(0, 0), (40, 120)])
def test_progress_shows_on_a_terminal_only(tmp_path, size):
    import fcntl
    import pty
    import struct
    import termios

    write(tmp_path / "in.jsonl", records())
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "scrapy_deboiler", "clean", tmp_path / "in.jsonl",
                             tmp_path / "out.jsonl"], stderr=slave, stdout=subprocess.DEVNULL, cwd=NEUTRAL)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    assert proc.wait(timeout=60) == 0
    os.close(master)
    text = shown.decode(errors="replace")
    assert "reading" in text and "cleaning" in text and "pages/s" in text and "sites=3" in text
    quiet = cli("clean", tmp_path / "in.jsonl", tmp_path / "out2.jsonl").stderr
    assert "pages/s" not in quiet and "\r" not in quiet


@pytest.mark.parametrize("max_memory", [1 << 30, 1])
def test_a_page_that_fails_to_load_costs_one_record(tmp_path, monkeypatch, max_memory):
    from scrapy_deboiler import _batch, _batch_pages

    real = _batch_pages.Page

    def flaky(html, url, *args, **kwargs):
        if url.endswith("/0003.html"):
            raise RuntimeError("boom")
        return real(html, url, *args, **kwargs)

    monkeypatch.setattr(_batch_pages, "Page", flaky)
    recs = records()
    write(tmp_path / "in.jsonl", recs)
    totals = _batch.clean_file(tmp_path / "in.jsonl", tmp_path / "out.jsonl",
                               _batch.BatchOptions(max_memory=max_memory, progress=False))
    out = read(tmp_path / "out.jsonl")
    assert [o["id"] for o in out] == [r["id"] for r in recs] and totals["records"] == len(recs)
    failed = [o for o in out if o["deboiler"]["status"] == "error"]
    assert {o["url"].rsplit("/", 1)[1] for o in failed} == {"0003.html"}
    assert all(o["deboiler"]["reason"] == "RuntimeError: boom" and "html" not in o for o in failed)
    assert all(o["clean_text"] for o in out if o["deboiler"]["status"] != "error")


def test_records_without_a_host_are_single_pages_not_one_site(tmp_path):
    """Pages with no URL, a path or a file: URL are not one website: no
    model or signature file for them; --domain-field can name their site."""
    recs = records()[:7]  # a.example's pages
    write(tmp_path / "in.jsonl", [{"url": u, "html": r["html"], "domain": "a.example"} for u, r in zip(
        ["", "/articles/1.html", "file:///mirror/a.html", "relative.html", None, "", "/x"], recs)])
    cli("clean", tmp_path / "in.jsonl", tmp_path / "o.jsonl", "--signatures", tmp_path / "sigs")
    out = read(tmp_path / "o.jsonl")
    assert {(o["deboiler"]["status"], o["deboiler"]["site"]) for o in out} == {("single_page", "")}
    assert "no site" in out[0]["deboiler"]["reason"] and all(o["clean_text"] for o in out)
    assert not (tmp_path / "sigs").exists() or not os.listdir(tmp_path / "sigs")
    cli("clean", tmp_path / "in.jsonl", tmp_path / "o.jsonl", "--signatures", tmp_path / "sigs",
        "--domain-field", "domain")
    assert {o["deboiler"]["status"] for o in read(tmp_path / "o.jsonl")} == {"cleaned"}
    assert len(os.listdir(tmp_path / "sigs")) == 1
