import random

import pytest

from scrapy_deboiler import FitParams, Page, SiteModel, SignatureScheme
from sitegen import site_pages


def pages(n=8, site="a.example"):
    return [Page(html, url) for url, html, _ in site_pages(site, n)]


def test_shared_subtrees_become_boilerplate_and_content_does_not():
    ps = pages()
    model = SiteModel.fit(ps)
    assert model.pages == 8 and model.pairs == 7
    shared = set.intersection(*(set(p.signatures) for p in ps))
    assert shared and shared <= model.boilerplate
    for p in ps:
        unique = set(p.signatures) - set().union(*(q.signatures for q in ps if q is not p))
        assert unique and not unique & model.boilerplate


def test_input_order_does_not_matter():
    ps = pages(10)
    a = SiteModel.fit(ps)
    shuffled = ps[:]
    random.Random(1).shuffle(shuffled)
    assert SiteModel.fit(shuffled) == a


def test_near_identical_neighbours_give_no_evidence():
    p = pages(1)[0]
    html = site_pages("a.example", 1)[0][1]
    twin = Page(html, p.url + "?utm=x")
    model = SiteModel.fit([p, twin])
    # An exact copy counts once (distinct_pages), before the guard.
    assert model.pairs == 0 and model.copies == 1 and model.pages == 2 and not model.boilerplate
    # One paragraph changed (IoU 0.90): the guard decides whether the pair counts.
    near = Page(html.replace("<p>", "<p>One more sentence here. ", 1), p.url + "?utm=y")
    assert SiteModel.fit([p, near], FitParams(iou_guard=0.9)).skipped_pairs == 1
    assert SiteModel.fit([p, near], FitParams(iou_guard=1.0)).boilerplate


@pytest.mark.parametrize("bad", [{"window": 0}, {"window": -1}, {"window": 5000}, {"min_support": 0},
                                 {"iou_guard": 2.0}, {"iou_guard": -1}, {"window": True}])
def test_fit_params_a_signature_file_could_not_hold_are_refused(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        FitParams(**bad)


def test_support_threshold_is_capped_by_the_pairs_there_are():
    two = SiteModel.fit(pages(2), FitParams(min_support=3))
    assert two.pairs == 1 and two.threshold == 1 and two.boilerplate
    many = SiteModel.fit(pages(10), FitParams(min_support=3))
    assert many.threshold == 3


def test_one_pair_of_evidence_does_not_make_boilerplate_on_a_big_site():
    # deboiler defect 7: a generic block shared by two neighbours only was
    # removed from every page of the site.
    site = site_pages("b.example", 10)
    box = "<div class='price'><span>Price</span> <b>19.99</b></div>"
    htmls = [h.replace("<article>", "<article>" + box) if i in (3, 4) else h
             for i, (_, h, _) in enumerate(site)]
    model = SiteModel.fit([Page(h, u) for (u, _, _), h in zip(site, htmls)])
    box_sigs = set(Page(htmls[3]).signatures) & set(Page(htmls[4]).signatures)
    box_only = box_sigs - set(Page(site[0][1]).signatures)
    assert box_only and not box_only & model.boilerplate


def test_update_and_merge_add_evidence():
    a, b = pages(6, "c.example")[:3], pages(6, "c.example")[3:]
    merged = SiteModel.fit(a).merge(SiteModel.fit(b))
    updated = SiteModel.fit(a).update(b)
    assert merged == updated
    assert merged.pages == 6 and merged.pairs == 4


def test_merge_refuses_other_schemes_and_parameters():
    other = SiteModel(FitParams(scheme=SignatureScheme(template_min_elements=0)))
    with pytest.raises(ValueError, match="schemes"):
        SiteModel.fit(pages(2)).merge(other)
    with pytest.raises(ValueError, match="window 1 and 3; min_support 2 and 1"):
        SiteModel.fit(pages(2)).merge(SiteModel.fit(pages(2), FitParams(window=3, min_support=1)))


def test_a_model_holds_no_pages_or_trees():
    model = SiteModel.fit(pages(4))
    assert all(type(k) is str and type(v) is int for k, v in model.support.items())
    assert {type(v) for v in vars(model).values()} <= {FitParams, int, dict, frozenset, bool, type(None)}


def test_params_round_trip():
    params = FitParams(iou_guard=0.9, min_support=3, window=2)
    assert FitParams.from_json(params.to_json()) == params


def test_the_provisional_rules():
    """``_provisional``: when a model is provisional, how it is read, finished and what it learns from."""
    from scrapy_deboiler._provisional import complete, fitted_is_provisional, read_as, wants_pages

    assert fitted_is_provisional(4, 5, pooled=False) and not fitted_is_provisional(5, 5, pooled=False)
    assert fitted_is_provisional(9, 5, pooled=True)  # the cluster's model is to replace it
    pages = [Page(html, url) for url, html, _ in site_pages("alpha", 6)]
    signed = [(p.url, frozenset(p.signatures)) for p in pages]
    first = SiteModel.fit(signed[:2])
    first.provisional, first.page_keys = True, frozenset({"0" * 16, "1" * 16})
    assert wants_pages(first, learn=False) and read_as(first, 3).provisional
    grown = complete(first, signed[2:3], {"2" * 16}, min_pages=5)
    assert grown.provisional and len(grown.page_keys) == 3 and grown.pages == 3 and first.pages == 2
    done = complete(grown, signed[3:5], {"3" * 16, "4" * 16}, min_pages=5)
    assert not done.provisional and done.page_keys == frozenset() and done.pages == 5
    assert not wants_pages(done, learn=False) and wants_pages(done, learn=True)
    # Read by a crawl whose threshold it has reached: finished there.
    assert not read_as(grown, 3).provisional


def test_one_page_key():
    """``_pagekey``: a page is its URL without fragment and its content, whoever keys it."""
    from scrapy_deboiler._pagekey import html_digest, page_key, pooled_key

    html = "<p>caf\u00e9</p>" * 2000  # longer than one hashing piece
    assert html_digest(html) == html_digest(html.encode("utf-8")) and len(html_digest(html)) == 16
    key = page_key("https://a.example/x", html_digest(html))
    assert key == page_key("https://a.example/x#top", html_digest(html)) and len(key) == 8
    assert key != page_key("https://a.example/x", html_digest(html + " "))
    assert key != page_key("https://a.example/y", html_digest(html))
    assert len(pooled_key("https://a.example/x")) == 16 and pooled_key("a") != pooled_key("b")
