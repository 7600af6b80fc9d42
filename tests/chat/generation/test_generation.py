"""AnswerGenerator: the remote model's stream, the offline answer in pieces, and its configuration checks."""
from __future__ import annotations

import pytest

from chat.generation import AnswerGenerator
from chat.offline.extractive import ExtractiveAnswerer
from chat.types import PromptParts
from docmind.llm.base import LlmTimeout
from docmind.llm.openai_model import OpenAIChatModel
from kb.retrieval.types import ScoredChunk
from tests.fakes.openai_server import delayed

ZH = [
    ScoredChunk(chunk_id="a", score=0.9, document_title="员工手册", content=(
        "# 休假制度\n员工年假按工龄计算。工作满一年不满十年的，年假五天。满十年的年假十天。病假需要提供医院证明。")),
    ScoredChunk(chunk_id="b", score=0.5, document_title="财务制度", content=(
        "报销流程：先在系统提交申请，再由主管审批。审批通过后五个工作日内打款。")),
]


def test_offline_generator_streams_the_extractive_answer_in_pieces():
    generator = AnswerGenerator(None, "", 0.2)
    prompt = PromptParts(messages=[], chunks=tuple(ZH))
    pieces = list(generator.run(prompt=prompt, question="年假有几天？"))
    assert len(pieces) > 1 and generator.is_extractive
    assert "".join(pieces) == ExtractiveAnswerer().run(question="年假有几天？", chunks=ZH)


def _remote(server, timeout: float = 2.0) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=timeout, max_retries=0)


def test_remote_generator_streams_the_main_model(scripted_openai):
    scripted_openai.script(["年假五天[1]。"])
    generator = AnswerGenerator(_remote(scripted_openai), "qwen-plus", 0.3)
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    out = list(generator.run(prompt=PromptParts(messages=messages, chunks=tuple(ZH)), question="q"))
    assert "".join(out) == "年假五天[1]。" and len(out) > 1
    body = scripted_openai.requests[0]
    assert body["model"] == "qwen-plus" and body["temperature"] == 0.3 and body["messages"] == messages


def test_remote_generator_raises_the_port_errors(scripted_openai):
    scripted_openai.script([delayed(2.0, "late")])
    generator = AnswerGenerator(_remote(scripted_openai, timeout=0.3), "m", 0.2)
    with pytest.raises(LlmTimeout):
        list(generator.run(prompt=PromptParts(messages=[{"role": "user", "content": "q"}]), question="q"))


@pytest.mark.parametrize("kwargs", [{"temperature": 3.0}, {"max_tokens": 0}])
def test_generator_rejects_bad_configuration(kwargs):
    with pytest.raises(ValueError):
        AnswerGenerator(None, "m", **{"temperature": 0.2, **kwargs})
