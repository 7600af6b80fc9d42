"""Turn usage bookkeeping, model tiers and the price row's validation."""
from __future__ import annotations

import threading

import pytest

from config_admin.registry import ConfigValueError, spec
from docmind.telemetry import in_context
from docmind.telemetry.usage import TurnUsage, model_tiers, price_of, record_usage, usage_scope


def test_usage_from_helper_threads_started_in_context_counts_for_the_turn():
    usage = TurnUsage()
    with usage_scope(usage):
        record_usage(model="a", input_tokens=10, output_tokens=2, estimated=False)
        worker = threading.Thread(target=in_context(record_usage),
                                  kwargs={"model": "a", "input_tokens": 5, "output_tokens": 1, "estimated": True})
        worker.start()
        worker.join()
    record_usage(model="a", input_tokens=99, output_tokens=99, estimated=False)  # outside: no turn, dropped
    [row] = usage.models()
    assert (row.input_tokens, row.output_tokens, row.calls, row.estimated) == (15, 3, 2, True)


def test_a_model_serving_two_tiers_is_named_by_the_more_expensive_one():
    tiers = model_tiers({"llm.main_model": "m", "llm.small_model": "m", "memory.extract_model": "x"})
    assert tiers == {"m": "main", "x": "extract"}


def test_prices_apply_per_direction_or_as_one_rate():
    assert price_of({"m": {"input": 1, "output": 2}}, model="m", input_tokens=1000, output_tokens=500) == 2.0
    assert price_of({"m": 0.5}, model="m", input_tokens=1000, output_tokens=1000) == 1.0
    assert price_of({}, model="m", input_tokens=1000, output_tokens=1000) is None


@pytest.mark.parametrize("raw", ['[]', '{"m": "cheap"}', '{"m": -1}', '{"m": {"in": 1}}', '{"m": true}',
                                 '{"m": {"input": "1"}}'])
def test_the_price_row_rejects_malformed_prices(raw):
    with pytest.raises(ConfigValueError, match="llm.price_per_1k_tokens"):
        spec("llm.price_per_1k_tokens").parse(raw)


def test_the_price_row_is_empty_by_default_and_accepts_both_shapes():
    key = spec("llm.price_per_1k_tokens")
    assert key.default == {}
    assert key.parse('{"qwen-plus": {"input": 0.0008, "output": 0.002}, "qwen-turbo": 0.0003}')["qwen-turbo"] == 0.0003
