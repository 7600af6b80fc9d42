"""Token usage of one chat turn, per model, and its price from the configured per-1k-token rates."""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from docmind.tokens import estimate_tokens


@dataclass
class ModelUsage:
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    # True when any call's numbers came from the token estimator instead of the API's usage fields.
    estimated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "calls": self.calls, "estimated": self.estimated}


class TurnUsage:
    """Thread-safe: the agentic loop's helper threads report into the same turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, ModelUsage] = {}

    def add(self, *, model: str, input_tokens: int, output_tokens: int, estimated: bool) -> None:
        with self._lock:
            row = self._by_model.setdefault(model, ModelUsage(model=model))
            row.input_tokens += max(0, int(input_tokens))
            row.output_tokens += max(0, int(output_tokens))
            row.calls += 1
            row.estimated = row.estimated or estimated

    def models(self) -> list[ModelUsage]:
        with self._lock:
            return [ModelUsage(**vars(m)) for m in self._by_model.values()]

    def totals(self) -> tuple[int, int]:
        rows = self.models()
        return sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows)


_current: contextvars.ContextVar[TurnUsage | None] = contextvars.ContextVar("docmind_turn_usage", default=None)


@contextlib.contextmanager
def usage_scope(usage: TurnUsage) -> Iterator[TurnUsage]:
    """Model calls made inside (on this thread, or threads started with `in_context`) count here."""
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


def record_usage(*, model: str, input_tokens: int, output_tokens: int, estimated: bool) -> None:
    usage = _current.get()
    if usage is not None:
        usage.add(model=model, input_tokens=input_tokens, output_tokens=output_tokens, estimated=estimated)


def estimate_messages(messages: list[dict]) -> int:
    """Prompt tokens of OpenAI-format messages when the API reported none (a few per message of framing)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += estimate_tokens(content)
        for call in message.get("tool_calls") or ():
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            total += estimate_tokens(str(fn.get("name", ""))) + estimate_tokens(str(fn.get("arguments", "")))
        total += 4
    return total


def model_tiers(snapshot: Mapping[str, Any]) -> dict[str, str]:
    """Model name → tier; when one model serves several tiers the more expensive tier names it."""
    tiers: dict[str, str] = {}
    for key, tier in (("memory.extract_model", "extract"), ("llm.small_model", "small"), ("llm.main_model", "main")):
        tiers[str(snapshot[key])] = tier
    return tiers


def price_of(prices: Mapping[str, Any], *, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Cost in the rates' currency, or None when the model has no price configured."""
    rate = prices.get(model)
    if rate is None:
        return None
    if isinstance(rate, int | float):
        rate_in = rate_out = float(rate)
    else:
        rate_in, rate_out = float(rate.get("input", 0)), float(rate.get("output", 0))
    return round(input_tokens / 1000 * rate_in + output_tokens / 1000 * rate_out, 8)


def validate_prices(value: Any) -> None:
    """`{"model": 0.002}` or `{"model": {"input": 0.0008, "output": 0.002}}`; ValueError otherwise."""
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object mapping model name to a price per 1k tokens")
    for model, rate in value.items():
        if isinstance(rate, bool):
            raise ValueError(f"{model}: price must be a number or {{input, output}}")
        if isinstance(rate, int | float):
            rates: list[Any] = [rate]
        elif isinstance(rate, dict) and rate and set(rate) <= {"input", "output"}:
            rates = list(rate.values())
        else:
            raise ValueError(f"{model}: price must be a number or an object with input/output")
        for r in rates:
            if isinstance(r, bool) or not isinstance(r, int | float) or r < 0:
                raise ValueError(f"{model}: prices must be non-negative numbers")


def current_usage() -> TurnUsage | None:
    return _current.get()
