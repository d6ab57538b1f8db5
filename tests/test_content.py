from scrapy_deboiler import _content

ARTICLE = "".join(
    f"<p>Paragraph {i} of the story tells what happened, who was there and why it matters to readers.</p>"
    for i in range(6)
)
PAGE = (
    "<html><head><title>Story</title></head><body{body}>"
    "<nav class='menu'><a href='/'>Home</a> <a href='/a'>About</a> <a href='/c'>Contact</a></nav>"
    "<article><h1>Story</h1>" + ARTICLE + "</article>"
    "<div class='related'><a href='/x'>Another story</a> <a href='/y'>One more story</a></div>"
    "</body></html>"
)


def judged(html: str):
    from scrapy_deboiler import Page

    blocks, scores, flags = _content.judge_blocks(Page(html).root)
    return [b.text for b in blocks], scores, flags


def test_a_body_class_naming_every_part_of_the_page_says_nothing_about_its_blocks():
    flags = " ".join(f"f_{h}_tools_on" for h in _content.HINTS)  # feature flags, one per hint
    plain = judged(PAGE.format(body=""))
    flagged = judged(PAGE.format(body=f' class="{flags}"'))
    assert flagged == plain
    assert _content._hint_bits(flags, None) == 0
    assert _content._hint_bits("post-footer share", None) == (
        _content._HINT_BIT["footer"] | _content._HINT_BIT["share"] | _content._HINT_BIT["post"])
    texts, _, kept = plain
    assert [t for t, k in zip(texts, kept) if k][1:] == [t for t in texts if t.startswith("Paragraph")]
