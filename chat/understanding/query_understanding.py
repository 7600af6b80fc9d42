"""`QueryUnderstanding`: Tier-0 meta rules, the follow-up rewrite, Tier-1 classifier (small model or
heuristic), then signals."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from chat.offline.heuristic_classifier import HeuristicClassifier
from chat.types import ConversationContext, PreviousTurn, QueryClassification, Scope
from chat.understanding.llm_classifier import LlmQueryClassifier
from chat.understanding.meta_intent_detector import MetaIntentDetector
from chat.understanding.rewrite_check import RewriteValidator
from chat.understanding.rewriter import ConversationRewriter
from chat.understanding.signals import DeterministicSignals
from docmind.bilingual import Lexicon
from docmind.language import to_simplified
from docmind.llm.base import ChatModel, LlmError
from docmind.text import joined_separable

logger = logging.getLogger(__name__)


def context_from_history(history: Sequence[dict]) -> ConversationContext:
    """A bare context (last question and answer, no sources) for callers that only have the messages."""
    question = answer = ""
    for turn in reversed(history):
        content = str(turn.get("content", "")).strip()
        if turn.get("role") == "assistant" and not answer and not question:
            answer = content
        elif turn.get("role") == "user" and content:
            question = content
            break
    if not question:
        return ConversationContext()
    return ConversationContext(previous=PreviousTurn(question=question, rewritten="", answer=answer))


class QueryUnderstanding:
    """Classifies one user message. Never raises for model trouble: it falls back to the heuristic."""

    def __init__(self, chat_model: ChatModel | None, small_model: str, *, min_scope_confidence: float = 0.5,
                 structured_outputs: str = "auto", lexicon: Lexicon | None = None) -> None:
        """`lexicon`: the dictionary the offline rewriter tells words jieba does not know with (see
        `ConversationRewriter`)."""
        if chat_model is not None and not small_model:
            raise ValueError("small_model is required with a chat model")
        if not 0.0 <= min_scope_confidence <= 1.0:
            raise ValueError("min_scope_confidence must be within [0, 1]")
        self.min_scope_confidence = min_scope_confidence
        self._meta = MetaIntentDetector()
        self._rewriter = ConversationRewriter(lexicon=lexicon)
        self._validator = RewriteValidator()
        self._heuristic = HeuristicClassifier()
        self._llm = (LlmQueryClassifier(chat_model=chat_model, model=small_model, structured_outputs=structured_outputs)
                     if chat_model else None)
        self._signals = DeterministicSignals()

    def run(self, *, message: str, history: Sequence[dict] = (),
            context: ConversationContext | None = None) -> QueryClassification:
        # The question is understood, searched and answered in Simplified characters whatever the reader
        # writes (`to_simplified`), with a verb-object word split by its count whole again as documents write it
        # (`joined_separable`: 请几天假 → 请假几天); the message itself is stored and shown as written.
        text = joined_separable(to_simplified(message.strip()))
        if not text:
            raise ValueError("message is empty")
        meta = self._meta.run(message=text)
        if meta is not None:
            return meta
        if context is None or context.is_empty:
            context = context_from_history(history)
        offline = self._rewriter.run(message=text, context=context)
        result = self._heuristic.run(message=text, rewrite=offline)
        if self._llm is not None:
            try:
                result = self._llm.run(message=text, history=history, baseline=result, context=context)
                rewritten, refused = self._validator.run(message=text, candidate=result.rewritten, offline=offline)
                if refused:
                    logger.info("model rewrite refused (%s): %r", refused, result.rewritten)
                resolved = offline.resolved if refused or rewritten == offline.text else \
                    (f"model → {rewritten}",) if rewritten != text else ()
                result = replace(result, rewritten=rewritten, resolved=resolved,
                                 unresolved_reference=result.unresolved_reference and not resolved)
            except (LlmError, ValueError) as exc:
                logger.warning("classifier fell back to the heuristic: %s", exc)
        if result.scope is not Scope.KNOWLEDGE and result.scope_confidence < self.min_scope_confidence:
            # An unsure "not a knowledge question" would skip retrieval; searching is the safer mistake.
            result = replace(result, scope=Scope.KNOWLEDGE)
        return self._signals.run(classification=result, message=text)
