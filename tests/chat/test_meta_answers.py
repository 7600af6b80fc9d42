"""MetaAnswerer: answers for the non-knowledge scopes, in the question's language."""
from __future__ import annotations

import pytest

from chat.meta_answers import MetaAnswerer
from chat.types import QueryClassification, Scope


def _run(scope: Scope, message: str, **kw) -> str:
    return MetaAnswerer(**kw.pop("init", {})).run(
        classification=QueryClassification(rewritten=message, scope=scope), message=message, **kw)


@pytest.mark.parametrize("scope,message,expect", [
    (Scope.GREETING, "你好", "你好"), (Scope.GREETING, "hello", "Hello"), (Scope.GREETING, "谢谢", "不客气"),
    (Scope.GREETING, "thanks!", "welcome"), (Scope.IDENTITY, "你是谁", "DocMind"), (Scope.IDENTITY, "help", "DocMind"),
    (Scope.OUT_OF_SCOPE, "讲个笑话", "范围"), (Scope.OUT_OF_SCOPE, "tell me a joke", "outside"),
])
def test_it_answers_in_the_question_language(scope, message, expect):
    assert expect in _run(scope, message)


def test_kb_meta_lists_documents_by_domain():
    docs = [{"id": 1, "title": "员工手册", "domain": "hr"}, {"id": 2, "title": "报销制度", "domain": "finance"},
            {"id": 3, "title": "考勤规定", "domain": "hr"}]
    answer = _run(Scope.KB_META, "有哪些文档", documents=docs)
    assert "3 篇" in answer and "**hr**" in answer and "- 员工手册" in answer and "- 报销制度" in answer


def test_kb_meta_truncates_long_lists_and_handles_an_empty_kb():
    docs = [{"title": f"Doc {i}", "domain": ""} for i in range(5)]
    answer = _run(Scope.KB_META, "What documents do you have?", documents=docs, init={"max_titles": 2})
    assert "5 ready documents" in answer and "3 more" in answer and "Doc 4" not in answer
    assert "no ready documents" in _run(Scope.KB_META, "What documents do you have?")


def test_memory_answers_list_the_memories_or_say_none():
    answer = _run(Scope.MEMORY, "你记得我什么", memories=["喜欢简洁回答", {"content": "在上海工作"}])
    assert "- 喜欢简洁回答" in answer and "- 在上海工作" in answer
    assert "don't remember" in _run(Scope.MEMORY, "What do you remember about me?")


def test_knowledge_scope_is_not_a_meta_answer():
    with pytest.raises(ValueError):
        _run(Scope.KNOWLEDGE, "年假几天")
