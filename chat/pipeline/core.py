"""`ChatPipeline`: one chat turn from question to `done`, as a synchronous stream of ChatEvents."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from chat.answer_cache import CachedAnswer
from chat.events import ChatEvent, error_event
from chat.models import MessageStatus
from chat.pipeline import payloads, steps
from chat.pipeline.stages import TurnStages, build_stages
from chat.pipeline.turn import ChatInputError, ChatTurn, TurnCancelled, begin_turn, finish_turn
from config_admin.conf import ai_config
from docmind.llm.base import LlmCancelled, LlmError, LlmTimeout, LlmUnavailable

log = logging.getLogger(__name__)

NO_EVIDENCE_ANSWER = "知识库中没有找到与这个问题相关的内容。可以换个说法，或上传相关文档后再问。"


class ChatPipeline:
    """validate → save question → understand → (meta answer | route → cache? → retrieve → prompt →
    generate → cite) → save answer → done. Every exit saves the assistant message."""

    def __init__(self, *, stages_factory: Callable[[Mapping[str, Any]], TurnStages] = build_stages) -> None:
        self._stages_factory = stages_factory

    def run(self, *, user: Any, message: Any, conversation_id: Any = None, document_id: Any = None,
            cancel: threading.Event) -> Iterator[ChatEvent]:
        try:
            turn = self.start_turn(user=user, message=message, conversation_id=conversation_id,
                                   document_id=document_id)
        except ChatInputError as exc:
            yield error_event(exc.code, exc.message, status=exc.status)
            return
        yield from self.answer(turn, cancel=cancel)

    def start_turn(self, *, user: Any, message: Any, conversation_id: Any = None,
                   document_id: Any = None) -> ChatTurn:
        """Validate and save the question (raises ChatInputError): SSE calls this before streaming."""
        return begin_turn(user=user, message=message, conversation_id=conversation_id, document_id=document_id,
                          snapshot=ai_config.snapshot())

    def answer(self, turn: ChatTurn, *, cancel: threading.Event) -> Iterator[ChatEvent]:
        try:
            yield from self._answer(turn, cancel)
        except (TurnCancelled, LlmCancelled):
            saved = finish_turn(turn, status=MessageStatus.CANCELLED, error="cancelled")
            yield error_event("cancelled", "已取消。", message_id=saved.pk, **turn.ids())
        except LlmTimeout:
            yield self._failed(turn, "llm_timeout", "模型响应超时，请稍后重试。你的问题已保存。")
        except LlmUnavailable:
            yield self._failed(turn, "llm_unavailable", "模型服务暂时不可用，请稍后重试。你的问题已保存。")
        except LlmError as exc:
            log.warning("chat turn: model error: %s", exc)
            yield self._failed(turn, "llm_error", "模型返回了错误，请稍后重试。你的问题已保存。")
        except Exception:
            log.exception("chat turn failed")
            yield self._failed(turn, "internal", "内部错误，回答未能完成。你的问题已保存。")

    def _answer(self, turn: ChatTurn, cancel: threading.Event) -> Iterator[ChatEvent]:
        stages = self._stages_factory(turn.snapshot)
        classification = self._timed(turn, "understanding", lambda: stages.understanding.run(
            message=turn.question, history=turn.history))
        turn.log["classification"] = classification.as_dict()
        yield payloads.understanding(classification, turn.log["timings_ms"]["understanding"])
        self._check(cancel)
        if not classification.scope.needs_retrieval:
            yield from self._meta_answer(turn, stages, classification, cancel)
            return
        decision = steps.route(stages, classification, turn.document_id)
        turn.log["route"] = decision.as_dict()
        yield payloads.routing(decision)

        memory = self._timed(turn, "memory", lambda: steps.recall_memories(stages, turn, classification))
        # An answer made with other memories of the user is not reused.
        cache_scope = (f"doc{turn.document_id}" if turn.document_id else "kb") + memory.cache_tag
        probe = steps.cache_probe(stages, turn, classification, cache_scope)
        if probe.hit is not None:
            yield from self._replay(turn, stages, probe.hit, cancel)
            return
        evidence = yield from steps.retrieve(stages, turn, classification, decision, cancel)
        self._check(cancel)
        turn.log.update(payloads.evidence_log(evidence))
        yield payloads.retrieval(evidence)
        yield payloads.rerank(evidence)
        yield payloads.grader(evidence)
        if evidence.needs_fallback:
            yield from self._no_evidence(turn, stages, cancel)
            return

        prompt = self._timed(turn, "prompt", lambda: steps.assemble(stages, turn, evidence, memory))
        turn.log["prompt"] = {"tokens": dict(prompt.tokens), "notes": list(prompt.notes),
                              "lowConfidence": prompt.low_confidence}
        sources = payloads.source_cards(prompt.chunks)
        turn.log["sources"] = sources
        turn.log["extractive"] = stages.extractive
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=sources,
                             low_confidence=prompt.low_confidence, mode=decision.mode.value)
        yield from self._generate(turn, lambda: stages.generator.run(prompt=prompt, question=turn.question), cancel)

        report = stages.citations.run(answer=turn.answer, chunks=list(prompt.chunks),
                                      rerank_top1=evidence.grade.rerank_top1, grade=evidence.grade).as_dict()
        done = self._done(turn, report)
        steps.cache_store(stages, turn, classification, cache_scope, probe, evidence, prompt, sources, report)
        yield done

    def _replay(self, turn: ChatTurn, stages: TurnStages, hit: CachedAnswer,
                cancel: threading.Event) -> Iterator[ChatEvent]:
        """A semantic-cache hit streams the same events, with the cached evidence and answer."""
        evidence = steps.cached_evidence(hit)
        turn.log.update(payloads.evidence_log(evidence))
        turn.log["cache"] = {"hit": True, "question": hit.question}
        turn.log["sources"] = hit.sources
        yield payloads.retrieval(evidence, cached=True)
        yield payloads.rerank(evidence)
        yield payloads.grader(evidence)
        yield payloads.start(extractive=hit.extractive, model=hit.model, sources=hit.sources,
                             low_confidence=hit.low_confidence, cached=True, mode=turn.log["route"]["mode"])
        yield from self._generate(turn, lambda: steps.replay_tokens(hit.answer), cancel)
        yield self._done(turn, hit.report)

    def _meta_answer(self, turn: ChatTurn, stages: TurnStages, classification: Any,
                     cancel: threading.Event) -> Iterator[ChatEvent]:
        """Greetings, help, KB meta, memory questions: no retrieval events (see chat.events)."""
        turn.log["route"] = {"mode": "META", "scope": classification.scope.value}
        yield payloads.meta_routing(classification.scope.value)
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=[], mode="META")
        yield from self._generate(turn, lambda: steps.meta_tokens(stages, turn, classification), cancel)
        yield self._done(turn, {"citations": [], "citationCoverage": None, "invalidRefs": [],
                                "confidenceScore": None, "confidenceBand": ""})

    def _no_evidence(self, turn: ChatTurn, stages: TurnStages, cancel: threading.Event) -> Iterator[ChatEvent]:
        """needsFallback: nothing at all was found, so say so rather than let a model improvise."""
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=[], no_evidence=True)
        yield from self._generate(turn, lambda: iter([NO_EVIDENCE_ANSWER]), cancel)
        yield self._done(turn, {"citations": [], "citationCoverage": None, "invalidRefs": [],
                                "confidenceScore": 0.0, "confidenceBand": "none"})

    def _generate(self, turn: ChatTurn, produce: Callable[[], Iterator[str]],
                  cancel: threading.Event) -> Iterator[ChatEvent]:
        started = time.monotonic()
        for piece in produce():
            self._check(cancel)  # between tokens: a client that left stops the model stream
            if piece:
                turn.answer += piece
                yield payloads.token(piece)
        turn.log.setdefault("timings_ms", {})["generation"] = round((time.monotonic() - started) * 1000, 1)

    def _done(self, turn: ChatTurn, report: Mapping[str, Any]) -> ChatEvent:
        saved = finish_turn(turn, citations=list(report.get("citations", [])),
                            confidence_score=report.get("confidenceScore"),
                            confidence_band=str(report.get("confidenceBand") or ""))
        steps.schedule_memory_extraction(turn)  # runs on a worker: the answer never waits for it
        turn.log["report"] = {k: v for k, v in report.items() if k != "citations"}
        return payloads.done(answer=turn.answer, report=report, conversation_id=turn.conversation.pk,
                             message_id=saved.pk, question_id=turn.question_message.pk,
                             timings_ms=turn.log.get("timings_ms", {}))

    def _failed(self, turn: ChatTurn, code: str, message: str) -> ChatEvent:
        saved = finish_turn(turn, status=MessageStatus.ERROR, error=f"{code}: {message}")
        return error_event(code, message, message_id=saved.pk, **turn.ids())

    @staticmethod
    def _check(cancel: threading.Event) -> None:
        if cancel.is_set():
            raise TurnCancelled

    @staticmethod
    def _timed(turn: ChatTurn, name: str, call: Callable[[], Any]) -> Any:
        started = time.monotonic()
        try:
            return call()
        finally:
            turn.log.setdefault("timings_ms", {})[name] = round((time.monotonic() - started) * 1000, 1)


