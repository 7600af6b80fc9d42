"""Retrieval metrics over SQuAD-format files: loading, recall@k, MRR, answer-in-evidence, percentiles."""
import json

import pytest

from kb.retrieval.evaluation import Outcome, Question, load_squad, percentile, score


def test_it_loads_one_paragraph_per_context_and_ties_each_question_to_its_paragraph(tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"data": [
        {"title": "A", "paragraphs": [{"context": "甲", "qas": [{"question": "q1", "answers": [{"text": "甲"}]}]},
                                      {"context": "乙", "qas": [{"question": "q2", "answers": [{"text": ""}]}]}]},
        {"paragraphs": [{"context": "丙", "qas": []}]},
    ]}), encoding="utf-8")
    paragraphs, questions = load_squad(path)
    assert [(p.title, p.text) for p in paragraphs] == [("A", "甲"), ("A", "乙"), ("untitled", "丙")]
    assert [(q.text, q.paragraph, q.answers) for q in questions] == [("q1", 0, ("甲",)), ("q2", 1, ())]


def test_scores_count_distinct_documents_and_the_answer_in_the_first_five_evidence_texts():
    questions = [Question("q1", 0, ("八千",)), Question("q2", 1, ("长江",)), Question("q3", 2, ("无",))]
    outcomes = [
        Outcome(ranked_docs=[10, 10, 11], evidence=["高八千米"], latency_ms=10.0),  # gold first
        Outcome(ranked_docs=[12, 12, 13, 14, 15, 16, 11], evidence=["x"] * 5 + ["长江"], latency_ms=20.0),
        Outcome(ranked_docs=[], evidence=[], latency_ms=30.0),  # nothing found
    ]
    metrics = score("pipeline", questions, lambda q: [10, 11, 12][q.paragraph], outcomes)
    # q2's gold (11) is the 6th distinct document: outside recall@5, reciprocal rank 1/6; its answer is 6th.
    assert metrics.recall_at_1 == pytest.approx(1 / 3) and metrics.recall_at_5 == pytest.approx(1 / 3)
    assert metrics.mrr == pytest.approx((1 + 1 / 6) / 3)
    assert metrics.answer_in_evidence_at_5 == pytest.approx(1 / 3)
    assert (metrics.p50_ms, metrics.p95_ms, metrics.questions) == (20.0, 30.0, 3)
    assert "recall@5 0.3333" in metrics.row()


def test_percentiles_of_nothing_are_zero_and_of_one_value_that_value():
    assert percentile([], 50) == 0.0 and percentile([7.0], 95) == 7.0


def test_scores_refuse_outcomes_that_do_not_match_the_questions():
    with pytest.raises(ValueError):
        score("x", [Question("q", 0, ())], lambda q: 0, [])
