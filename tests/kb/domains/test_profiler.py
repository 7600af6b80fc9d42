"""DocumentProfiler and DomainAggregator: offline derivation, LLM JSON, fallback on a bad reply."""
from __future__ import annotations

import json

import pytest

from docmind.llm.openai_model import OpenAIChatModel
from kb.domains.aggregator import DocSummary, DomainAggregator
from kb.domains.profiler import DocumentProfiler
from tests.fakes.openai_server import http_error

TEXT = """# 支付失败排查
用户支付超时、扣款无回调时，先检查网关日志。
## 退款处理
退款未到账时核对对账单与退款流水。
"""


def test_offline_profile_uses_headings_and_salient_terms():
    profile = DocumentProfiler(chat_model=None, model="m").run(title="支付手册", text=TEXT)
    assert profile.source == "offline"
    assert profile.covers[:2] == ("支付失败排查", "退款处理")
    assert len(profile.covers) > 2 and "支付手册" in profile.when_to_retrieve


def test_llm_profile_is_parsed_from_json(scripted_openai):
    scripted_openai.script([json.dumps({"covers": ["支付超时", "扣款无回调"], "when_to_retrieve": "用户描述支付失败时"},
                                       ensure_ascii=False)])
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=5, max_retries=0)
    profile = DocumentProfiler(chat_model=model, model="small").run(title="支付手册", text=TEXT)
    assert profile.source == "llm" and profile.covers == ("支付超时", "扣款无回调")
    assert scripted_openai.requests[0]["model"] == "small"
    assert scripted_openai.requests[0]["response_format"]["json_schema"]["name"] == "DocumentProfileReply"


def test_a_bad_llm_reply_falls_back_to_offline(scripted_openai):
    scripted_openai.script(["not json at all", *http_error(500)])
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=5, max_retries=0)
    profiler = DocumentProfiler(chat_model=model, model="small")
    assert profiler.run(title="t", text=TEXT).source == "offline"
    assert profiler.run(title="t", text=TEXT).source == "offline"


def test_offline_merge_is_deterministic_and_prefers_shared_tags():
    docs = [DocSummary("B", ("退款", "支付超时"), "x"), DocSummary("A", ("支付超时",), "y")]
    agg = DomainAggregator(chat_model=None, model="m")
    first = agg.run(domain_id="payment", docs=docs)
    assert first == agg.run(domain_id="payment", docs=list(reversed(docs)))
    assert first.when_to_retrieve.startswith("用户问题涉及支付超时、退款") and "《A》" in first.when_to_retrieve


def test_an_empty_domain_has_no_when_to_retrieve():
    assert DomainAggregator(chat_model=None, model="m").run(domain_id="d", docs=[]).when_to_retrieve == ""


def test_llm_aggregation(scripted_openai):
    reply = json.dumps({"description": "支付", "when_to_retrieve": "涉及支付时检索"}, ensure_ascii=False)
    scripted_openai.script([reply])
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=5, max_retries=0)
    out = DomainAggregator(chat_model=model, model="small").run(domain_id="p", docs=[DocSummary("A", ("x",), "y")])
    assert (out.source, out.when_to_retrieve, out.description) == ("llm", "涉及支付时检索", "支付")
    assert scripted_openai.requests[0]["response_format"]["json_schema"]["name"] == "DomainAggregationReply"


def test_a_refused_reply_schema_is_dropped_and_the_profile_still_comes_from_the_model(scripted_openai):
    reply = json.dumps({"covers": ["支付超时"], "when_to_retrieve": "用户描述支付失败时"}, ensure_ascii=False)
    scripted_openai.script([*http_error(400, message="'response_format' json_schema is not supported"), reply])
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=5, max_retries=0)
    assert DocumentProfiler(chat_model=model, model="small").run(title="支付手册", text=TEXT).source == "llm"
    assert ["response_format" in body for body in scripted_openai.requests] == [True, False]


@pytest.mark.parametrize("stage", [DocumentProfiler, DomainAggregator])
def test_the_stages_reject_an_unknown_structured_outputs_mode(stage):
    with pytest.raises(ValueError, match="structured_outputs"):
        stage(chat_model=None, model="m", structured_outputs="yes")
