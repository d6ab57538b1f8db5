"""Property-based fuzzing: loading, fitting and cleaning never raise, never
hang and always give the same result for the same input.

The default profile runs a fixed (derandomised) set of cases so CI is
repeatable; ``HYPOTHESIS_PROFILE=fuzz`` explores new random cases, many
more of them (see README, "Security").
"""

import os
from datetime import timedelta

from hypothesis import HealthCheck, given, settings, strategies as st

from scrapy_deboiler import Page, SiteModel, check_page, clean_page
from sitegen import site_pages

# The deadline is a hang detector, not a speed claim: typical cases take
# milliseconds.
settings.register_profile("ci", derandomize=True, deadline=timedelta(seconds=20),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz", max_examples=5000, deadline=timedelta(seconds=20),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TAGS = ("html head body title meta script style div p span a ul li table tr td br img "
        "article nav header footer aside section h1 pre textarea svg math template frameset "
        "noscript iframe select option form x-y").split()

tag_name = st.one_of(st.sampled_from(TAGS), st.text(min_size=1, max_size=6))
attribute = st.builds(lambda k, v, q: f" {k}={q}{v}{q}", st.text(max_size=6),
                      st.text(max_size=12), st.sampled_from(['"', "'", ""]))
fragment = st.one_of(
    st.builds(lambda t, a, c: f"<{t}{''.join(a)}{c}>", tag_name, st.lists(attribute, max_size=3),
              st.sampled_from(["", "/"])),
    st.builds(lambda t: f"</{t}>", tag_name),
    st.text(max_size=40),  # any code point, lone surrogates included
    st.sampled_from(["&amp;", "&#0;", "&#x110000;", "&#xD800;", "&nbsp", "&unknown;", "&#99999999999;",
                     "<!--", "-->", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<?xml version='1.0'?>",
                     "<", ">", "\x00", "\r", "\ufeff", "<script>", "</script>", "<plaintext>"]),
)
html_like = st.lists(fragment, max_size=60).map("".join)


def outcome(html, model=None, mode="content"):
    page = Page(html, "http://fuzz.example/p")
    result = clean_page(page, model, mode=mode)
    return page.signatures, result.text, result.html, result.skipped


SKIP_KINDS = ("too-large", "too-many-elements", "too-many-attributes", "binary", "json", "xml")


def check_one(html):
    # The check before parsing says why not, in a known kind, and the page
    # it stops is never parsed (its Page says the same).
    skip = check_page(html)
    assert skip is None or (skip.kind in SKIP_KINDS and skip.reason), skip
    if skip is not None:
        assert Page(html, "http://fuzz.example/p").skipped == skip
    for mode in ("boilerplate", "content"):
        first = outcome(html, mode=mode)
        assert first == outcome(html, mode=mode)  # deterministic
        assert "\x00" not in first[1]


@given(st.binary(max_size=3000))
def test_any_bytes(data):
    check_one(data)


@given(html_like)
def test_html_like_text(html):
    check_one(html)
    check_one(html.encode("utf-8", "surrogatepass"))


BASE = [html.encode("utf-8") for _, html, _ in site_pages("fuzz.example", 4, paragraphs=2)]


@st.composite
def mutated(draw, page: bytes) -> bytes:
    """A page with a few byte-level edits: cut, repeat, insert, overwrite."""
    data = bytearray(page)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(data)))
        j = draw(st.integers(i, min(len(data), i + 400)))
        op = draw(st.sampled_from(["cut", "repeat", "insert", "overwrite", "truncate"]))
        if op == "cut":
            del data[i:j]
        elif op == "repeat":
            data[i:i] = data[i:j] * draw(st.integers(1, 20))
        elif op == "insert":
            data[i:i] = draw(st.one_of(st.binary(max_size=30), fragment.map(
                lambda s: s.encode("utf-8", "surrogatepass"))))
        elif op == "overwrite":
            data[i:j] = draw(st.binary(min_size=j - i, max_size=j - i))
        else:
            del data[i:]
    return bytes(data)


@given(st.tuples(*(mutated(p) for p in BASE)))
def test_mutated_sites_fit_and_clean(pages):
    urls = [f"http://fuzz.example/articles/{i}.html" for i in range(len(pages))]
    model = SiteModel.fit([Page(h, u) for u, h in zip(urls, pages)])
    again = SiteModel.fit([Page(h, u) for u, h in reversed(list(zip(urls, pages)))])
    assert model.support == again.support  # order does not matter
    for html in pages:
        for mode in ("boilerplate", "content"):
            assert outcome(html, model, mode) == outcome(html, model, mode)
