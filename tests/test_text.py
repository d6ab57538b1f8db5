import pytest
from lxml import html as lxml_html

from scrapy_deboiler import parse_html, tree_text


def text(html):
    return tree_text(parse_html(html).root)


@pytest.mark.parametrize(
    "html, expected",
    [
        # deboiler lost text directly under <body> ...
        ("<body>loose text<div>block</div>tail text</body>", "loose text\nblock\ntail text"),
        # ... glued neighbouring links together ...
        ("<p><a>foo</a> <a>bar</a></p>", "foo bar"),
        # ... and split sentences around code, small and time.
        ("<p>Run <code>ls</code> at <time>noon</time>, <small>quietly</small>.</p>",
         "Run ls at noon, quietly."),
        ("<p>no<b>space</b>inside</p>", "nospaceinside"),
        # Unescaped once only.
        ("<p>&amp;lt;b&amp;gt; &lt;i&gt;</p>", "&lt;b&gt; <i>"),
        ("<div>a<br>b</div>", "a\nb"),
        ("<ul><li>one</li><li>two</li></ul>", "one\ntwo"),
        ("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"),
        ("<pre>line 1\nline 2</pre>", "line 1\nline 2"),
        # A <pre>'s lines keep their indentation and blank lines (code);
        # blank first and last lines and trailing spaces go, as pre_text's.
        ("<p>Intro</p><pre>\n\ndef f(x):\n    return  x   \n\n    # end\n\n</pre>after",
         "Intro\ndef f(x):\n    return  x\n\n    # end\nafter"),
        ("<pre><div>a</div><div>  b</div>\n  c<pre>in\n  ner</pre></pre><p> x  y </p>",
         "a\n  b\n  c\nin\n  ner\nx y"),
        # A <br> in a <pre> is a line break of its text: two make a blank line.
        ("<pre>one<br>two<br><br>  four<span>x<br>y</span></pre><div>a<br><br>b</div>",
         "one\ntwo\n\n  fourx\ny\na\nb"),
        ("<p>a\n   b\xa0\xa0c</p>", "a b c"),
        ("<h1>Title</h1><p>Para</p>", "Title\nPara"),
    ],
)
def test_text_reads_like_the_page(html, expected):
    assert text(html) == expected


def test_hidden_elements_are_skipped():
    html = ("<html><head><title>T</title><style>p{}</style></head><body>"
            "<script>var x</script><noscript>enable js</noscript><template><p>t</p></template>"
            "<p>shown</p></body></html>")
    assert text(html) == "shown"


def test_pages_wrapped_in_one_form_keep_their_text():
    html = "<body><form action='x'><div><h1>Title</h1><p>Body text.</p></div></form></body>"
    assert text(html) == "Title\nBody text."


def test_deep_trees_do_not_recurse():
    html = "<body>" + "<div>" * 2000 + "deep" + "</div>" * 2000 + "</body>"
    assert text(html) == "deep"


@pytest.mark.parametrize("mode", ["content", "boilerplate"])
def test_character_references_to_control_characters_do_not_fail_the_page(mode):
    # libxml2 keeps ``&#26;`` and ``&#12;`` as characters in the text it
    # parses, but lxml refuses them in text set from Python: removing a
    # subtree that such text follows (its tail moves to the previous
    # sibling) failed the page (a real CleanEval page, with --markdown).
    from scrapy_deboiler import Page, SiteModel, clean_page

    def page(n):
        return Page(f"<html><body><div><nav><p>Home News Sport</p></nav>&#26;Story {n} tells "
                    f"how the river rose&#12; and fell.<p>Part {n} of the long report.</p>"
                    f"<span>aside</span>&#26; tail</div></body></html>", f"http://a.example/{n}")

    model = SiteModel.fit([page(n) for n in range(3)])
    for n in range(3):
        result = clean_page(page(n), model, mode=mode, markdown=True)
        assert f"Part {n} of the long report." in result.text
        assert "Home News Sport" not in result.text
        assert f"Part {n} of the long report." in result.markdown


def test_pre_text_keeps_lines_and_indentation_and_leaves_out_what_it_is_told():
    from scrapy_deboiler._text import pre_text

    root = lxml_html.fromstring("<div><pre>\n#!/bin/sh\n<span class='b'>shared</span>\n  echo <b>hi</b>  <!-- c -->"
                                "<script>x()</script>\n<p>own block</p>tail<br>  last   \n\n</pre></div>")
    pre = root.find(".//pre")
    assert pre_text(pre) == "#!/bin/sh\nshared\n  echo hi\nown blocktail\n  last"
    assert pre_text(pre, frozenset({"p"}), {pre.find("span")}) == "#!/bin/sh\n\n  echo hi\ntail\n  last"
