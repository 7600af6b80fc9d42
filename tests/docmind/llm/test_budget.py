"""The model client under a call budget: deadline, per-call timeout, retry cap and cancel, on real sockets."""
from __future__ import annotations

import threading
import time

import pytest

from docmind.llm.base import LlmCancelled, LlmTimeout, LlmUnavailable
from docmind.llm.budget import call_budget, current_budget
from docmind.llm.openai_model import OpenAIChatModel
from tests.fakes.openai_server import http_error

MESSAGES = [{"role": "user", "content": "hi"}]


def _model(base_url: str, timeout: float = 60.0) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=base_url, api_key="sk-test", timeout=timeout, max_retries=2)


# Bounds are half of what the wrong mechanism would take (the client's 60 s timeout, or never ending), never
# the expected time: a loaded machine makes the right one slower, not the wrong one faster.
SLOWER_MECHANISM = 30


def _timed(call) -> tuple[BaseException | None, float]:
    started = time.monotonic()
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - returned for the assertion
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


def test_a_silent_model_times_out_at_the_budget_deadline_not_the_client_timeout(silent_model_server):
    model = _model(silent_model_server.base_url, timeout=60)
    with call_budget(seconds=1.0):
        error, took = _timed(lambda: model.complete(MESSAGES, model="m"))
    assert isinstance(error, LlmTimeout)
    assert took < SLOWER_MECHANISM  # the client's own 60 s timeout and two retries would take minutes


def test_a_silent_stream_times_out_at_the_call_timeout_and_retries_at_most_once(silent_model_server):
    model = _model(silent_model_server.base_url, timeout=60)
    with call_budget(seconds=30.0, call_timeout=0.5):
        error, took = _timed(lambda: list(model.stream(MESSAGES, model="m")))
    assert isinstance(error, LlmTimeout)
    assert took < SLOWER_MECHANISM
    assert silent_model_server.accepted == 2  # the call and one retry


def test_cancelling_the_turn_ends_a_silent_call_at_once(silent_model_server):
    model = _model(silent_model_server.base_url, timeout=60)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with call_budget(seconds=30.0, cancel=cancel):
        error, took = _timed(lambda: model.complete(MESSAGES, model="m"))
    assert isinstance(error, LlmCancelled)
    assert took < SLOWER_MECHANISM


def test_a_passed_deadline_fails_before_any_request(silent_model_server):
    model = _model(silent_model_server.base_url)
    with call_budget(seconds=0.05):
        time.sleep(0.1)
        with pytest.raises(LlmTimeout):
            model.complete(MESSAGES, model="m")
    assert silent_model_server.accepted == 0


def test_server_errors_are_retried_once_under_a_budget(scripted_openai):
    scripted_openai.script([http_error(500, times=3)])
    model = _model(scripted_openai.base_url, timeout=5)
    with call_budget(seconds=30.0), pytest.raises(LlmUnavailable):
        model.complete(MESSAGES, model="m")
    assert len(scripted_openai.requests) == 2


def test_without_a_budget_the_client_keeps_its_own_timeout(silent_model_server):
    model = OpenAIChatModel(base_url=silent_model_server.base_url, api_key="k", timeout=0.5, max_retries=0)
    error, took = _timed(lambda: model.complete(MESSAGES, model="m"))
    assert isinstance(error, LlmTimeout) and 0.4 < took < SLOWER_MECHANISM
    assert current_budget() is None


def test_a_budget_streams_a_working_model_normally(scripted_openai):
    scripted_openai.script(["The answer is 42 [1]."])
    with call_budget(seconds=10.0, call_timeout=2.0):
        assert "".join(_model(scripted_openai.base_url).stream(MESSAGES, model="m")) == "The answer is 42 [1]."


@pytest.mark.parametrize("kwargs", [{"seconds": 0}, {"seconds": 1, "max_retries": -1},
                                    {"seconds": 1, "call_timeout": 0}])
def test_it_rejects_impossible_budgets(kwargs):
    with pytest.raises(ValueError), call_budget(**kwargs):
        pass
