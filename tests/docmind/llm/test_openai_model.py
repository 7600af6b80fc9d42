"""The real openai client against the scripted OpenAI-compatible server."""
from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from docmind.llm.base import ChatModel, LlmError, LlmTimeout, LlmTruncated, LlmUnavailable, ToolCall
from docmind.llm.openai_model import OpenAIChatModel
from docmind.llm.replies import parse_reply
from tests.fakes.openai_server import delayed, http_error, tool_calls


def _model(server, timeout: float = 2.0) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="sk-test-secret", timeout=timeout)


def test_it_is_a_chat_model(scripted_openai):
    assert isinstance(_model(scripted_openai), ChatModel)


def test_it_completes_plain_text_and_sends_the_prompt(scripted_openai):
    scripted_openai.script(["你好，世界 [1]"])
    reply = _model(scripted_openai).complete([{"role": "user", "content": "hi"}], model="qwen-plus",
                                             temperature=0.1, max_tokens=50)
    assert reply.content == "你好，世界 [1]"
    assert reply.finish_reason == "stop"
    body = scripted_openai.requests[0]
    assert body["model"] == "qwen-plus" and body["max_tokens"] == 50 and body["temperature"] == 0.1
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_it_streams_content_deltas(scripted_openai):
    scripted_openai.script(["The answer is 42 [1]."])
    deltas = list(_model(scripted_openai).stream([{"role": "user", "content": "q"}], model="m"))
    assert len(deltas) > 1
    assert "".join(deltas) == "The answer is 42 [1]."
    assert scripted_openai.requests[0]["stream"] is True


@pytest.mark.parametrize("arguments", [{"query": "退货政策"}, '{"query": "unterminated'])
def test_it_returns_tool_calls_without_running_them(scripted_openai, arguments):
    scripted_openai.script([tool_calls(("searchDocs", arguments))])
    tools = [{"type": "function", "function": {"name": "searchDocs", "parameters": {"type": "object"}}}]
    reply = _model(scripted_openai).complete([{"role": "user", "content": "q"}], model="m", tools=tools)
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    assert reply.tool_calls == (ToolCall(id="call_0_searchDocs", name="searchDocs", arguments=raw),)
    assert reply.finish_reason == "tool_calls"
    assert scripted_openai.requests[0]["tools"] == tools
    assert len(scripted_openai.requests) == 1  # no SDK-side tool loop


def test_it_accepts_a_tool_round_trip_in_messages(scripted_openai):
    scripted_openai.script([tool_calls(("searchDocs", {"q": "a"})), "done [1]"])
    model = _model(scripted_openai)
    first = model.complete([{"role": "user", "content": "q"}], model="m")
    call = first.tool_calls[0]
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "[1] chunk"},
    ]
    assert model.complete(messages, model="m").content == "done [1]"
    assert scripted_openai.requests[1]["messages"][2]["tool_call_id"] == call.id


def test_a_slow_server_raises_llm_timeout(scripted_openai):
    scripted_openai.script([delayed(3.0, "late")] * 3)
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=0.3, max_retries=0)
    with pytest.raises(LlmTimeout):
        model.complete([{"role": "user", "content": "q"}], model="m")


def test_a_slow_stream_raises_llm_timeout(scripted_openai):
    scripted_openai.script([delayed(3.0, "late")])
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=0.3, max_retries=0)
    with pytest.raises(LlmTimeout):
        list(model.stream([{"role": "user", "content": "q"}], model="m"))


def test_persistent_500_raises_unavailable_after_bounded_retries(scripted_openai):
    scripted_openai.script([http_error(500, times=5)])
    with pytest.raises(LlmUnavailable):
        _model(scripted_openai).complete([{"role": "user", "content": "q"}], model="m")
    assert len(scripted_openai.requests) == 3  # first try + 2 retries


def test_a_transient_500_is_retried(scripted_openai):
    scripted_openai.script([http_error(500), "recovered"])
    assert _model(scripted_openai).complete([{"role": "user", "content": "q"}], model="m").content == "recovered"


def test_a_400_is_an_llm_error_not_retried(scripted_openai):
    scripted_openai.script([http_error(400)])
    with pytest.raises(LlmError) as info:
        _model(scripted_openai).complete([{"role": "user", "content": "q"}], model="m")
    assert not isinstance(info.value, LlmUnavailable)
    assert len(scripted_openai.requests) == 1


def test_connection_refused_is_unavailable():
    model = OpenAIChatModel(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=1, max_retries=0)
    with pytest.raises(LlmUnavailable):
        model.complete([{"role": "user", "content": "q"}], model="m")


def test_model_specific_queue_answers_that_model(scripted_openai):
    scripted_openai.script(['{"scope": "KNOWLEDGE"}'], model="qwen-turbo")
    scripted_openai.script(["main answer"])
    model = _model(scripted_openai)
    assert model.complete([{"role": "user", "content": "q"}], model="qwen-plus").content == "main answer"
    assert model.complete([{"role": "user", "content": "q"}], model="qwen-turbo").content == '{"scope": "KNOWLEDGE"}'


def test_the_key_never_appears_in_repr():
    assert "sk-test-secret" not in repr(OpenAIChatModel(base_url="http://x/v1", api_key="sk-test-secret", timeout=1))


@pytest.mark.parametrize("kwargs", [{"timeout": 0}, {"timeout": 1, "max_retries": 9}, {"timeout": 1, "api_key": ""}])
def test_it_rejects_bad_configuration(kwargs):
    with pytest.raises(ValueError):
        OpenAIChatModel(**{"base_url": "http://x/v1", "api_key": "k", **kwargs})


def test_responder_answers_when_the_queue_is_empty(scripted_openai):
    scripted_openai.respond_with(lambda body: f"echo {body['messages'][-1]['content']}")
    assert _model(scripted_openai).complete([{"role": "user", "content": "ping"}], model="m").content == "echo ping"


def test_an_unscripted_request_fails_loudly(scripted_openai):
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=2, max_retries=0)
    with pytest.raises(LlmUnavailable):
        model.complete([{"role": "user", "content": "q"}], model="m")
    assert scripted_openai.pending == 0


def test_a_reply_cut_at_the_token_limit_streams_its_text_then_raises_truncated(scripted_openai):
    from tests.fakes.openai_server import ScriptedReply

    scripted_openai.script([ScriptedReply(content="The answer is", finish_reason="length")])
    got: list[str] = []
    with pytest.raises(LlmTruncated):
        for delta in _model(scripted_openai).stream([{"role": "user", "content": "q"}], model="m"):
            got.append(delta)
    assert "".join(got) == "The answer is"


def test_an_empty_reply_is_an_error_not_an_empty_answer(scripted_openai):
    scripted_openai.script([""])
    with pytest.raises(LlmError, match="empty reply"):
        list(_model(scripted_openai).stream([{"role": "user", "content": "q"}], model="m"))


class _Verdict(BaseModel):
    answer: str
    score: int


_VERDICT = '{"answer": "yes", "score": 3}'
_REFUSAL = "response_format.type json_schema is not supported by this model"


def _ask(model: OpenAIChatModel, *, name: str = "m", mode: str = "auto") -> _Verdict:
    reply = model.complete([{"role": "user", "content": "q"}], model=name, response_schema=_Verdict,
                           structured_outputs=mode)
    return parse_reply(_Verdict, reply.content, what="verdict")


@pytest.mark.parametrize("mode", ["auto", "on"])
def test_it_asks_for_the_reply_schema(scripted_openai, mode):
    scripted_openai.script([_VERDICT])
    assert _ask(_model(scripted_openai), mode=mode) == _Verdict(answer="yes", score=3)
    sent = scripted_openai.requests[0]["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {
        "name": "_Verdict", "strict": True,
        "schema": {"type": "object", "title": "_Verdict", "additionalProperties": False,
                   "required": ["answer", "score"],
                   "properties": {"answer": {"title": "Answer", "type": "string"},
                                  "score": {"title": "Score", "type": "integer"}}}}}


def test_off_sends_no_reply_schema(scripted_openai):
    scripted_openai.script([_VERDICT])
    assert _ask(_model(scripted_openai), mode="off").score == 3
    assert "response_format" not in scripted_openai.requests[0]


def test_a_call_without_a_schema_sends_none(scripted_openai):
    scripted_openai.script(["plain"])
    _model(scripted_openai).complete([{"role": "user", "content": "q"}], model="m")
    assert "response_format" not in scripted_openai.requests[0]


def test_auto_asks_once_more_without_the_schema_when_refused_and_stops_asking_that_model(scripted_openai):
    scripted_openai.script([*http_error(400, message=_REFUSAL), "```json\n" + _VERDICT + "\n```", _VERDICT, _VERDICT])
    model = _model(scripted_openai)
    assert _ask(model) == _Verdict(answer="yes", score=3)  # the retry's fenced reply is still parsed
    assert _ask(model).score == 3
    assert _ask(model, name="other").score == 3
    sent = [("response_format" in body, body["model"]) for body in scripted_openai.requests]
    assert sent == [(True, "m"), (False, "m"), (False, "m"), (True, "other")]


def test_on_fails_when_the_schema_is_refused(scripted_openai):
    scripted_openai.script(http_error(400, message=_REFUSAL))
    with pytest.raises(LlmError, match="HTTP 400"):
        _ask(_model(scripted_openai), mode="on")
    assert len(scripted_openai.requests) == 1


def test_a_400_about_something_else_is_not_retried_and_not_remembered(scripted_openai):
    scripted_openai.script([*http_error(400, message="the prompt is longer than the context window"), _VERDICT])
    model = _model(scripted_openai)
    with pytest.raises(LlmError, match="HTTP 400"):
        _ask(model)
    assert _ask(model).score == 3
    assert ["response_format" in body for body in scripted_openai.requests] == [True, True]


def test_a_reply_that_does_not_fit_the_schema_still_fails(scripted_openai):
    # An endpoint may accept response_format and ignore it: the reply is validated all the same.
    scripted_openai.script(['{"answer": "yes", "score": "many"}'])
    with pytest.raises(ValueError, match="verdict does not fit the schema"):
        _ask(_model(scripted_openai))


def test_an_unknown_mode_is_an_llm_error(scripted_openai):
    with pytest.raises(LlmError, match="structured_outputs"):
        _ask(_model(scripted_openai), mode="sometimes")
    assert scripted_openai.requests == []
