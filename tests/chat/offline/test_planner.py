"""OfflinePlanner: deterministic plans — one search, one per focus, one follow-up hop, then stop."""
from __future__ import annotations

import pytest

from chat.offline.planner import OfflinePlanner, follow_up_query, split_foci


@pytest.mark.parametrize("question,foci", [
    ("北京有多少人口？", ["北京有多少人口？"]),
    ("北京和上海的人口分别是多少？", ["北京的人口是多少", "上海的人口是多少"]),
    ("对比Python与Java的性能", ["Python的性能", "Java的性能"]),
    ("北京是哪国首都？另外，上海的人口是多少？", ["北京是哪国首都", "上海的人口是多少"]),
    ("compare Rust and Go", ["Rust", "Go"]),
])
def test_it_splits_a_question_into_foci(question, foci):
    assert split_foci(question) == foci


def test_the_follow_up_uses_the_entity_the_first_result_names():
    first = "searchDocs 找到 1 条：\n[1] 《三体》 | domain: general | chunk: 30\n三体的作者是刘慈欣，2006年起连载。"
    assert follow_up_query("《三体》的作者出生在哪里？", [first]) == "刘慈欣 出生在哪里"
    assert follow_up_query("北京有多少人口？", [first]) is None


def test_it_stops_when_search_docs_is_not_offered():
    reply = OfflinePlanner().complete([{"role": "user", "content": "q"}], tools=[])
    assert not reply.tool_calls
