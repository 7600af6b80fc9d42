"""A tiny run of bench/fit_confidence.py: the script patches the calibrator's methods, so a changed signature
there must fail here rather than in the next fitting session."""
from __future__ import annotations

from argparse import Namespace

import numpy as np
import pytest

from bench import fit_confidence as script
from tests.chat.chat_helpers import BEARS_TITLE, HANDBOOK_TITLE, ingest_tiny_kb


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_collects_replays_and_fits_a_tiny_set(seeded, monkeypatch):
    ingest_tiny_kb(empty_indexes_first=True)
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
