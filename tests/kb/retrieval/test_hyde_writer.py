"""HypotheticalAnswerWriter: a short passage from the small model, an error on an empty reply."""
import pytest

from docmind.llm.base import LlmError
from docmind.llm.openai_model import OpenAIChatModel
from kb.retrieval.hyde_writer import HypotheticalAnswerWriter


def _remote(server) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=2.0, max_retries=0)


def test_it_returns_the_passage_the_model_wrote(scripted_openai):
    scripted_openai.script(["年假一般为五到十五天。"], model="qwen-turbo")
    writer = HypotheticalAnswerWriter(_remote(scripted_openai), "qwen-turbo")
    assert writer("年假几天") == "年假一般为五到十五天。"
    assert "年假几天" in scripted_openai.requests[0]["messages"][0]["content"]


def test_it_raises_on_an_empty_reply(scripted_openai):
    scripted_openai.script(["  "])
    with pytest.raises(LlmError):
        HypotheticalAnswerWriter(_remote(scripted_openai), "m")("q")
