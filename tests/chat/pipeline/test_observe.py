"""A chat turn as one trace (span tree, GenAI attributes) and its token usage stored per message."""
from __future__ import annotations

import threading
from decimal import Decimal

import pytest

from chat.models import Message, MessageUsage
from chat.pipeline import ChatPipeline
from config_admin.models import SysAiConfig
from docmind.backends import reset_backends
from tests.chat.chat_helpers import QUESTION, by_type, ingest_tiny_kb
from tests.fakes.openai_server import text, tool_calls

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def kb():
    return ingest_tiny_kb()


@pytest.fixture(autouse=True)
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def remote(settings, scripted_openai):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    settings.LLM_TIMEOUT_SECONDS = 5
    reset_backends()
    scripted_openai.respond_with(lambda body: "{}")  # the classifier: no usable JSON → rules only
    yield scripted_openai
    reset_backends()


def ask(user, message):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event()))


def tree(exporter):
    finished = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}
    children: dict[str, list[str]] = {}
    for s in finished:
        parent = by_id.get(s.parent.span_id).name if s.parent is not None and s.parent.span_id in by_id else None
        children.setdefault(parent or "<root>", []).append(s.name)
    return finished, children


def test_a_one_shot_turn_is_one_trace_with_a_span_per_stage(member, kb, spans):
    events = ask(member, QUESTION)
    finished, children = tree(spans)

    assert children["<root>"] == ["chat.turn"]
    assert {"chat.understanding", "chat.routing", "chat.cache.lookup", "chat.retrieval", "chat.prompt",
            "chat.generation", "chat.citations", "chat.cache.store"} <= set(children["chat.turn"])
    assert children["chat.retrieval"] == ["retrieval.one_shot"]
    assert {"retrieval.embed", "retrieval.vector", "retrieval.bm25", "retrieval.rrf", "retrieval.rerank",
            "retrieval.mmr", "retrieval.parents", "retrieval.compress", "retrieval.grade"} <= set(
        children["retrieval.one_shot"])
    trace_ids = {s.context.trace_id for s in finished}
    assert len(trace_ids) == 1
    trace_id = format(trace_ids.pop(), "032x")
    done = by_type(events, "done").data
    assert done["trace_id"] == trace_id
    assert Message.objects.get(pk=done["message_id"]).retrieval_log["trace_id"] == trace_id


def test_an_agentic_turn_nests_rounds_tool_calls_and_model_calls(member, kb, remote, spans):
    remote.script([tool_calls(("searchDocs", {"query": "星河公司 年假"}), ("keywordSearch", {"query": "报销"}),
                              usage=(120, 15)),
                   text("", usage=(180, 2)),
                   text("年假十五天 [1]，报销期限三十天 [2]。", usage=(400, 30))], model="qwen-plus")
    events = ask(member, "对比星河公司的年假天数和报销期限")
    assert by_type(events, "routing").data["mode"] == "AGENTIC"
    finished, children = tree(spans)

    assert children["chat.retrieval"] == ["agentic.loop"]
    assert children["agentic.loop"].count("agentic.round") == 2
    rounds = [s for s in finished if s.name == "agentic.round"]
    first = next(s for s in rounds if s.attributes["docmind.round"] == 1)
    first_children = [s.name for s in finished if s.parent is not None and s.parent.span_id == first.context.span_id]
    assert sorted(first_children) == ["agentic.tool", "agentic.tool", "chat qwen-plus"]
    tools = sorted(s.attributes["docmind.tool"] for s in finished if s.name == "agentic.tool")
    assert tools == ["keywordSearch", "searchDocs"]
    generation = next(s for s in finished if s.name == "chat.generation")
    answer_call = next(s for s in finished if s.parent is not None and s.parent.span_id == generation.context.span_id)
    assert answer_call.name == "chat qwen-plus"
    assert answer_call.attributes["gen_ai.operation.name"] == "chat"
    assert answer_call.attributes["gen_ai.request.model"] == "qwen-plus"
    assert answer_call.attributes["gen_ai.usage.input_tokens"] == 400
    assert answer_call.attributes["gen_ai.usage.output_tokens"] == 30
    assert answer_call.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert len({s.context.trace_id for s in finished}) == 1


def test_usage_comes_from_the_api_usage_fields_and_is_priced_per_model(member, kb, remote):
    row = SysAiConfig.objects.get(key="llm.price_per_1k_tokens")
    row.value = '{"qwen-plus": {"input": 0.002, "output": 0.006}}'
    row.save()
    remote.script([text("星河公司的年假为每年十五天 [1]。", usage=(1000, 50))], model="qwen-plus")
    done = by_type(ask(member, QUESTION), "done").data

    row = MessageUsage.objects.get(message_id=done["message_id"], model="qwen-plus")
    assert (row.tier, row.input_tokens, row.output_tokens, row.estimated) == ("main", 1000, 50, False)
    assert row.cost == Decimal("0.00230000") and row.user == member
    # The classifier's reply reported zeros: its tokens are estimated, and it has no price.
    small = MessageUsage.objects.get(message_id=done["message_id"], model="qwen-turbo")
    assert small.tier == "small" and small.estimated and small.input_tokens > 0 and small.cost is None
    log = Message.objects.get(pk=done["message_id"]).retrieval_log["usage"]
    assert log["input_tokens"] == 1000 + small.input_tokens
    assert done["usage"]["cost"] == pytest.approx(0.0023)


def test_an_offline_turn_records_no_model_usage(member, kb):
    done = by_type(ask(member, QUESTION), "done").data
    assert not MessageUsage.objects.filter(message_id=done["message_id"]).exists()
    assert done["usage"] == {"input_tokens": 0, "output_tokens": 0, "cost": None}


def test_a_turn_that_ends_in_an_error_marks_its_trace_and_counts_the_model_error(member, kb, remote, spans):
    from prometheus_client import REGISTRY

    from tests.fakes.openai_server import http_error

    before = REGISTRY.get_sample_value("docmind_llm_errors_total", {"kind": "LlmUnavailable"}) or 0
    remote.script(http_error(500, times=3), model="qwen-plus")
    events = ask(member, QUESTION)
    assert events[-1].type == "error"
    root = next(s for s in spans.get_finished_spans() if s.name == "chat.turn")
    assert root.status.status_code.name == "ERROR"
    failed = next(s for s in spans.get_finished_spans() if s.name == "chat qwen-plus")
    assert failed.attributes["error.type"] == "LlmUnavailable"
    assert REGISTRY.get_sample_value("docmind_llm_errors_total", {"kind": "LlmUnavailable"}) == before + 1


def test_an_error_event_carries_the_turns_trace_id(member, kb, remote, spans):
    from tests.fakes.openai_server import http_error

    remote.script(http_error(500, times=3), model="qwen-plus")
    error = ask(member, QUESTION)[-1]
    assert error.type == "error"
    root = next(s for s in spans.get_finished_spans() if s.name == "chat.turn")
    assert error.data["trace_id"] == format(root.context.trace_id, "032x")
    assert Message.objects.get(pk=error.data["message_id"]).retrieval_log["trace_id"] == error.data["trace_id"]


def test_a_failed_answer_call_is_not_billed(member, kb, remote):
    from tests.fakes.openai_server import http_error

    remote.script(http_error(500, times=3), model="qwen-plus")
    error = ask(member, QUESTION)[-1]
    assert error.type == "error"
    assert not MessageUsage.objects.filter(message_id=error.data["message_id"], model="qwen-plus").exists()
