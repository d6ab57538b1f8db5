from lxml import etree

from hostile import LIBXML2_LIMITS_DEPTH
from scrapy_deboiler import parse_html, tree_text


def text_of(html, encoding=None):
    return tree_text(parse_html(html, encoding).root)


def test_str_and_bytes_give_the_same_tree():
    html = "<html><body><p>Grüße aus Köln</p></body></html>"
    assert text_of(html) == text_of(html.encode("utf-8")) == "Grüße aus Köln"


def test_meta_charset_is_honoured():
    html = '<html><head><meta charset="windows-1252"></head><body><p>caf\xe9 \x93quoted\x94</p></body></html>'
    assert text_of(html.encode("latin-1")) == "café “quoted”"


def test_declared_encoding_beats_meta_and_bom_beats_both():
    body = "<html><head><meta charset='utf-8'></head><body><p>Ελληνικά</p></body></html>"
    assert text_of(body.encode("iso-8859-7"), "iso-8859-7") == "Ελληνικά"
    assert text_of(b"\xef\xbb\xbf" + body.encode("utf-8"), "latin-1") == "Ελληνικά"


def test_undeclared_bytes_are_detected():
    assert text_of("<p>naïve façade</p>".encode("utf-8")) == "naïve façade"


def test_content_deeper_than_libxml2_limit_is_kept():
    for depth in (300, 3000, 100_000):
        html = "<html><body>" + "<div>" * depth + "DEEP" + "</div>" * depth + "<p>after</p></body></html>"
        parsed = parse_html(html)
        text = tree_text(parsed.root)
        assert "DEEP" in text and "after" in text, depth
        assert ("depth-flattened" in parsed.notes) == (depth > 2048 and LIBXML2_LIMITS_DEPTH)


def test_unclosed_deep_nesting_is_kept():
    html = "<html><body>" + "<span>x " * 5000 + "END"
    text = tree_text(parse_html(html).root)
    assert text.endswith("END") and text.count("x") == 5000


def test_nul_and_control_characters():
    parsed = parse_html("<p>a\x00b\x01c\x1fd\te</p>")
    assert tree_text(parsed.root) == "a\ufffdbcd e"
    assert {"nul", "control-characters"} <= set(parsed.notes)


def test_empty_and_blank_pages_give_an_empty_tree():
    for html in ("", "   \n ", b"", b"\xef\xbb\xbf"):
        parsed = parse_html(html)
        assert parsed.root.tag == "html" and tree_text(parsed.root) == ""


def test_lone_surrogates_do_not_raise():
    assert "ab" in text_of("<p>a\ud800b</p>").replace("?", "")


def test_comments_and_processing_instructions_are_dropped():
    root = parse_html("<p>a<!-- hidden -->b<?php echo 1 ?>c</p>").root
    assert tree_text(root) == "abc"
    assert not any(isinstance(e, (etree._Comment, etree._ProcessingInstruction)) for e in root.iter())


def test_a_title_never_closed_does_not_swallow_the_page():
    page = ("<html><head><title>Weekly notes\n<script>var x = 1;</script></head><body>"
            + "<p>The article has a great deal of text in it, sentence after sentence.</p>" * 12
            + "</body></html>")
    parsed = parse_html(page)
    # libxml2 2.14 and later read the rest of the page into the title; older
    # ones end it at </head>, and there is nothing to repair.
    raw = etree.fromstring(page, etree.HTMLParser()).find("body")
    swallowed = raw is None or "sentence after sentence" not in "".join(raw.itertext())
    assert parsed.notes == (["title-closed"] if swallowed else [])
    assert parsed.root.findtext(".//title").strip() == "Weekly notes"
    assert tree_text(parsed.root).count("sentence after sentence") == 12


def test_body_content_kept_in_head_by_an_unknown_tag_is_moved_to_the_body():
    page = ("<html><head><title>T</title><meta charset='utf-8'><mbox><table><tr><td>"
            "<p>Words of the page itself.</p></td></tr></table></head></html>")
    parsed = parse_html(page)
    assert "body-recovered" in parsed.notes
    assert tree_text(parsed.root) == "Words of the page itself."
    assert parsed.root.find("body/mbox") is not None
