from lxml import etree

from scrapy_deboiler import Candidates, SignatureScheme, parse_html, sign_tree


def sigs(html, scheme=SignatureScheme()):
    return sign_tree(parse_html(html).root, scheme)


def sig_of(html):
    """Signature of the first <div>."""
    signed = sigs(html)
    return [s for s, e in zip(signed.signatures, signed.elements) if e.tag == "div"][-1]


def test_attributes_whitespace_case_and_comments_are_ignored():
    a = sig_of('<div class="x"><a href="/a">Home  Page</a></div>')
    b = sig_of('<div id="y" style="c"><a href="/b">home\xa0\npage<!-- c --></a></div>')
    assert a == b


def test_text_and_tags_matter():
    base = sig_of("<div><a>Home</a></div>")
    assert base != sig_of("<div><a>Away</a></div>")
    assert base != sig_of("<div><b>Home</b></div>")
    assert base != sig_of("<div><a>Ho</a>me</div>")


def test_signatures_are_stable_across_machines_and_versions():
    # Pinned value: changing it silently would invalidate every saved file.
    assert sig_of("<div><p>Hello world</p></div>") == "da159f4917225945"


def test_text_free_subtrees_are_not_signed():
    signed = sigs("<body><div><img src='a.png'></div><div><p>text</p></div></body>")
    assert all(e.xpath("string()").strip() for e in signed.elements)


def test_descendants_come_before_ancestors_and_starts_cover_subtrees():
    signed = sigs("<body><div><p>a</p><p>b</p></div><p>c</p></body>")
    pos = {id(e): i for i, e in enumerate(signed.elements)}
    for i, el in enumerate(signed.elements):
        for d in el.iterdescendants():
            if id(d) in pos:
                assert signed.starts[i] <= pos[id(d)] < i


def test_template_signature_matches_link_lists_with_other_links():
    def page(links):
        items = "".join(f"<li><a href='#'>{t}</a></li>" for t in links)
        return f"<body><div><h3>Top stories</h3><ul>{items}</ul></div></body>"

    def list_sigs(links, scheme=SignatureScheme()):
        signed = sigs(page(links), scheme)
        return {s for s, e in zip(signed.signatures, signed.elements) if e.tag == "ul"}

    one, two = ["one", "two", "three", "four"], ["five", "six", "seven", "eight"]
    assert list_sigs(one) & list_sigs(two)  # the template: same shape, link-dense
    off = SignatureScheme(template_min_elements=0)
    assert not list_sigs(one, off) & list_sigs(two, off)


def test_a_template_signature_is_its_shape_where_it_stands():
    # A shop's list of two product links has the shape of a footer's list
    # of two links; matched on shape alone, it was removed on every page.
    shop = "<body><main><h1>Shop</h1><ul><li><a>Drip kit</a> £49</li><li><a>Manual</a></li></ul></main></body>"
    footer = "<body><footer><div><ul><li><a>About</a></li><li><a>Contact</a></li></ul></div></footer></body>"
    other = "<body><footer><div><ul><li><a>Delivery</a></li><li><a>Rules</a></li></ul></div></footer></body>"

    def list_sig(html, scheme=SignatureScheme()):
        signed = sigs(html, scheme)
        return {signed.signatures[i] for i in signed.shapes if signed.elements[i].tag == "ul"}

    assert list_sig(footer) == list_sig(other)  # the template: same place, same shape
    assert not list_sig(shop) & list_sig(footer)
    shape_alone = SignatureScheme(template_context=0)  # files written before: their scheme
    assert list_sig(shop, shape_alone) == list_sig(footer, shape_alone)


def test_schemes_read_from_older_files_keep_the_shape_alone():
    data = SignatureScheme().to_json()
    assert data["template_context"] == 4 and SignatureScheme.from_json(data) == SignatureScheme()
    del data["template_context"]
    assert SignatureScheme.from_json(data).template_context == 0
    assert "template_context" not in SignatureScheme(template_context=0).to_json()


def test_paragraph_text_is_not_a_template():
    a = set(sigs("<body><div><p>one two</p><p>three</p><p>four</p><p>five</p></div></body>").signatures)
    b = set(sigs("<body><div><p>six</p><p>seven</p><p>eight</p><p>nine</p></div></body>").signatures)
    assert not a & b


def test_candidate_rules():
    deb = Candidates(frozenset({"div", "nav"}), ("top", "footer"))
    assert deb("div") and deb("custom-topbar") and deb("footer") and not deb("p")
    every = Candidates(everything=True, exclude=frozenset({"body"}))
    assert every("p") and not every("body")
    assert Candidates.from_json(deb.to_json()) == deb


def test_thousands_of_levels_are_walked_without_recursion():
    root = etree.Element("html")
    el = etree.SubElement(root, "body")
    # Deeper than Python's recursion limit. (Parsed pages are at most 2048
    # deep; lxml frees element proxies in O(depth), so far deeper hand-built
    # trees cost time in lxml itself, not here.)
    for _ in range(5000):
        el = etree.SubElement(el, "div")
    el.text = "deep"
    signed = sign_tree(root)
    assert len(signed.signatures) == 5000
