"""HistorySummarizer over the real client, and the fitHead / fitTail / per-item primitives."""
from __future__ import annotations

import pytest

from chat.prompt.budget import fit_head, fit_items, fit_tail
from chat.prompt.summary import HistorySummarizer
from docmind.llm.base import LlmError, LlmUnavailable
from docmind.llm.openai_model import OpenAIChatModel
from tests.fakes.openai_server import http_error


@pytest.mark.parametrize("fit", [fit_head, fit_tail])
@pytest.mark.parametrize("budget", [0, -1, -100])
def test_fit_leaks_nothing_at_zero_or_negative_budget(fit, budget):
    assert fit("some text 一些文字", budget) == ""


def test_fit_head_and_tail_keep_their_ends():
    assert fit_head("甲乙丙丁", 2) == "甲乙" and fit_tail("甲乙丙丁", 2) == "丙丁"


def test_fit_items_skips_items_that_do_not_fit_but_keeps_later_ones():
    fitted = fit_items(["短一", "长" * 100, "短二"], 10)
    assert fitted.kept == ("短一", "短二") and fitted.dropped == 1 and fitted.tokens <= 10


def test_fit_items_with_no_budget_keeps_nothing():
    assert fit_items(["a"], 0).kept == ()


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=2, max_retries=0)


def test_summarizer_uses_the_cheap_model_and_holds_the_budget(scripted_openai):
    scripted_openai.script(["要点" * 200], model="qwen-flash")
    summary = HistorySummarizer(_model(scripted_openai), "qwen-flash")("用户：问题一\n助手：回答一", 50)
    assert 0 < len(summary) <= 50
    body = scripted_openai.requests[0]
    assert body["model"] == "qwen-flash" and "问题一" in body["messages"][0]["content"]


def test_summarizer_raises_on_an_empty_reply(scripted_openai):
    scripted_openai.script([""])
    with pytest.raises(LlmError):
        HistorySummarizer(_model(scripted_openai), "qwen-flash")("用户：问题", 50)


def test_summarizer_raises_when_the_model_fails(scripted_openai):
    scripted_openai.script([http_error(500)])
    with pytest.raises(LlmUnavailable):
        HistorySummarizer(_model(scripted_openai), "qwen-flash")("用户：问题", 50)
