"""`LlmQueryClassifier`: Tier-1 classification by the small model; its JSON reply is read by `ClassifierReply`."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum

from chat.types import Complexity, ConversationContext, Intent, QueryClassification, Scope, Specificity
from docmind.llm.base import ChatModel, checked_structured_outputs
from docmind.llm.replies import parse_reply
from docmind.prompts.classifier import SYSTEM_PROMPT, ClassifierReply, user_message


def _enum[E: StrEnum](kind: type[E], name: str | None, default: E) -> E:
    return kind(name) if name is not None else default


class LlmQueryClassifier:
    """Each field the model got wrong keeps the heuristic's value: a bad field never spoils the rest."""

    def __init__(self, *, chat_model: ChatModel, model: str, history_turns: int = 4,
                 structured_outputs: str = "auto") -> None:
        if not model:
            raise ValueError("model name is required")
        if history_turns < 0:
            raise ValueError("history_turns must be >= 0")
        self.chat_model = chat_model
        self.model = model
        self.history_turns = history_turns
        self.structured_outputs = checked_structured_outputs(structured_outputs)

    def run(self, *, message: str, history: Sequence[dict], baseline: QueryClassification,
            context: ConversationContext | None = None) -> QueryClassification:
        """Raises LlmError (model failed) or ValueError (reply has no JSON object, or it does not parse). The
        rewrite is the model's as given: the caller validates it against the offline one."""
        recent = [t for t in history if t.get("role") in ("user", "assistant")][-self.history_turns:]
        previous = context.previous if context is not None else None
        titles = [s.title for s in previous.sources] if previous is not None else []
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(
                history=[(t["role"], str(t.get("content", ""))) for t in recent], message=message,
                source_titles=titles, sections=previous.sections if previous is not None else ())},
        ]
        reply = self.chat_model.complete(messages, model=self.model, temperature=0.0, max_tokens=400,
                                         response_schema=ClassifierReply, structured_outputs=self.structured_outputs)
        data = parse_reply(ClassifierReply, reply.content, what="classifier reply")
        return replace(
            baseline,
            rewritten=data.rewritten,
            intent=_enum(Intent, data.intent, baseline.intent),
            complexity=_enum(Complexity, data.complexity, baseline.complexity),
            specificity=_enum(Specificity, data.specificity, baseline.specificity),
            time_aware=baseline.time_aware if data.time_aware is None else data.time_aware,
            memory_aware=baseline.memory_aware if data.memory_aware is None else data.memory_aware,
            is_ambiguous=baseline.is_ambiguous if data.is_ambiguous is None else data.is_ambiguous,
            scope=_enum(Scope, data.scope, baseline.scope),
            scope_confidence=baseline.scope_confidence if data.scope_confidence is None else data.scope_confidence,
            memory_write_hints=baseline.memory_write_hints if data.memory_write_hints is None
            else data.memory_write_hints,
            source="llm",
        )
