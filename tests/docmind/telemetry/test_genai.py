"""Model-call spans and usage as the OpenTelemetry GenAI conventions describe them, against a real HTTP server."""
from __future__ import annotations

import threading

import pytest
from opentelemetry.trace import SpanKind

from docmind.llm.base import LlmCancelled, LlmUnavailable
from docmind.llm.budget import call_budget
from docmind.llm.openai_model import OpenAIChatModel
from docmind.telemetry import metrics
from docmind.telemetry.genai import server_of
from docmind.telemetry.usage import TurnUsage, usage_scope
from tests.fakes.openai_server import http_error, text

MESSAGES = [{"role": "user", "content": "星河公司的年假有多少天？"}]


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=5, max_retries=0)


def _sample(name: str, labels: dict[str, str]) -> float:
    # From the counters themselves: the whole registry would also run the database-backed collectors.
    counters = {"docmind_llm_errors_total": metrics.LLM_ERRORS, "docmind_llm_cancelled_total": metrics.LLM_CANCELLED,
                "docmind_llm_tokens_total": metrics.LLM_TOKENS}
    samples = (s for family in counters[name].collect() for s in family.samples)
    return next((s.value for s in samples if s.name == name and s.labels == labels), 0.0)


def _call_span(spans, model: str):
    return next(s for s in spans.get_finished_spans() if s.name == f"chat {model}")


@pytest.mark.parametrize("streamed", [False, True])
def test_a_model_call_is_a_client_span_naming_the_server_and_the_response(scripted_openai, spans, streamed):
    scripted_openai.script([text("十五天 [1]", usage=(40, 5))])
    model = _model(scripted_openai)
    if streamed:
        "".join(model.stream(MESSAGES, model="qwen-plus"))
    else:
        model.complete(MESSAGES, model="qwen-plus")
    span = _call_span(spans, "qwen-plus")
    host, port = scripted_openai.base_url.split("//")[1].split("/")[0].split(":")
    assert span.kind is SpanKind.CLIENT
    assert span.attributes["server.address"] == host
    assert span.attributes["server.port"] == int(port)
    assert span.attributes["gen_ai.response.id"].startswith("chatcmpl-scripted-")
    assert span.attributes["gen_ai.usage.input_tokens"] == 40


@pytest.mark.parametrize(("url", "expected"), [
    ("https://dashscope.aliyuncs.com/compatible-mode/v1", ("dashscope.aliyuncs.com", 443)),
    ("http://10.0.0.5:8000/v1", ("10.0.0.5", 8000)),
    ("http://llm.internal/v1", ("llm.internal", 80)),
])
def test_the_server_address_and_port_come_from_the_base_url(url, expected):
    assert server_of(url) == expected


def test_a_failed_call_is_not_billed_with_estimated_tokens(scripted_openai, spans):
    scripted_openai.script(http_error(500))
    usage = TurnUsage()
    before = _sample("docmind_llm_tokens_total", {"model": "qwen-plus", "direction": "input"})
    with usage_scope(usage), pytest.raises(LlmUnavailable):
        _model(scripted_openai).complete(MESSAGES, model="qwen-plus")
    assert usage.models() == []
    assert _sample("docmind_llm_tokens_total", {"model": "qwen-plus", "direction": "input"}) == before
    span = _call_span(spans, "qwen-plus")
    assert "gen_ai.usage.input_tokens" not in span.attributes
    assert span.attributes["error.type"] == "LlmUnavailable"


def test_a_cancelled_call_counts_as_cancelled_not_as_a_model_error(scripted_openai, spans):
    cancel = threading.Event()
    cancel.set()
    errors = _sample("docmind_llm_errors_total", {"kind": "LlmCancelled"})
    cancelled = _sample("docmind_llm_cancelled_total", {"model": "qwen-plus"})
    with call_budget(seconds=5, cancel=cancel), pytest.raises(LlmCancelled):
        _model(scripted_openai).complete(MESSAGES, model="qwen-plus")
    assert _sample("docmind_llm_errors_total", {"kind": "LlmCancelled"}) == errors
    assert _sample("docmind_llm_cancelled_total", {"model": "qwen-plus"}) == cancelled + 1
    assert _call_span(spans, "qwen-plus").status.status_code.name != "ERROR"


def test_a_client_that_stops_reading_a_stream_is_a_cancellation(scripted_openai, spans):
    scripted_openai.script([text("年假一共有十五天，入职满一年后可以休。", chunk_chars=2)])
    cancelled = _sample("docmind_llm_cancelled_total", {"model": "qwen-plus"})
    usage = TurnUsage()
    with usage_scope(usage):
        stream = _model(scripted_openai).stream(MESSAGES, model="qwen-plus")
        next(stream)
        stream.close()
    assert _sample("docmind_llm_cancelled_total", {"model": "qwen-plus"}) == cancelled + 1
    assert usage.models() == []  # the API never reported usage for the abandoned stream
