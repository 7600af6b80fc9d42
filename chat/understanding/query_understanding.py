"""`QueryUnderstanding`: Tier-0 meta rules, Tier-1 classifier (small model or heuristic), then signals."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from chat.types import QueryClassification, Scope
from chat.understanding.heuristic_classifier import HeuristicClassifier
from chat.understanding.llm_classifier import LlmQueryClassifier
from chat.understanding.meta_intent_detector import MetaIntentDetector
from chat.understanding.signals import DeterministicSignals
from docmind.llm.base import ChatModel, LlmError

logger = logging.getLogger(__name__)


class QueryUnderstanding:
    """Classifies one user message. Never raises for model trouble: it falls back to the heuristic."""

    def __init__(self, chat_model: ChatModel | None, small_model: str, *, min_scope_confidence: float = 0.5) -> None:
        if chat_model is not None and not small_model:
            raise ValueError("small_model is required with a chat model")
        if not 0.0 <= min_scope_confidence <= 1.0:
            raise ValueError("min_scope_confidence must be within [0, 1]")
        self.min_scope_confidence = min_scope_confidence
        self._meta = MetaIntentDetector()
        self._heuristic = HeuristicClassifier()
        self._llm = LlmQueryClassifier(chat_model=chat_model, model=small_model) if chat_model else None
        self._signals = DeterministicSignals()

    def run(self, *, message: str, history: Sequence[dict] = ()) -> QueryClassification:
        text = message.strip()
        if not text:
            raise ValueError("message is empty")
        meta = self._meta.run(message=text)
        if meta is not None:
            return meta
        result = self._heuristic.run(message=text, history=history)
        if self._llm is not None:
            try:
                result = self._llm.run(message=text, history=history, baseline=result)
            except (LlmError, ValueError) as exc:
                logger.warning("classifier fell back to the heuristic: %s", exc)
        if result.scope is not Scope.KNOWLEDGE and result.scope_confidence < self.min_scope_confidence:
            # An unsure "not a knowledge question" would skip retrieval; searching is the safer mistake.
            result = replace(result, scope=Scope.KNOWLEDGE)
        return self._signals.run(classification=result, message=text)
