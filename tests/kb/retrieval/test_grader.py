"""RetrievalGrader: the grade matrix, both overrides, modes, web compensation."""
from __future__ import annotations

import pytest

from kb.retrieval.grader import RetrievalGrader
from kb.retrieval.types import Grade
from tests.kb.retrieval.fakes import chunk, web_chunk

QUERY = "珠穆朗玛峰的海拔是多少"
FULL = "珠穆朗玛峰的海拔为8848米，是世界最高峰。"
ENTITY_ONLY = "珠穆朗玛峰位于中国与尼泊尔边境。"
OFF_TOPIC = "今天的午饭是米饭和青菜，口味很清淡。"
NO_ENTITY_BUT_TOPIC = "山峰的海拔通常用米来表示。"


def _scored(text: str, rerank: float | None):
    c = chunk("1", text, 0.5)
    return c.with_score("rerank", rerank) if rerank is not None else c


def _grade(text: str, rerank: float | None, **kwargs):
    return RetrievalGrader(**kwargs).run(query=QUERY, chunks=[_scored(text, rerank)])


@pytest.mark.parametrize(("text", "rerank", "grade"), [
    (FULL, 0.9, Grade.HIGH),                      # both strong
    (OFF_TOPIC, 0.1, Grade.LOW),                  # both weak
    (FULL, 0.1, Grade.AMBIGUOUS),                 # disagree: rerank low, coverage high
    (NO_ENTITY_BUT_TOPIC, 0.9, Grade.AMBIGUOUS),  # rerank high but the entity is missing
    (ENTITY_ONLY, 0.1, Grade.AMBIGUOUS),          # rerank low but a rare entity is hit
    (FULL, 0.45, Grade.HIGH),                     # grey zone, coverage decides
    (OFF_TOPIC, 0.45, Grade.LOW),                 # grey zone, coverage decides
])
def test_grade_matrix(text, rerank, grade):
    assert _grade(text, rerank).grade == grade


def test_no_evidence_is_low_with_weak_entities():
    result = RetrievalGrader().run(query=QUERY, chunks=[])
    assert result.grade == Grade.LOW and result.kb_entity_weak and result.web_compensation_needed


def test_it_reports_coverage_and_entity_weakness():
    strong = _grade(FULL, 0.9)
    weak = _grade(NO_ENTITY_BUT_TOPIC, 0.9)
    assert strong.lex_coverage == pytest.approx(1.0) and not strong.kb_entity_weak
    assert weak.kb_entity_weak and 0 < weak.lex_coverage < 0.5


def test_only_the_top_three_chunks_count():
    chunks = [chunk(str(i), OFF_TOPIC, 0.5) for i in range(3)] + [chunk("4", FULL, 0.1)]
    chunks[0] = chunks[0].with_score("rerank", 0.1)
    assert RetrievalGrader().run(query=QUERY, chunks=chunks).grade == Grade.LOW


def test_entity_found_only_on_the_web_leaves_the_kb_weak():
    chunks = [web_chunk("w", FULL).with_score("rerank", 0.9), chunk("k", NO_ENTITY_BUT_TOPIC, 0.5)]
    result = RetrievalGrader().run(query=QUERY, chunks=chunks)
    assert result.kb_entity_weak and result.grade == Grade.AMBIGUOUS


def test_without_a_rerank_score_the_grey_zone_rule_applies():
    assert _grade(FULL, None).grade == Grade.HIGH


def test_disabled_mode_leaves_the_grey_zone_ambiguous_but_keeps_the_overrides():
    assert _grade(FULL, 0.45, mode="disabled").grade == Grade.AMBIGUOUS
    assert _grade(NO_ENTITY_BUT_TOPIC, 0.9, mode="disabled").grade == Grade.AMBIGUOUS
    assert _grade(FULL, 0.9, mode="disabled").grade == Grade.HIGH


@pytest.mark.parametrize(("again", "grade"), [(0.9, Grade.HIGH), (0.1, Grade.AMBIGUOUS)])
def test_cross_encoder_mode_rescores_the_grey_zone(again, grade):
    calls = []

    def rescorer(query, chunks):
        calls.append(len(chunks))
        return [again]

    assert _grade(FULL, 0.45, mode="cross_encoder", rescorer=rescorer).grade == grade and calls == [1]


def test_cross_encoder_failure_falls_back_to_the_heuristic():
    def broken(query, chunks):
        raise RuntimeError("down")

    assert _grade(FULL, 0.45, mode="cross_encoder", rescorer=broken).grade == Grade.HIGH


@pytest.mark.parametrize(("text", "rerank", "on_low", "on_ambiguous", "needed"), [
    (OFF_TOPIC, 0.1, True, True, True),              # LOW
    (OFF_TOPIC, 0.1, False, True, False),            # LOW, but web on LOW switched off
    (NO_ENTITY_BUT_TOPIC, 0.9, True, True, True),    # AMBIGUOUS with weak KB entities
    (NO_ENTITY_BUT_TOPIC, 0.9, True, False, False),  # … switched off
    (FULL, 0.1, True, True, False),                  # AMBIGUOUS but the KB has the entity
    (FULL, 0.9, True, True, False),                  # HIGH
])
def test_web_compensation_needed(text, rerank, on_low, on_ambiguous, needed):
    result = _grade(text, rerank, web_on_low=on_low, web_on_ambiguous=on_ambiguous)
    assert result.web_compensation_needed is needed


@pytest.mark.parametrize("kwargs", [{"mode": "magic"}, {"high_threshold": 0.2, "low_threshold": 0.5}])
def test_it_rejects_bad_configuration(kwargs):
    with pytest.raises(ValueError):
        RetrievalGrader(**kwargs)
