"""The event protocol: encoders and the allowed order."""
from __future__ import annotations

import json

import pytest

from chat.events import ChatEvent, error_event, order_problem

FULL = ["understanding", "routing", "retrieval", "rerank", "grader", "start", "token", "token", "done"]


def test_sse_encoding_is_one_event_block():
    raw = ChatEvent("token", {"text": "你好\n"}).to_sse().decode()
    assert raw.startswith("event: token\ndata: ")
    assert raw.endswith("\n\n")
    assert raw.count("\n\n") == 1  # a newline inside the data stays escaped in the JSON
    assert json.loads(raw.split("data: ", 1)[1]) == {"text": "你好\n"}


def test_ws_encoding_has_type_and_data():
    assert ChatEvent("done", {"answer": "x"}).to_ws() == {"type": "done", "data": {"answer": "x"}}


def test_it_rejects_unknown_event_types():
    with pytest.raises(ValueError):
        ChatEvent("reflection_start", {})


@pytest.mark.parametrize("types", [
    FULL,
    ["understanding", "routing", "agentic", "agentic", "code_exec", "retrieval", "rerank", "grader", "start", "done"],
    ["understanding", "routing", "start", "token", "done"],  # non-knowledge scope: no retrieval events
    ["error"],
    ["understanding", "routing", "retrieval", "rerank", "grader", "start", "token", "error"],
])
def test_valid_orders(types):
    assert order_problem(types) is None


@pytest.mark.parametrize("types", [
    [],
    ["routing", "understanding", "start", "done"],
    ["understanding", "routing", "start", "token"],
    ["understanding", "routing", "retrieval", "start", "done"],
    ["understanding", "routing", "start", "done", "error"],
    ["understanding", "start", "done"],
    ["understanding", "routing", "start", "start", "done"],
])
def test_invalid_orders(types):
    assert order_problem(types) is not None


def test_error_event_carries_code_and_message():
    event = error_event("llm_timeout", "slow", conversation_id=3)
    assert event.data == {"code": "llm_timeout", "message": "slow", "conversation_id": 3}
