"""Two runs side by side: the items whose outcome flipped, metric changes and the AI configuration that differs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.models import EvalResult, EvalRun


@dataclass(frozen=True)
class Flip:
    question: str
    category: str
    before: EvalResult
    after: EvalResult

    @property
    def fixed(self) -> bool:
        return self.after.passed and not self.before.passed


def flipped(a: EvalRun, b: EvalRun) -> list[Flip]:
    """Items answered in both runs (matched by item, else by question) whose pass/fail differs, `a` before `b`."""
    def key(r: EvalResult) -> Any:
        return ("item", r.item_id) if r.item_id else ("question", r.question)

    before = {key(r): r for r in a.results.all()}
    flips = []
    for r in b.results.all():
        old = before.get(key(r))
        if old is not None and old.passed != r.passed:
            flips.append(Flip(question=r.question, category=r.category, before=old, after=r))
    return flips


def config_diff(a: EvalRun, b: EvalRun) -> list[tuple[str, Any, Any]]:
    """(key, value in a, value in b) for every AI configuration key whose value differs (missing: None)."""
    keys = sorted(set(a.config) | set(b.config))
    return [(k, a.config.get(k), b.config.get(k)) for k in keys if a.config.get(k) != b.config.get(k)]


METRIC_KEYS = ("answer_hit", "recall_at_5", "mrr", "cites_expected", "flagged", "wrong_unflagged", "p50_ms",
               "p95_ms")


def metric_deltas(a: EvalRun, b: EvalRun) -> list[tuple[str, Any, Any, float | None]]:
    out = []
    for k in METRIC_KEYS:
        va, vb = a.metrics.get(k), b.metrics.get(k)
        out.append((k, va, vb, round(vb - va, 3) if isinstance(va, int | float) and isinstance(vb, int | float)
                    else None))
    return out
