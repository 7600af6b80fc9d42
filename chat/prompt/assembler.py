"""`PromptAssembler`: the prompt under one global token budget (evidence first, then computations, memory, history)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chat.prompt.budget import block_cost, fit_head, fit_items
from chat.prompt.history import HistoryFitter, Summarizer
from chat.prompt.params import PromptParams
from chat.types import PromptParts
from docmind.evidence import BLOCK_SEPARATOR, evidence_block
from docmind.fences import DOCUMENT_DATA, fenced
from docmind.prompts import answer as t
from docmind.tokens import estimate_tokens, truncate_to_tokens
from kb.retrieval.types import Grade, GradeResult, ScoredChunk


def _computation_text(item: Any) -> str:
    if isinstance(item, Mapping):
        code, output = str(item.get("code", "")).strip(), str(item.get("output", item.get("result", ""))).strip()
        return (f"```python\n{code}\n```\n" if code else "") + f"{t.COMPUTATION_OUTPUT}{output}"
    return str(item).strip()


def _memory_text(item: Any) -> str:
    return str(item.get("content", "") if isinstance(item, Mapping) else item).strip()


class PromptAssembler:
    """Chunks first; then computations > memory > history share what the aux cap and the ceiling leave."""

    def __init__(self, params: PromptParams | None = None) -> None:
        self.params = params or PromptParams()
        p = self.params
        self._history = HistoryFitter(message_max_chars=p.message_max_chars, rolling_summary=p.rolling_summary,
                                      summary_max_tokens=p.summary_max_tokens)

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], grade: GradeResult | Grade | None,
            history: Sequence[dict], memories: Sequence[Any] = (), computations: Sequence[Any] = (),
            profile: str | None = "", history_summarizer: Summarizer | None = None,
            instructions: str = "", low_confidence: bool | None = None, unsaid: Sequence[str] = ()) -> PromptParts:
        """`low_confidence` (the calibrated verdict) overrides the grade's LOW when given; `unsaid`: words of the
        question the evidence never says, named in the low-confidence instructions and kept on the parts (for the
        offline answer's label) when the verdict is low."""
        p = self.params
        notes: list[str] = []
        level = grade.grade if isinstance(grade, GradeResult) else grade
        low = (level is Grade.LOW if low_confidence is None else low_confidence) and bool(chunks)
        system = t.SYSTEM_NO_EVIDENCE if not chunks else t.SYSTEM_LOW_CONFIDENCE if low else t.SYSTEM_NORMAL
        if low and unsaid:
            system += "\n" + t.UNSAID_NOTE.format(words=t.named_words(unsaid))
        if chunks and instructions.strip():
            system += "\n" + instructions.strip()
        question = question.strip()
        profile_text = (profile or "").strip()
        tokens: dict[str, int] = {
            # The evidence's fence is scaffolding too: the evidence budget measures the blocks alone.
            "scaffolding": estimate_tokens(system + t.EVIDENCE_HEADER + fenced("", DOCUMENT_DATA) + t.QUESTION_HEADER),
            "question": estimate_tokens(question),
            "profile": estimate_tokens(t.PROFILE_HEADER + profile_text) if profile_text else 0,
        }
        # Chunks come first, but never past the global ceiling left after the fixed text.
        ceiling_left = p.total_max_tokens - tokens["scaffolding"] - tokens["question"] - tokens["profile"]
        used, evidence, chunk_tokens = self._fit_chunks(chunks, ceiling_left, notes)
        tokens["chunks"] = chunk_tokens
        tokens["fixed"] = tokens["scaffolding"] + tokens["question"] + tokens["profile"] + chunk_tokens
        aux_left = max(0, min(p.aux_max_tokens, p.total_max_tokens - tokens["fixed"]))
        tokens["aux_available"] = aux_left

        comp_block, tokens["computations"] = self._computations(computations, min(p.computations_max_tokens,
                                                                                  aux_left), notes)
        aux_left -= tokens["computations"]
        mem_block, tokens["memory"] = self._memory(memories, min(p.memory_max_tokens, aux_left))
        aux_left -= tokens["memory"]
        hist_block, tokens["history"] = self._history_block(history, min(p.history_max_tokens, aux_left),
                                                            history_summarizer, notes)

        system_text = system + (t.PROFILE_HEADER + profile_text if profile_text else "")
        # Document text is other people's words: fenced, and the rules say it is data.
        evidence_text = fenced(evidence, DOCUMENT_DATA) if evidence else t.NO_EVIDENCE
        user_text = (t.EVIDENCE_HEADER + evidence_text + comp_block + mem_block + hist_block
                     + t.QUESTION_HEADER + question)
        messages = [{"role": "system", "content": system_text}, {"role": "user", "content": user_text}]
        tokens["total"] = estimate_tokens(system_text) + estimate_tokens(user_text)
        return PromptParts(messages=messages, chunks=tuple(used), low_confidence=low, tokens=tokens,
                           notes=tuple(notes), unsaid=tuple(unsaid) if low else ())

    def _fit_chunks(self, chunks: Sequence[ScoredChunk], ceiling: int,
                    notes: list[str]) -> tuple[list[ScoredChunk], str, int]:
        budget = self.params.evidence
        used, spent = budget.pack(chunks, ceiling=ceiling)
        blocks = [evidence_block(i, chunk) for i, chunk in enumerate(used, 1)]
        if not used and chunks:
            # Not even the best chunk fits whole: its head beats no evidence at all.
            room = min(budget.tokens, ceiling) - budget.header_cost(1, chunks[0])
            head = truncate_to_tokens(chunks[0].content, room)
            if head:
                used, blocks, spent = [chunks[0]], [evidence_block(1, chunks[0], head)], budget.block_cost(
                    1, chunks[0], head)
                notes.append("chunk [1] truncated to fit the context budget")
        if len(used) < len(chunks):
            notes.append(f"{len(chunks) - len(used)} chunk(s) left out by the context budget")
        return used, BLOCK_SEPARATOR.join(blocks), spent

    def _computations(self, items: Sequence[Any], budget: int, notes: list[str]) -> tuple[str, int]:
        texts = [x for x in (_computation_text(i) for i in items) if x]
        room = budget - estimate_tokens(t.COMPUTATIONS_HEADER)
        if not texts or room <= 0:
            if texts:
                notes.append(f"{len(texts)} computation(s) dropped: no budget left")
            return "", 0
        fitted = fit_items(texts, room)
        if fitted.dropped:
            note = t.COMPUTATIONS_DROPPED.format(n=len(texts))  # the widest the note can be
            fitted = fit_items(texts, room - estimate_tokens("\n" + note, code_like=True))
            notes.append(f"{fitted.dropped} computation(s) dropped whole by the budget")
        if not fitted.kept:
            return "", 0
        body = "\n\n".join(fitted.kept)
        if fitted.dropped:
            body += "\n" + t.COMPUTATIONS_DROPPED.format(n=fitted.dropped)
        return t.COMPUTATIONS_HEADER + body, block_cost(t.COMPUTATIONS_HEADER, body, code_like=True)

    def _memory(self, items: Sequence[Any], budget: int) -> tuple[str, int]:
        lines = [f"- {x}" for x in (_memory_text(i) for i in items) if x]
        body = fit_head("\n".join(lines), budget - estimate_tokens(t.MEMORY_HEADER))
        if not body:
            return "", 0
        return t.MEMORY_HEADER + body, block_cost(t.MEMORY_HEADER, body)

    def _history_block(self, history: Sequence[dict], budget: int, summarizer: Summarizer | None,
                       notes: list[str]) -> tuple[str, int]:
        fitted = self._history.run(history=history, budget=budget - estimate_tokens(t.HISTORY_HEADER),
                                   summarizer=summarizer)
        if fitted.mode in ("summary", "cut"):
            notes.append(f"history {'summarised' if fitted.mode == 'summary' else 'cut'}: "
                         f"{fitted.dropped_messages} older message(s)")
        if not fitted.text:
            return "", 0
        return t.HISTORY_HEADER + fitted.text, block_cost(t.HISTORY_HEADER, fitted.text)
