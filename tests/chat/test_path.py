"""PathRouter: the routing table of routePath."""
from __future__ import annotations

import pytest
from django.utils import translation

from chat.path import PathRouter
from chat.types import Complexity, Intent, Mode, QueryClassification


def _cls(text="年假有几天", complexity=Complexity.SIMPLE, ambiguous=False, intent=Intent.FACTUAL):
    return QueryClassification(rewritten=text, complexity=complexity, is_ambiguous=ambiguous, intent=intent)


@pytest.mark.parametrize("cls,doc,wants,mode", [
    (_cls("总结一下这篇文档"), 7, None, Mode.SELECTED_DOC),
    (_cls("Summarize this document"), 7, None, Mode.SELECTED_DOC),
    (_cls("What does this document say?"), 7, None, Mode.SELECTED_DOC),
    (_cls("讲讲", intent=Intent.SUMMARY), 7, None, Mode.SELECTED_DOC),
    (_cls("年假有几天"), 7, True, Mode.SELECTED_DOC),
    (_cls("总结一下这篇文档"), 7, False, Mode.RULE_PLANNER),
    (_cls("总结一下这篇文档"), None, None, Mode.RULE_PLANNER),
    (_cls("年假有几天"), 7, None, Mode.RULE_PLANNER),
    (_cls("年假有几天"), None, None, Mode.RULE_PLANNER),
    (_cls(complexity=Complexity.MEDIUM), None, None, Mode.AGENTIC),
    (_cls(complexity=Complexity.COMPLEX), None, None, Mode.AGENTIC),
    (_cls(ambiguous=True), None, None, Mode.AGENTIC),
    (_cls("A 和 B 的区别", complexity=Complexity.MEDIUM), 7, None, Mode.AGENTIC),
])
def test_routing_table(cls, doc, wants, mode):
    decision = PathRouter().run(classification=cls, selected_document_id=doc, wants_direct_read=wants)
    assert decision.mode is mode
    assert decision.reason and decision.fallback_note == ""


def test_the_reason_shown_in_the_trace_is_in_the_users_language():
    simple = _cls(complexity=Complexity.SIMPLE)
    with translation.override("zh-hans"):
        reason = PathRouter().run(classification=simple, selected_document_id=None).reason
    assert reason == "简单且无歧义的问题：一次性检索"
    with translation.override("en"):
        assert "one-shot" in PathRouter().run(classification=simple, selected_document_id=None).reason


def test_disabled_agentic_falls_back_to_one_shot_and_says_so():
    with translation.override("en"):
        decision = PathRouter(agentic_enabled=False).run(classification=_cls(complexity=Complexity.COMPLEX),
                                                         selected_document_id=None)
    assert decision.mode is Mode.RULE_PLANNER
    assert "one-shot" in decision.fallback_note
    assert decision.as_dict()["fallback_note"] == decision.fallback_note
