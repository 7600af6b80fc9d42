"""AgenticSearchOrchestrator without a planning model: the offline planner drives the same loop."""
from __future__ import annotations


def test_offline_loop_simple_question_one_call(make_loop):
    events = []
    result = make_loop(None).run(question="北京有多少人口？", emit=events.append)
    assert result.planner == "offline" and len(result.tool_calls) == 1 and result.rounds == 1
    assert [e.type for e in events] == ["agentic"] and result.evidence.chunks


def test_offline_loop_comparison_searches_each_focus(make_loop):
    result = make_loop(None).run(question="北京和上海的人口分别是多少？")
    assert len(result.tool_calls) == 2
    assert {1, 2} <= {c.document_id for c in result.evidence.chunks}


def test_offline_loop_hops_to_the_entity_the_question_depends_on(make_loop, docs):
    result = make_loop(None).run(question="《三体》的作者出生在哪里？")
    assert [q for _, q in docs.queries] == ["《三体》的作者出生在哪里？", "刘慈欣 出生在哪里"]
    assert result.rounds == 2 and 4 in {c.document_id for c in result.evidence.chunks}
