import json

import pytest

from scrapy_deboiler._cli import main
from scrapy_deboiler._evaluate import evaluate, score_page, tokens


def test_tokens_are_casefolded_word_runs_in_any_script():
    assert tokens("Straße, 2026: ΚΑΛΗΜΈΡΑ東京 under_score!") == ["strasse", "2026", "καλημέρα東京", "under_score"]


@pytest.mark.parametrize("pred, gold, p, r", [
    ("the cat sat", "the cat sat", 1, 1),                 # exact
    ("", "the cat sat", 0, 0),                            # empty prediction
    ("the cat", "the cat sat on the mat", 1, 2 / 6),      # a part of it
    ("the the the", "the cat", 1 / 3, 1 / 2),             # multiset: one "the" matches
    ("menu login the cat", "the cat", 2 / 4, 1),          # boilerplate left in
    ("anything", "", 0, 0),                               # nothing to find
    ("", "", 1, 1),                                       # nothing, rightly
])
def test_page_scores(pred, gold, p, r):
    s = score_page("x", pred, gold)
    assert s.precision == pytest.approx(p) and s.recall == pytest.approx(r)
    assert s.f1 == pytest.approx(2 * p * r / (p + r) if p + r else 0)


def test_macro_and_micro_and_missing_pages():
    pages, summary = evaluate([("a", "one two three four"), ("b", "five six"), ("c", "seven")],
                              {"a": "one two three four", "b": "five"})
    assert [p.f1 for p in pages] == [1, pytest.approx(2 / 3), 0] and pages[2].missing
    assert summary["macro"]["recall"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert summary["micro"]["recall"] == pytest.approx(5 / 7) and summary["micro"]["precision"] == 1
    assert summary["missing"] == 1 and summary["exact"] == 1 and summary["empty_predictions"] == 1


def test_evaluate_command(tmp_path, capsys):
    gold = tmp_path / "gold.jsonl"
    pred = tmp_path / "pred.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": 1, "gold_text": "Main text of page one."}, {"id": "2", "gold_text": "Second page."}]))
    pred.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": 1, "text": "Main text of page one."}, {"id": "2", "text": ""}, {"id": 3, "text": "extra"}]))
    out = tmp_path / "scores.json"
    assert main(["evaluate", str(gold), str(pred), "--pred-field", "text", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "macro" in printed and "0.500" in printed and "1 predictions without gold ignored" in printed
    doc = json.loads(out.read_text())
    assert [p["f1"] for p in doc["pages"]] == [1.0, 0.0] and doc["summary"]["ignored_predictions"] == 1
    pred.write_text("{not json\n")
    assert main(["evaluate", str(gold), str(pred)]) == 2
    assert "invalid JSON on line 1" in capsys.readouterr().err


def test_repeated_ids_are_named_not_merged_silently(tmp_path, caplog):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": 1, "gold_text": "One."}, {"id": "1", "gold_text": "Another page."}, {"id": 2, "gold_text": "Two."}]))
    with caplog.at_level("WARNING", logger="scrapy_deboiler"):
        assert main(["evaluate", str(gold), str(gold), "--pred-field", "gold_text"]) == 0
    (warning,) = {r.getMessage() for r in caplog.records if "repeat an id" in r.getMessage()}
    assert "1 records repeat an id seen before" in warning and '1 and "1" are one id' in warning
