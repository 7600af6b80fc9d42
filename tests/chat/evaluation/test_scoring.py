"""Scoring of evaluation answers: what counts as a hit, a false "not found" and a confident wrong answer."""
from __future__ import annotations

import json

from chat.evaluation.scoring import EvalQuestion, Outcome, load_questions, reliability, report, score

DOC = ("hr-leave-zh.docx",)


def test_it_counts_a_gold_alternative_regardless_of_spaces_and_digit_grouping():
    q = EvalQuestion(id="1", question="card limit?", category="short", answers=("20,000 CNY",), documents=DOC)
    scored = score(q, Outcome(answer="The limit is 20000 cny a month [1].", cited=DOC, band="high"))
    assert scored.hit and scored.cites_gold and not scored.wrong_unflagged


def test_it_calls_a_wrong_answer_without_a_low_label_wrong_and_unflagged():
    q = EvalQuestion(id="1", question="产假多少天？", category="short", answers=("158天",), documents=DOC)
    scored = score(q, Outcome(answer="带薪病假12天 [1]", cited=DOC, band="high"))
    assert not scored.hit and scored.wrong_unflagged


def test_it_counts_not_found_on_an_answerable_question_as_false_not_found():
    q = EvalQuestion(id="1", question="年假有几天？", category="short", answers=("5天",), documents=DOC)
    scored = score(q, Outcome(answer="知识库中没有", no_evidence=True, band="none"))
    assert scored.false_not_found and not scored.wrong_unflagged


def test_an_unanswerable_question_is_right_only_when_flagged():
    q = EvalQuestion(id="1", question="Who is the CEO?", category="unanswerable")
    assert score(q, Outcome(answer="not in the knowledge base", no_evidence=True, band="none")).hit
    assert score(q, Outcome(answer="The CEO is …", band="high")).wrong_unflagged


def test_a_statement_that_gets_citations_is_wrong():
    q = EvalQuestion(id="1", question="我在上海工作", category="statement")
    assert score(q, Outcome(answer="好的，已记住。")).hit
    assert score(q, Outcome(answer="休假办法第一章 [1]", cited=DOC, band="high")).wrong_unflagged


def test_a_question_asking_back_what_the_user_said_is_right_with_the_answer_and_no_citation():
    q = EvalQuestion(id="1", question="我在哪里工作？", category="recall", answers=("上海",), history=("我在上海工作",))
    assert not q.answerable
    assert score(q, Outcome(answer="我记得你说过：我在上海工作")).hit
    cited = score(q, Outcome(answer="上海办公室的工作时间… [1]", cited=DOC, band="high"))
    assert not cited.hit and cited.wrong_unflagged
    # Neither a knowledge question nor one the documents cannot answer: it is left out of both shares.
    stats = report([score(q, Outcome(answer="我记得你说过：我在上海工作"))])["overall"]
    assert stats["answer_hit"] == 1.0 and stats["unanswerable_flagged"] is None and stats["flagged"] is None


def test_it_reports_per_split_category_and_band(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"id": "a", "question": "年假？", "category": "short", "split": "check", "answers": ["5天"],
             "documents": list(DOC)},
            {"id": "b", "question": "CEO?", "category": "unanswerable", "split": "tune", "answers": [],
             "documents": []}]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    a, b = load_questions([path])
    scored = [score(a, Outcome(answer="5天 [1]", cited=DOC, band="high")), score(b, Outcome(answer="…", band="high"))]
    result = report(scored)
    assert result["splits"]["check"]["categories"]["short"]["answer_hit"] == 1.0
    assert result["splits"]["tune"]["overall"]["wrong_unflagged"] == 1.0
    assert reliability(scored) == {"high": {"n": 2, "right": 0.5}}
