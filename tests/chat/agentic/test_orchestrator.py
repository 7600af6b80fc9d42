"""AgenticSearchOrchestrator against the scripted OpenAI-compatible server (real OpenAIChatModel)."""
from __future__ import annotations

import re
import threading
import time

import pytest

from chat.agentic.orchestrator import ToolFailed
from chat.agentic.types import AgenticCancelled, AgenticEmpty
from docmind.sandbox import PythonSandbox
from tests.chat.agentic.conftest import FakeWeb, MemoryDocSearch, RecordingFinisher
from tests.chat.chat_helpers import assert_events_follow_the_contract
from tests.fakes.openai_server import tool_calls

KNOWLEDGE_MAP = "available_knowledge_domains:\n- domain_id: general\n  description: 城市与文学\n"


def _tool_names(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def _tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_a_simple_question_takes_one_search_then_stops(scripted_openai, model, make_loop, docs):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 人口"})), "检索完成"])
    events = []
    result = make_loop(model).run(question="北京有多少人口？", emit=events.append)
    assert len(scripted_openai.requests) == 2 and docs.queries == [("hybrid", "北京 人口")]
    assert result.rounds == 1 and result.stop_reason == "planner stopped"
    assert [e.type for e in events] == ["agentic"]
    assert events[0].data["tool_calls"][0]["arguments"] == {"query": "北京 人口"}
    assert any(c.document_id == 1 for c in result.evidence.chunks)
    assert result.tool_calls[0]["name"] == "searchDocs" and result.tool_calls[0]["result_count"] >= 1


def test_a_comparison_searches_each_focus(scripted_openai, model, make_loop, docs):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 人口"}), ("searchDocs", {"query": "上海 人口"})),
                            "检索完成"])
    result = make_loop(model).run(question="北京和上海的人口分别是多少？")
    assert len(docs.queries) >= 2
    assert {1, 2} <= {c.document_id for c in result.evidence.chunks}


def test_a_model_that_never_stops_gets_exactly_max_iterations_rounds(scripted_openai, model, make_loop):
    scripted_openai.respond_with(lambda body: tool_calls(("searchDocs", {"query": f"北京 {len(body['messages'])}"})))
    result = make_loop(model, max_iterations=3).run(question="北京？")
    assert len(scripted_openai.requests) == 3
    assert result.rounds == 3 and result.stop_reason == "max_iterations"


def test_store_memory_and_kb_meta_are_never_offered(scripted_openai, model, make_loop):
    scripted_openai.script(["检索完成"] * 2)
    with pytest.raises(AgenticEmpty):
        make_loop(model).run(question="q1")
    with pytest.raises(AgenticEmpty):
        make_loop(model, web=FakeWeb(), sandbox=PythonSandbox(timeout_seconds=2, memory_mb=128)).run(question="q2")
    off, on = (_tool_names(r) for r in scripted_openai.requests)
    assert off == {"searchDocs", "keywordSearch", "recall_memory"}
    assert on == {"searchDocs", "keywordSearch", "webSearch", "recall_memory", "executeCode"}


def test_execute_code_is_described_only_when_the_sandbox_is_on(scripted_openai, model, make_loop):
    scripted_openai.script(["检索完成"] * 2)
    for sandbox in (None, PythonSandbox(timeout_seconds=2, memory_mb=128)):
        with pytest.raises(AgenticEmpty):
            make_loop(model, sandbox=sandbox).run(question="q")
    off, on = (r["messages"][0]["content"] for r in scripted_openai.requests)
    assert "executeCode" not in off and "executeCode" in on


def test_a_failing_retrieval_tool_raises_for_the_one_shot_fallback(scripted_openai, model, make_loop):
    loop = make_loop(model, docs=MemoryDocSearch(fail=True))
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京"}))])
    with pytest.raises(ToolFailed):
        loop.run(question="北京？")
    assert loop.tracker.session_count() == 0  # the turn's session is cleared on error too


def test_a_document_is_not_returned_twice_in_one_turn_but_is_in_the_next(scripted_openai, model, make_loop):
    loop = make_loop(model)
    search = tool_calls(("searchDocs", {"query": "北京"}))
    scripted_openai.script([search, search, "检索完成", search, "检索完成"])
    first = loop.run(question="北京？")
    round1, round2 = first.tool_calls[0], first.tool_calls[1]
    assert 1 in round1["document_ids"] and 1 not in round2["document_ids"] and round2["filtered_already_retrieved"] >= 1
    assert "没有新的结果" in _tool_messages(scripted_openai.requests[2])[-1]
    second = loop.run(question="北京？")
    assert 1 in second.tool_calls[0]["document_ids"]


def test_the_knowledge_map_is_in_the_planner_prompt_only(scripted_openai, model, make_loop):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京"})), "检索完成"])
    make_loop(model, knowledge_map=KNOWLEDGE_MAP).run(question="北京？")
    last = scripted_openai.requests[-1]
    assert "available_knowledge_domains" in last["messages"][0]["content"]
    assert all("available_knowledge_domains" not in m for m in _tool_messages(last))


@pytest.mark.parametrize("call,expected", [
    (("searchDocs", '{"query": "北京'), "不是有效的 JSON|not valid JSON"),
    (("store_memory", {"content": "x"}), "没有名为"),
    (("deleteEverything", {}), "没有名为"),
    (("searchDocs", {"query": 42}), "must be a string"),
    (("searchDocs", {"q": "北京"}), "missing required argument"),
])
def test_bad_tool_calls_become_error_results_and_the_loop_goes_on(scripted_openai, model, make_loop, call, expected):
    scripted_openai.script([tool_calls(call), tool_calls(("searchDocs", {"query": "北京"})), "检索完成"])
    result = make_loop(model).run(question="北京？")
    assert re.search(expected, _tool_messages(scripted_openai.requests[1])[0])
    assert result.tool_calls[0]["error"] and result.rounds == 2 and result.evidence.chunks
    echoed = scripted_openai.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert echoed.startswith("{") and echoed.endswith("}")  # never echo malformed JSON back


def test_an_over_budget_result_is_truncated(scripted_openai, model, make_loop):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 上海 三体 刘慈欣"})), "检索完成"])
    make_loop(model, result_max_tokens=60).run(question="q")
    assert "截断" in _tool_messages(scripted_openai.requests[1])[0]


def test_web_compensation_only_when_the_loop_never_used_web(scripted_openai, model, make_loop):
    web = FakeWeb()
    scripted_openai.script([tool_calls(("webSearch", {"query": "北京 新闻"})), "检索完成",
                            tool_calls(("searchDocs", {"query": "北京"})), "检索完成"])
    finisher = RecordingFinisher(web=web)
    used = make_loop(model, web=web, finisher=finisher).run(question="北京新闻？")
    assert used.used_web and finisher.calls[-1]["allow_web"] is False and used.web_chunks
    unused = make_loop(model, web=web, finisher=finisher).run(question="北京？")
    assert not unused.used_web and finisher.calls[-1]["allow_web"] is True


def test_execute_code_runs_in_the_sandbox_and_becomes_a_computation(scripted_openai, model, make_loop):
    sandbox = PythonSandbox(timeout_seconds=3, memory_mb=256)
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 上海 人口"}),
                                       ("executeCode", {"code": "print(2487 - 2189)"})),
                            tool_calls(("searchDocs", {"query": "上海"})), "检索完成"])
    events = []
    result = make_loop(model, sandbox=sandbox).run(question="上海比北京多多少人？", emit=events.append)
    assert assert_events_follow_the_contract(events, whole_turn=False) == ["agentic", "agentic", "code_exec"]
    assert events[-1].data["stdout"].strip() == "298" and "298" in result.computations[0]
    assert "298" in _tool_messages(scripted_openai.requests[1])[1]


def test_nothing_found_raises_for_the_fallback(scripted_openai, model, make_loop):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "火星殖民"})), "检索完成"])
    with pytest.raises(AgenticEmpty):
        make_loop(model).run(question="火星殖民？")


def test_a_cancelled_turn_stops_between_rounds(scripted_openai, model, make_loop):
    cancel = threading.Event()
    cancel.set()
    loop = make_loop(model)
    with pytest.raises(AgenticCancelled):
        loop.run(question="北京？", cancel=cancel)
    assert scripted_openai.requests == [] and loop.tracker.session_count() == 0


class _BlockingDocs(MemoryDocSearch):
    """A search that hangs until released: a slow vector store or reranker in the middle of a round."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def hybrid(self, query, *, k, domains=None):
        self.entered.set()
        self.release.wait(10)
        return super().hybrid(query, k=k, domains=domains)


def test_stop_while_a_tool_runs_ends_the_loop_without_waiting_for_the_tool(scripted_openai, model, make_loop):
    scripted_openai.script([tool_calls(("searchDocs", {"query": "北京 人口"})), "检索完成"])
    docs = _BlockingDocs()
    loop = make_loop(model, docs=docs)
    cancel = threading.Event()
    outcome: dict = {}

    def run() -> None:
        try:
            loop.run(question="北京有多少人口？", cancel=cancel)
        except AgenticCancelled as exc:
            outcome["stopped"] = (exc, time.monotonic())

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert docs.entered.wait(10)
        pressed = time.monotonic()
        cancel.set()
        thread.join(5)
        assert "stopped" in outcome and "waiting for a tool" in str(outcome["stopped"][0])
        assert outcome["stopped"][1] - pressed < 1.0
        assert len(scripted_openai.requests) == 1 and loop.tracker.session_count() == 0
    finally:
        docs.release.set()
        thread.join(10)
