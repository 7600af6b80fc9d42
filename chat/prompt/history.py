"""`HistoryFitter`: history for the prompt — `[n]` stripped, messages cut, tail kept, old head summarised."""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chat.prompt.budget import fit_tail
from docmind.prompts.answer import HISTORY_ROLE_LABELS, OMITTED_MARKER, SUMMARY_HEAD, SUMMARY_SEPARATOR
from docmind.tokens import estimate_tokens, truncate_to_tokens

logger = logging.getLogger(__name__)

# Old citation numbers would be reused by the model for this turn's evidence and land in invalid_refs.
CITATION_REF = re.compile(r"\s?\[\d+(?:\s*[,，、]\s*\d+)*\]")

Summarizer = Callable[[str, int], str]


@dataclass(frozen=True)
class FittedHistory:
    text: str
    tokens: int
    mode: str  # "none" | "full" | "summary" | "cut"
    dropped_messages: int = 0


def strip_citations(text: str) -> str:
    return CITATION_REF.sub("", text)


def history_lines(history: Sequence[dict], *, max_chars: int) -> list[str]:
    """One line per user/assistant message, `[n]` stripped from assistant turns, each cut to max_chars."""
    lines = []
    for turn in history:
        role = turn.get("role")
        if role not in HISTORY_ROLE_LABELS:
            continue
        text = str(turn.get("content") or "").strip()
        if role == "assistant":
            text = strip_citations(text)
        if len(text) > max_chars:
            text = text[:max_chars].rstrip() + "…"
        if text:
            lines.append(f"{HISTORY_ROLE_LABELS[role]}：{text}")
    return lines


def _tail_lines(lines: list[str], budget: int) -> list[str]:
    """Whole newest messages within budget; when not even the newest fits, its tail."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = estimate_tokens(line + "\n")
        if used + cost > budget:
            break
        kept.insert(0, line)
        used += cost
    if not kept and lines and budget > 0:
        tail = fit_tail(lines[-1], budget - 1)
        return [tail] if tail else []
    return kept


class HistoryFitter:
    def __init__(self, *, message_max_chars: int, rolling_summary: bool, summary_max_tokens: int) -> None:
        if message_max_chars <= 0:
            raise ValueError("message_max_chars must be positive")
        if summary_max_tokens < 0:
            raise ValueError("summary_max_tokens must not be negative")
        self.message_max_chars = message_max_chars
        self.rolling_summary = rolling_summary
        self.summary_max_tokens = summary_max_tokens

    def run(self, *, history: Sequence[dict], budget: int, summarizer: Summarizer | None = None) -> FittedHistory:
        lines = history_lines(history, max_chars=self.message_max_chars)
        if not lines or budget <= 0:
            return FittedHistory("", 0, "none", len(lines))
        full = "\n".join(lines)
        if estimate_tokens(full) <= budget:
            return FittedHistory(full, estimate_tokens(full), "full")
        if self.rolling_summary and summarizer is not None:
            summarised = self._with_summary(lines, budget, summarizer)
            if summarised is not None:
                return summarised
        return self._hard_cut(lines, budget)

    def _with_summary(self, lines: list[str], budget: int, summarizer: Summarizer) -> FittedHistory | None:
        frame = estimate_tokens(f"{SUMMARY_HEAD}\n\n{SUMMARY_SEPARATOR}\n")
        summary_budget = min(self.summary_max_tokens, budget // 2)
        recent_budget = budget - frame - summary_budget
        if summary_budget <= 0 or recent_budget <= 0:
            return None
        recent = _tail_lines(lines, recent_budget)
        dropped = lines[:len(lines) - len(recent)] if recent and recent[-1] == lines[-1] else lines[:-1]
        if not dropped:
            return None
        try:
            summary = summarizer("\n".join(dropped), summary_budget).strip()
        except Exception as exc:  # any failure of the cheap model must not block the answer
            logger.warning("history summary failed, hard cut instead: %s", exc)
            return None
        summary = truncate_to_tokens(summary, summary_budget, keep="head")
        if not summary:
            return None
        text = f"{SUMMARY_HEAD}{summary}\n{SUMMARY_SEPARATOR}\n" + "\n".join(recent)
        if estimate_tokens(text) > budget:
            return None
        return FittedHistory(text, estimate_tokens(text), "summary", len(dropped))

    def _hard_cut(self, lines: list[str], budget: int) -> FittedHistory:
        recent_budget = budget - estimate_tokens(OMITTED_MARKER + "\n")
        recent = _tail_lines(lines, recent_budget) if recent_budget > 0 else []
        if not recent:
            return FittedHistory("", 0, "none", len(lines))
        text = OMITTED_MARKER + "\n" + "\n".join(recent)
        whole = sum(1 for line in recent if line in lines)
        return FittedHistory(text, estimate_tokens(text), "cut", len(lines) - whole)
