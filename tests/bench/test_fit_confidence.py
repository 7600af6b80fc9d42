"""A tiny run of bench/fit_confidence.py: the script patches the calibrator's methods, so a changed signature
there must fail here rather than in the next fitting session."""
from __future__ import annotations

import json
from argparse import Namespace

import numpy as np
import pytest

from bench import fit_confidence as script
from tests.chat.chat_helpers import BEARS_TITLE, HANDBOOK_TITLE, ingest_tiny_kb


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_collects_replays_and_fits_a_tiny_set(seeded, monkeypatch):
    ingest_tiny_kb()
    answerable = [{"question": "星河公司的年假有多少天？", "paragraph": HANDBOOK_TITLE, "answers": ["十五天"]},
                  {"question": "北极熊的皮肤是什么颜色？", "paragraph": BEARS_TITLE, "answers": ["黑色"]}]
    unanswerable = [{"question": "企鹅生活在哪个大洲？", "paragraph": "x", "answers": ["南极洲"]}]
    monkeypatch.setattr(script, "load", lambda holdout_every: ([], answerable, unanswerable, []))
    monkeypatch.setattr(script, "warm_up", lambda: None)
    from chat.confidence import FEATURES, ConfidenceCalibrator

    run_before = ConfidenceCalibrator.run
    records = script.collect(Namespace(holdout_every=10, sample=1.0, smoke=False))

    assert ConfidenceCalibrator.run is run_before  # the recording patch is undone
    assert {r["group"] for r in records} == {"answerable", "unanswerable"}
    assert any(r["hit"] for r in records)
    rows = [script.replay(r) for r in records]
    assert all(set(script.ANSWERABLE_FEATURES) <= set(f) and set(f) <= set(FEATURES) for f in rows)
    x = np.array([[f[name] for name in script.ANSWERABLE_FEATURES] for f in rows])
    weights = script.fit(x, np.array([float(r["group"] == "answerable") for r in records]))
    assert weights.shape == (len(script.ANSWERABLE_FEATURES) + 1,) and np.isfinite(weights).all()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_an_evaluation_set_is_recorded_with_its_split_as_the_half_and_statements_left_out(seeded, tmp_path):
    from tests.chat.chat_helpers import BEARS, HANDBOOK
    from tests.isolation import fresh_default_kb

    fresh_default_kb()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.txt").write_text(HANDBOOK, encoding="utf-8")
    (docs / "bears.txt").write_text(BEARS, encoding="utf-8")
    rows = [{"id": "a", "split": "tune", "category": "short", "question": "星河公司的年假有多少天？",
             "answers": ["十五天"], "documents": ["handbook.txt"]},
            {"id": "b", "split": "check", "category": "short", "question": "北极熊的皮肤是什么颜色？",
             "answers": ["黑色"], "documents": ["bears.txt"]},
            {"id": "c", "split": "check", "category": "unanswerable", "question": "企鹅生活在哪个大洲？",
             "answers": [], "documents": []},
            {"id": "d", "split": "tune", "category": "statement", "question": "我在上海工作", "answers": [],
             "documents": []}]
    questions = tmp_path / "set.jsonl"
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    from chat.confidence import ConfidenceCalibrator

    run_before = ConfidenceCalibrator.run
    records = script.collect_set(questions)

    assert ConfidenceCalibrator.run is run_before
    by_question = {r["asked"]: r for r in records}
    assert set(by_question) == {"星河公司的年假有多少天？", "北极熊的皮肤是什么颜色？", "企鹅生活在哪个大洲？"}
    assert by_question["星河公司的年假有多少天？"]["half"] == "tune"
    assert by_question["北极熊的皮肤是什么颜色？"]["half"] == "check"
    assert by_question["企鹅生活在哪个大洲？"]["group"] == "unanswerable"
    assert by_question["企鹅生活在哪个大洲？"]["hit"] is False
    assert by_question["星河公司的年假有多少天？"]["hit"] is True  # abstention is off while collecting
    assert {r["set"] for r in records} == {"set"}


def test_an_old_cache_is_halved_by_position_within_each_group():
    records = [{"group": g} for g in ("answerable", "unanswerable", "answerable", "unanswerable", "answerable")]

    halves = [(r["set"], r["half"]) for r in script._with_halves(records)]

    assert halves == [("cmrc", "tune"), ("cmrc", "tune"), ("cmrc", "check"), ("cmrc", "check"), ("cmrc", "tune")]


def test_measure_counts_the_right_share_of_answerable_questions_per_band():
    def row(group: str, hit: bool, strength: float) -> dict:
        features = dict.fromkeys(set(script.ANSWERABLE_FEATURES) | set(script.RIGHT_FEATURES), strength)
        return {"group": group, "hit": hit, "features": features}

    rows = [row("answerable", True, 1.0), row("answerable", True, 1.0), row("answerable", False, 0.0),
            row("unanswerable", False, 0.0)]
    # Every signal at 1: both probabilities near 1 (high band); every signal at 0: each 0.12 (low band).
    w_ans = np.r_[np.full(len(script.ANSWERABLE_FEATURES), 4.0), -2.0]
    w_right = np.r_[np.full(len(script.RIGHT_FEATURES), 4.0), -2.0]

    measured = script.measure(rows, w_ans, w_right, medium_from=0.5, high_from=0.7)

    assert measured["right_per_band"]["high"] == {"n": 2, "right": 1.0}
    assert measured["right_per_band"]["low"] == {"n": 1, "right": 0.0}
    assert measured["right_per_band"]["medium"] == {"n": 0, "right": None}
    assert measured["auroc_hit"] == 1.0
    assert measured["flagged_below"]["0.50"] == {"unanswerable": 1.0, "answerable": 0.333}
