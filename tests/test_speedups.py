"""The compiled walks must give exactly what the Python reference gives.

The package's modules use the compiled walks throughout this file, also in
a run with ``SCRAPY_DEBOILER_PURE_PYTHON`` set (``nox -s pure``): the
extension is installed then, only the package's use of it is switched off,
and what is compared here is the extension and the Python references.
"""

import hashlib
import importlib
import os
import pathlib
from array import array
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

import scrapy_deboiler
from scrapy_deboiler import SignatureScheme, parse_html
from scrapy_deboiler import _compiled, _content, _signatures, _text
from sitegen import KINDS, site_pages, typed_page

try:  # the extension itself, whatever SCRAPY_DEBOILER_PURE_PYTHON says
    from scrapy_deboiler import _speedups as speedups
except ImportError:  # not built: the first test says so
    speedups = None

#: The package's modules that take a compiled walk (through ``_compiled``).
USERS = sorted(p.stem for p in pathlib.Path(scrapy_deboiler.__file__).parent.glob("*.py")
               if "from ._compiled import speedups as _speedups" in p.read_text(encoding="utf-8"))


@pytest.fixture(scope="module", autouse=True)
def compiled_walks():
    """Every module that has a compiled walk uses the extension here."""
    with pytest.MonkeyPatch.context() as mp:
        for name in USERS:
            mp.setattr(importlib.import_module(f"scrapy_deboiler.{name}"), "_speedups", speedups)
        yield


def test_the_compiled_walks_are_built():
    # setup.py builds them whenever a compiler is there, as on CI; the pure
    # Python walks are the reference they are compared with below.
    assert speedups is not None and speedups.__file__.endswith((".so", ".pyd"))
    assert len(USERS) >= 8 and all(importlib.import_module(f"scrapy_deboiler.{m}")._speedups is speedups
                                   for m in USERS)
    # The package itself takes them unless the switch is set (then the
    # whole run but this file runs the Python walks).
    pure = os.environ.get("SCRAPY_DEBOILER_PURE_PYTHON", "").strip() not in ("", "0")
    assert _compiled.speedups is (None if pure else speedups)


def same(root, scheme=SignatureScheme()):
    py = _signatures.sign_tree_py(root, scheme)
    fast = _signatures.sign_tree(root, scheme)
    assert sorted(zip(py.signatures, map(id, py.elements))) == sorted(
        zip(fast.signatures, map(id, fast.elements)))
    # Text sizes and which entries are structure-only, for cleaning's guards.
    assert sorted(zip(map(id, py.elements), py.chars, (i in py.shapes for i in range(len(py.chars))))) == sorted(
        zip(map(id, fast.elements), fast.chars, (i in fast.shapes for i in range(len(fast.chars)))))
    assert py.total_chars == fast.total_chars
    pos = {id(e): i for i, e in enumerate(fast.elements)}
    for i in range(len(fast.signatures)):  # starts cover exactly the subtree
        inside = {pos[id(d)] for d in fast.element(i).iterdescendants() if id(d) in pos}
        assert all(fast.starts[i] <= j < i for j in inside)
    fast_tables = fast.tables(list(range(len(fast.signatures))))  # nearest enclosing tables
    py_tables = py.tables(list(range(len(py.signatures))))
    assert sorted((id(e), id(t)) for e, t in zip(fast.elements, fast_tables)) == sorted(
        (id(e), id(t)) for e, t in zip(py.elements, py_tables))
    py_blocks = _content.page_blocks_py(root)
    # (the text as a reader sees it, too: where the walks part words)
    blocks = [(b.element, b.depth, b.hints, b.near, b.text, b.link_chars, b.words, _content.shown_text(b))
              for b in _content.page_blocks(root)]
    assert blocks == [(b.element, b.depth, b.hints, b.near, b.text, b.link_chars, b.words, _content.shown_text(b))
                      for b in py_blocks]
    same_table(root, py_blocks)
    assert _text.finish_text(_text.tree_text_py(root)) == _text.finish_text(
        speedups.tree_text(root, _text._CLASSES)) == _text.tree_text(root)


def same_table(root, py_blocks, title="", skip=frozenset(), near=frozenset()):
    """The compiled block table: the Python blocks and block_features' rows."""
    blocks, flat = _content._block_table(root, skip, near, title)
    assert [(b.element, b.depth, b.hints, b.near, b.text, b.link_chars, b.words, _content.shown_text(b))
            for b in blocks] == [(b.element, b.depth, b.hints, b.near, b.text, b.link_chars, b.words,
                                  _content.shown_text(b)) for b in py_blocks]
    w = _content.FEATURE_COUNT
    assert [flat[i:i + w].tolist() for i in range(0, len(flat), w)] == _content.block_features(
        py_blocks, title)
    # The compiled place hashes group blocks as the Python place strings do.
    assert partition([b.place for b in blocks]) == partition(_content.place_keys(py_blocks, root))
    # The main-container cut's tree: the same numbers from parent pointers,
    # and the same cut.
    tree = _content.block_tree(blocks)
    assert tree == _content.block_tree_py(py_blocks)
    scores = [((7 * i) % 10) / 9 for i in range(len(blocks))]
    words = [b.words for b in blocks]
    links = [b.link_chars / max(1, len(b.text)) for b in blocks]
    assert _content.container_cut(scores, words, links, *tree) == _content.container_cut_py(
        scores, words, links, *tree)


def partition(keys):
    groups = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, set()).add(i)
    return sorted(map(sorted, groups.values()))


def test_the_compiled_walks_know_the_panels_the_python_walks_know():
    from scrapy_deboiler import _hidden

    assert (speedups._PANEL_ROLES, speedups._PANEL_CLASS_WORDS) == (_hidden.PANEL_ROLES, _hidden.PANEL_CLASS_WORDS)


def test_compiled_blake2b_is_blake2b():
    for n in (0, 1, 63, 127, 128, 129, 256, 1000):
        data = bytes(range(256)) * 4
        data = data[:n]
        assert speedups.blake2b8(data) == hashlib.blake2b(data, digest_size=8).hexdigest()
        assert speedups.blake2b8(data, True) == hashlib.blake2b(
            data, digest_size=8, person=b"template").hexdigest()


@pytest.mark.parametrize("i", range(6))
def test_generated_pages(i):
    same(parse_html(site_pages("s.example", 6)[i][1]).root)


@pytest.mark.parametrize("html", [
    "", "<p>x</p>", "<html><body>top<div>a<!-- c -->b<?pi x?>c</div>tail</body></html>",
    "<div><script>var a = 1;</script><style>p {}</style>text</div>",
    "<pre>a\n<b>b\nc</b>\nd</pre>after\nline", "<table><tr><td>1<td>2</table>",
    "<table><tr><td><table><tr><th>in</th></tr></table>out</td></tr></table><p>after</p>",
    "<pre>\n  x<div>  a</div><p></p>\n\n  b<pre> in\n  ner </pre>  tail \n</pre> after ",
    "<div><a>one</a><a>two</a><a>three</a><a>four</a></div>",
    "<p>Straße ΣΊΣΥΦΟΣ \u00a0 ﬁ</p><![CDATA[x]]>",
    # Whitespace str.split() knows beyond ASCII, and characters whose
    # casefold is ASCII or longer (Kelvin sign, dotted I, DŽ, ligatures).
    "<div><p>A\u2003B\u3000C\u1680D\u205fE\x85F\u200bG</p><p>\u212a \u0130 \u01c4 \ufb03 ẞ</p>"
    "<nav><a>Home\u00a0Page</a> <a>NEWS\u2028Ω</a></nav></div>",
])
def test_edge_pages(html):
    same(parse_html(html).root)
    same(parse_html(html).root, SignatureScheme(template_min_elements=2))


@pytest.mark.parametrize("reach", [0, 1, 2, 1000])
def test_template_signatures_in_their_context(reach):
    # Lists in lists: each link-dense subtree hashes its nearest ancestors'
    # tags, the walk's root the last of them; and a chain deeper than reach.
    lists = "".join(f"<li><a>{k}</a><ul><li><a>a{k}</a></li><li><a>b{k}</a></li></ul></li>" for k in range(3))
    html = f"<body><main><section><ul>{lists}</ul></section></main><footer>{lists}</footer></body>"
    scheme = SignatureScheme(template_context=reach, template_min_elements=2)
    same(parse_html(html).root, scheme)
    same(parse_html(html).root.find(".//section"), scheme)
    deep = "<div>" * 300 + "<a>one</a><a>two</a><a>three</a>" + "</div>" * 300
    same(parse_html(deep).root, scheme)


def test_subtree_roots_and_hand_built_trees():
    root = parse_html("<body><div id='a'><p>one <b>two</b></p>tail</div><p>x</p></body>").root
    same(root.find(".//div"))
    el = etree.Element("div")
    el.text = "t"
    etree.SubElement(el, "span").text = "s"
    el.append(etree.Comment("c"))
    el[-1].tail = "after comment"
    same(el)


tags = st.sampled_from(["div", "p", "a", "span", "ul", "li", "pre", "script", "td", "br", "nav", "b",
                        'div class="comment"', 'p id="main-content"'])
words = st.text(alphabet=st.sampled_from(list("ab ΣßéX\n\t\u00a0<&")), max_size=8)


@st.composite
def html_docs(draw, depth=0):
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        if draw(st.booleans()):
            parts.append(draw(words).replace("<", "&lt;").replace("&", "&amp;"))
        else:
            tag = draw(tags)
            parts.append(f"<{tag}>{draw(html_docs(depth + 1))}</{tag.split()[0]}>")
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(html_docs())
def test_random_pages(html):
    same(parse_html(f"<html><body>{html}</body></html>").root)


def test_compiled_tables_and_tree_scores_equal_the_python_definitions():
    """Fitted site pages (boilerplate skipped, near-boilerplate marked,
    titles shared with the text) through the shipped content model."""
    from scrapy_deboiler import Page, SiteModel
    from scrapy_deboiler._clean import boilerplate_of

    model = _content.default_model()
    assert model.kind == "trees"
    pages = [Page(html, url) for url, html, _ in site_pages("trees.example", 6)]
    site = SiteModel.fit(pages)
    rows, flats = [], []
    for page in pages:
        dropped, shared = boilerplate_of(page, site, content=True)
        near = shared | set(page.root.xpath("(//p)[2]"))  # generated sites share nothing partly
        title = page.root.findtext(".//title") or ""
        assert title and dropped and near
        py_blocks = _content.page_blocks_py(page.root, set(dropped), near)
        same_table(page.root, py_blocks, title, set(dropped), near)
        rows += _content.block_features(py_blocks, title)
        flats.append(_content._block_table(page.root, set(dropped), near, title)[1])
    assert rows and any(row[17] > 0 for row in rows)  # some text shares words with the title
    assert any(row[25] for row in rows) and any(row[14] for row in rows)  # near; in the main container
    assert model.trees.raw(rows) == model.trees.raw_py(rows)
    flat = flats[0]
    for more in flats[1:]:
        flat.extend(more)
    assert model.scores_table(flat) == model.scores(rows)
    assert model.single is not None
    assert model.scores_table(flat, single=True) == model.scores(rows, single=True)
    # The compiled walk takes rows four at a time: every remainder, and none.
    width = _content.FEATURE_COUNT
    for n in (0, 1, 2, 3, 5, 6, 7):
        part = array("d", flat[:n * width])
        assert model.trees.raw_table(part) == model.trees.raw_py(rows[:n])
        assert model.scores_table(part, single=True) == model.scores(rows[:n], single=True)


def test_places_ignore_numbers_and_spacing_in_classes():
    root = parse_html("<body><div class='post-1 entry'><p>one two</p></div>"
                      "<div class='post-22  entry'><p>three four</p></div>"
                      "<div class='sidebar'><p>five six</p></div></body>").root
    blocks, _, _ = _content.judge_blocks(root)
    places = [b.place for b in blocks]
    assert len(places) == 3 and places[0] == places[1] != places[2]
    assert _content.place_keys(_content.page_blocks_py(root), root)[:2] == [
        "html./body./div.post-entry/", "html./body./div.post-entry/"]


#: Characters str.split() treats as whitespace and neighbours that it does not.
_SPACES = ["\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", " ", "\x85", "\xa0", "\u1680",
           "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
           "\u180e", "\ufeff", "\x00", "\x00", "a", "\xe9", "\u20ac", "\U0001d11e"]


def test_compiled_line_finishing_splits_on_what_python_calls_whitespace():
    for c in [*range(4, 0x3001), 0xFEFF, 0x1D11E]:  # 1-3 mark a <pre>'s lines (never text)
        text = f"a{chr(c)}b\x00 \x00{chr(c)}"
        assert speedups.finish_text(text.encode()) == _text.finish_text(text), hex(c)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_SPACES), max_size=20).map("".join))
def test_compiled_line_finishing_equals_the_python_definition(marked):
    assert speedups.finish_text(marked.encode()) == _text.finish_text(marked)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40) | st.lists(st.sampled_from(
    [b"a", b"\x00", b"\x01", b"\x08", b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b"\x1f", b"\x7f",
     b"\xef", b"\xbf", b"\xbe", b"\xbd", b"\xef\xbf\xbe", b"\xef\xbf\xbf"]), max_size=12).map(b"".join))
def test_the_compiled_repair_check_finds_every_byte_the_loader_repairs(data):
    from scrapy_deboiler import _loading

    notes: list[str] = []
    assert speedups.needs_repair(data) == (_loading._repair(data, notes) != data or bool(notes))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 15), max_size=40))
def test_compiled_signature_packing_sorts_numbers_as_python_sorts_hex(values):
    sigs = [f"{v:016x}" for v in values]
    assert speedups.pack_signatures(sigs) == bytes.fromhex("".join(sorted(set(sigs))))
    assert speedups.pack_signatures(sigs + ["ABCDEF0123456789"]) is None


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*_content.HINTS, "head", "shad", "commen", "x", "-", " ", "é"]),
                max_size=10).map("".join))
def test_compiled_hint_matching_finds_what_the_regex_finds(text):
    bits = 0
    for m in _content._HINT.findall(text):
        bits |= _content._HINT_BIT[m]
    assert speedups.literal_hits(text, _content._HINT_WORDS) == (bits if text.isascii() else -1)


def test_the_compiled_container_cut_refuses_trees_it_cannot_trust():
    with pytest.raises(ValueError):
        speedups.container_cut([0.5, 0.5], [1, 1], [0.0, 0.0], [1, 2], [-1, 2, 0], 0.5, 2.0)  # child first
    with pytest.raises(ValueError):
        speedups.container_cut([0.5, 0.5], [1, 1], [0.0, 0.0], [1, 5], [-1, 0, 0], 0.5, 2.0)  # no such node
    with pytest.raises(ValueError):
        speedups.container_cut([0.5, 0.5], [1], [0.0, 0.0], [1, 2], [-1, 0, 0], 0.5, 2.0)
    assert speedups.container_cut([0.0, 0.0], [1, 1], [0.0, 0.0], [1, 2], [-1, 0, 0], 0.5, 2.0) == [0.0, 0.0]


@pytest.mark.parametrize("markdown", [False, True])
def test_boilerplate_mode_writes_without_the_subtrees_as_detaching_them_does(monkeypatch, markdown):
    """The compiled path unlinks the boilerplate subtrees only while the
    page is written and puts the tree back; detaching them through lxml
    from a copy of the tree (the fallback) must give the same text, HTML
    and Markdown."""
    from scrapy_deboiler import Page, SiteModel, _clean, clean_page

    def pages():
        out = [Page(html, url) for url, html, _ in site_pages("unlink.example", 8)]
        # Neighbouring boilerplate subtrees, tails between them, first and
        # last children, and control characters from references in a tail
        # (three paragraphs of their own: pages that differ in one are
        # near copies, which give a model no evidence).
        extra = ("<html><body><nav><p>Home News</p></nav><nav><p>Sport Culture</p></nav>"
                 "&#26;tail one<div><footer><p>Footer links here</p></footer></div>"
                 "<p>Page {n} own words.</p><p>Second {n}.</p><p>Third {n}.</p>"
                 "<aside><p>Related list</p></aside></body></html>")
        out += [Page(extra.format(n=n), f"http://unlink.example/x{n}") for n in range(4)]
        return out

    model = SiteModel.fit(pages())
    copied = []
    without = _clean._without
    monkeypatch.setattr(_clean, "_without", lambda root, dropped: copied.append(root) or without(root, dropped))

    def clean_all():
        out = []
        for page in pages():
            before = etree.tostring(page.root)
            out.append(clean_page(page, model, markdown=markdown))
            assert etree.tostring(page.root) == before  # the Page's tree is as it was
        return out

    # Unlinked and put back; the last four (control characters beside a
    # subtree) detached from a copy, as below.
    fast = clean_all()
    assert len(copied) == 4
    monkeypatch.setattr(_clean, "_speedups", None)
    slow = clean_all()
    assert len(copied) == 4 + 12
    assert [(r.text, r.html, r.markdown, r.removed) for r in fast] == [
        (r.text, r.html, r.markdown, r.removed) for r in slow]
    assert sum(r.removed for r in fast) > 20


def test_every_module_takes_the_compiled_walks_through_one_switch():
    """SCRAPY_DEBOILER_PURE_PYTHON=1 turns every compiled walk off (the
    Python references run, for comparing outputs and times): each module
    imports ``_speedups`` through ``_compiled`` alone."""
    import pathlib
    import subprocess
    import sys

    import scrapy_deboiler

    package = pathlib.Path(scrapy_deboiler.__file__).parent
    users = sorted(p.stem for p in package.glob("*.py") if "_speedups" in p.read_text(encoding="utf-8")
                   and p.stem != "_compiled")
    assert {"_clean", "_content", "_content_html", "_signatures", "_text", "_title"} <= set(users)
    for path in package.glob("*.py"):
        if path.stem != "_compiled":
            assert "import _speedups" not in path.read_text(encoding="utf-8"), path.name
    code = ("import importlib, sys; mods = [importlib.import_module('scrapy_deboiler.' + m) for m in sys.argv[1:]];"
            "print([m._speedups is None for m in mods if hasattr(m, '_speedups')])")
    for value, off in (("1", True), ("0", False), ("", False)):
        env = {**os.environ, "SCRAPY_DEBOILER_PURE_PYTHON": value}
        out = subprocess.run([sys.executable, "-c", code, *users], env=env, capture_output=True, text=True,
                             check=True).stdout
        assert out.strip() == str([off] * len(users))



# Content mode's clean_html, the headline's <h1>s and the page checks: the
# compiled walks against their Python references, on the generated sites
# and on random pages with random kept blocks.
from scrapy_deboiler import _content_html, _title  # noqa: E402


def same_html(root, kept, skip=frozenset(), url=""):
    for hidden in (None, _content._is_hidden):
        fast = _content_html.content_html(root, kept, skip, hidden, url)
        assert fast == _content_html.content_html_py(root, kept, skip, hidden, url)
    return fast


def same_title(root, url="", skip=frozenset()):
    fast_headings = _title._headings(root, skip)
    assert fast_headings == _title._headings_py(root, skip)
    fast = _title.page_title(root, url, skip)
    py = _title._speedups
    try:
        _title._speedups = None
        assert fast == _title.page_title(root, url, skip)
    finally:
        _title._speedups = py
    assert speedups.noscript_words(root) == _content.noscript_words_py(root)
    assert speedups.head_tags(root) == _title._head_tags_py(root)
    assert _content.title_text(root) == (root.findtext(".//title") or "")
    return fast_headings


@pytest.mark.parametrize("fitted", [True, False], ids=["site model", "single page"])
@pytest.mark.parametrize("kind", [*KINDS, "articles"])
def test_compiled_clean_html_and_titles_equal_the_python_walks_on_generated_sites(monkeypatch, kind, fitted):
    """What clean_page gives content_html (kept blocks, boilerplate
    skipped, the page's URL) and page_title, page by page."""
    from scrapy_deboiler import Page, SiteModel, clean_page

    if kind == "articles":
        pairs = [(url, html) for url, html, _ in site_pages("articles.example", 8)]
    else:
        pairs = [typed_page(kind, f"{kind}.example", k) for k in range(8)]
    model = SiteModel.fit([Page(h, u) for u, h in pairs]) if fitted else None
    calls, titles = [], []
    real_html, real_title = _content.content_html, _title.page_title
    monkeypatch.setattr(_content, "content_html", lambda *a: calls.append(a) or real_html(*a))
    from scrapy_deboiler import _clean
    monkeypatch.setattr(_clean, "page_title", lambda *a, **k: titles.append((a, k)) or real_title(*a, **k))
    pages = [Page(h, u) for u, h in pairs]
    results = [clean_page(page, model, mode="content") for page in pages]
    assert len(calls) == len(titles) == len(pages) and all(r.text for r in results)
    for root, kept, skip, hidden, url in calls:
        assert hidden is _content._is_hidden and kept and (skip or not fitted)
        assert same_html(root, kept, skip, url) == _content_html.content_html(root, kept, skip, hidden, url)
    for (root, url), k in titles:
        assert same_title(root, url, k["skip"])  # every page has its headline
        assert _title.page_title(root, url, k["skip"])


_TAGS = ("div p ul ol li table thead tbody tfoot tr td th caption h1 h2 h3 blockquote pre dl dt dd figure "
         "figcaption section details summary dialog span a b em code br img picture abbr q noscript svg title "
         "script template font center form meta").split()
_ATTR = ["", "", "", " hidden", " role='tabpanel' hidden", " style='display:none' role='x TabPanel'",
         " role='region' aria-hidden='true'", " class='Cdr-ACCORDION__content' hidden",
         " hidden class='sr-only accordion'",
         " class='tab-pane fade' style='display:none'", " aria-hidden='true' class='A-Expander-Content'",
         " class='sr-only x'", " class='d-none d-md-block'", " aria-hidden='true'",
         " style='display: NONE'", " href='/x?a=1&amp;b=2'", " href='javascript:x'", " href=' #top'",
         " href='//cdn.example/y'", " src='/i.png' alt='pic'", " alt=''", " src=''", " title='t \"q\" &amp;'",
         " lang='de' dir='rtl'", " colspan='2' scope='row'", " id='x' class='post'", " open",
         " property='og:title' content=' The  og\ttitle '", " name='Application-Name ' content='Site'",
         " property='' name='og:site_name' content='r'"]
_WORDS = ["", "", " ", "  \n\t ", "Some words", "more, text.", "x", " spaced  out ", "&lt;&amp;&gt; \"quoted\" 'a'",
          "\xa0nbsp\xa0", "\u2003em\u3000", "\x0cff\x0c", "\u00e9t\u00e9 \u4e2d\u6587", "a\nnew line", "_"]


def _random_pages(texts: Sequence[str], tags: Sequence[str], attrs: Sequence[str], max_depth: int, comment_one_in: int,
                  comment: str):
    """A strategy of random page bodies: text, then up to 4 elements a
    level (to ``max_depth``) of ``tags`` with ``attrs``, each with its tail,
    one in ``comment_one_in`` preceded by ``comment``."""
    @st.composite
    def page(draw, depth=0):
        parts = [draw(st.sampled_from(texts))]
        for _ in range(draw(st.integers(0, 4 if depth < max_depth else 0))):
            tag = draw(st.sampled_from(tags))
            attr = draw(st.sampled_from(attrs))
            if draw(st.integers(0, comment_one_in - 1)) == 0:
                parts.append(comment)
            parts.append(f"<{tag}{attr}>{draw(page(depth + 1))}</{tag}>{draw(st.sampled_from(texts))}")
        return "".join(parts)

    return page


_page = _random_pages(_WORDS, _TAGS, _ATTR, 5, 10, "<!-- a comment -->")


@settings(max_examples=300, deadline=None)
@given(_page(), st.randoms(use_true_random=False), st.booleans())
def test_compiled_clean_html_and_titles_equal_the_python_walks_on_random_pages(body, rng, comments):
    """Any kept elements and skipped subtrees, with the loader's parser or
    one that keeps comments and processing instructions."""
    html = f"<html lang='en'><head><title> The  title </title></head><body>{body}</body></html>"
    root = (parse_html(html).root if not comments
            else etree.fromstring(html.replace("<!--", "<?pi x?><!--"), etree.HTMLParser()))
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    for _ in range(3):
        kept = rng.sample(elements, rng.randint(0, min(8, len(elements))))
        skip = set(rng.sample(elements, rng.randint(0, min(3, len(elements)))))
        same_html(root, kept, skip, rng.choice(["", "http://r.example/a/b?q=1#f"]))
        same_title(root, "http://www.r.example/a", skip)


def test_compiled_clean_html_walks_deep_pages_without_recursing():
    """Deep trees: each kept block an ancestor of the next."""
    for html in ("<html><body>" + "<ul><li>item words here" * 5000 + "</li></ul>" * 5000 + "</body></html>",
                 "<html><body>" + "<div><h1>Words of a heading</h1><noscript>no</noscript>" * 5000
                 + "</div>" * 5000 + "</body></html>"):
        root = parse_html(html).root
        blocks, _, flags = _content.judge_blocks(root)
        kept = [b.element for b, k in zip(blocks, flags) if k]
        every = [b.element for b in blocks]
        assert kept and len(every) >= 500  # the loader keeps 1,023 levels
        same_html(root, kept)
        same_html(root, every)
        same_html(root, every[::7], set(every[1::5]))
        assert len(same_title(root)) == len(root.xpath("//h1")) == (0 if "<ul>" in html else 1021)


def test_the_compiled_head_title_is_what_elementpath_finds():
    for html in ("<html><head><title>A</title></head></html>",
                 "<html><head></head><head><title>B</title></head></html>",
                 "<html xmlns:x='u'><x:head><title>A</title></x:head><head><x:title>B</x:title><title/></head></html>",
                 "<html><body><title>C</title></body></html>", "<html><head><title><b>D</b>E</title></head></html>",
                 "<html/>"):
        root = etree.fromstring(html)
        title = root.find("head/title")
        assert speedups.child_text(root, b"head", b"title") == ((title.text or "") if title is not None else "")


_META_TAGS = ["div", "span", "p", "a", "time", "h1", "h2", "h3", "li", "abbr", "em"]
_META_ATTRS = ['', ' class="byline"', ' class="Post-Date x"', ' id="AUTHOR-box"', ' itemprop=""',
               ' itemprop="author"', ' datetime="2024-05-06"', ' datetime=""', ' rel="author"', ' rel=""',
               ' rel="nofollow"', ' rel="NoFollow Author"', ' rel="authority"', ' rel="co-author"',
               ' href="/writers/ann"', ' href="/Autores/x"', ' href="/about"', ' class="readtime"',
               ' class="wrİter"', ' class="\u212aey"', ' class="caf\u00e9-date"', ' class="a&amp;date"']
_META_TEXTS = ["", "By Ann Lee", "  by: Tom", "Written by Sara", "Autor: Kofi", "\u00a0By Ann", "By", "byline",
               "Bylines", "Posted on May 6, 2024", "the news", "Von Anna", "Автор: Иван", "作者：李", "ByAnn",
               "Redacción: Ana", "écrit par Jean", "AUTHORS: x", "\tPor Maria"]


@st.composite
def _meta_page(draw, depth=0):
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        tag = draw(st.sampled_from(_META_TAGS))
        attrs = draw(st.sampled_from(_META_ATTRS))
        text = draw(st.sampled_from(_META_TEXTS))
        parts.append(f"<{tag}{attrs}>{text}{draw(_meta_page(depth + 1))}</{tag}>{draw(st.sampled_from(_META_TEXTS))}")
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_meta_page(), st.booleans())
def test_the_compiled_candidate_walk_lets_through_every_element_the_python_test_takes(body, comments):
    """Metadata's byline candidates: the compiled prefilter and the exact
    test give what the exact test alone gives over every element, on pages
    of class, id, itemprop, datetime, rel, href and leading texts in any
    case and script."""
    from scrapy_deboiler import _bylines

    html = f"<html><body>{body}</body></html>"
    root = (parse_html(html).root if not comments
            else etree.fromstring(html.replace("<p", "<!-- c --><?pi x?><p"), etree.HTMLParser()))
    body_el = root.find("body")
    want = [(i, el) for i, el in enumerate(body_el.iter(etree.Element)) if _bylines._is_candidate(el)]
    assert _bylines._speedups is speedups  # (this module's fixture, in the pure-Python session too)
    assert _bylines._candidate_elements(root) == want


_SEEN_TAGS = ["div", "p", "li", "br", "span", "a", "script", "style", "select", "option", "button", "svg", "b"]
_SEEN_ATTRS = ["", ' hidden', ' hidden role="tabpanel"', ' role="Region" style="display:none"', ' aria-hidden="true"',
               ' aria-hidden="false"',
               ' style="display: none"',
               ' style="color:red"', ' class="sr-only"', ' class="byline"']
_SEEN_TEXTS = ["", " ", "By Ann Lee", "\u00e9t\u00e9 \u4e2d\u6587 words", "May 6, 2024\n", "a\u00a0b", "x" * 30]


_seen_page = _random_pages(_SEEN_TEXTS, _SEEN_TAGS, _SEEN_ATTRS, 4, 6, "<!-- a comment -->after")


@settings(max_examples=300, deadline=None)
@given(_seen_page(), st.integers(0, 120), st.booleans())
def test_the_compiled_byline_text_equals_the_python_walk(body, limit, comments):
    """Metadata's text of an element (``_bylines._seen_text``): unseen and
    hidden elements out but their tails, breaks, comments and their tails,
    and the cut after the event passing ``limit`` characters (not bytes:
    non-ASCII text), from every element of the page."""
    from scrapy_deboiler import _bylines
    from scrapy_deboiler._hidden import _class_hides

    html = f"<html><body><div>{body}</div></body></html>"
    root = (parse_html(html).root if not comments
            else etree.fromstring(html.replace("<p", "<!-- c --><?pi x?><p"), etree.HTMLParser()))
    for el in root.iter(etree.Element):
        assert speedups.byline_text(el, limit, _class_hides) == _bylines._seen_raw(el, limit)


@st.composite
def _stage2_inputs(draw):
    """A block tree (parents before children), blocks on its elements with
    first-stage scores, words, link densities and run keys, a headline or none."""
    count = draw(st.integers(1, 30))
    parents = [-1] + [draw(st.integers(-1, e - 1)) for e in range(1, count)]
    n = draw(st.integers(0, 25))
    scores = draw(st.lists(st.sampled_from([0.0, 0.2, 0.25, 0.3, 0.5, 0.51, 0.9, 1.0]) | st.floats(0, 1),
                           min_size=n, max_size=n))
    words = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    density = draw(st.lists(st.floats(0, 3), min_size=n, max_size=n))
    nodes = draw(st.lists(st.integers(0, count - 1), min_size=n, max_size=n))
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", 7]), min_size=n, max_size=n))
    head = draw(st.integers(-1, n - 1)) if n else -1
    return scores, words, density, nodes, parents, head, keys, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(_stage2_inputs())
def test_compiled_stage2_rows_equal_the_python_definition(inputs):
    """``_speedups.stage2_table`` is ``_decide.stage2_rows`` flattened, to
    the last double (its article, runs, ancestors and headline included)."""
    from scrapy_deboiler import _decide

    rows = _decide.stage2_rows(*inputs)
    flat = _decide.stage2_table(*inputs)
    assert list(flat) == [v for row in rows for v in row]
    assert all(len(row) == _decide.STAGE2_FEATURES for row in rows)
