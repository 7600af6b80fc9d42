"""`ChatPipeline`: one chat turn from question to `done`, as a synchronous stream of ChatEvents."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from chat.answer_cache import CachedAnswer
from chat.events import ChatEvent, error_event
from chat.models import MessageStatus
from chat.pipeline import answering, caching, curated_answers, gathering, memories, observe, payloads, trust
from chat.pipeline.interrupt import StageGuard
from chat.pipeline.stages import TurnStages, build_stages
from chat.pipeline.turn import (
    ChatInputError,
    ChatTurn,
    TurnCancelled,
    begin_turn,
    finish_turn,
    select_named_document,
)
from chat.types import (
    AnswerShape,
    Assessment,
    Intent,
    Mode,
    PathDecision,
    PromptParts,
    QueryClassification,
    Verdict,
)
from config_admin.conf import ai_config
from docmind.llm.base import LlmCancelled, LlmError, LlmTimeout, LlmTruncated, LlmUnavailable
from docmind.telemetry import span
from kb.citation_links import CitationLinks
from kb.retrieval.types import Evidence

log = logging.getLogger(__name__)

# Shown to the user in the language of their page (the turn runs with it activated).
FAILURES = {
    "llm_timeout": gettext_lazy("The model took too long to answer; try again shortly. Your question is saved."),
    "llm_unavailable": gettext_lazy("The model service is unavailable right now; try again shortly. "
                                    "Your question is saved."),
    "llm_error": gettext_lazy("The model returned an error; try again shortly. Your question is saved."),
    "internal": gettext_lazy("Internal error: the answer could not be completed. Your question is saved."),
}
TRUNCATED_NOTE = gettext_lazy("(The answer was cut off at the model's length limit and is incomplete.)")


class ChatPipeline:
    """validate → save question → understand → (meta answer | route → cache? → retrieve → assess →
    (abstain | prompt → generate → cite)) → save answer → done. Every exit saves the assistant message."""

    def __init__(self, *, stages_factory: Callable[..., TurnStages] = build_stages) -> None:
        self._stages_factory = stages_factory

    def run(self, *, user: Any, message: Any, conversation_id: Any = None, document_id: Any = None,
            kb: Any = None, regenerate: bool = False, edit: bool = False,
            cancel: threading.Event) -> Iterator[ChatEvent]:
        try:
            turn = self.start_turn(user=user, message=message, conversation_id=conversation_id,
                                   document_id=document_id, kb=kb, regenerate=regenerate, edit=edit)
        except ChatInputError as exc:
            yield error_event(exc.code, exc.message, status=exc.status)
            return
        yield from self.answer(turn, cancel=cancel)

    def start_turn(self, *, user: Any, message: Any, conversation_id: Any = None,
                   document_id: Any = None, kb: Any = None, regenerate: bool = False,
                   edit: bool = False) -> ChatTurn:
        """Validate and save the question (raises ChatInputError): SSE calls this before streaming.
        `kb` (ids, None for every readable one) becomes the turn's knowledge-base filter; `regenerate`
        answers the conversation's last question again in place of its answer; `edit` does so with `message`
        as the new text of that question."""
        return begin_turn(user=user, message=message, conversation_id=conversation_id, document_id=document_id,
                          snapshot=ai_config.snapshot(), kb=kb, regenerate=regenerate, edit=edit)

    def answer(self, turn: ChatTurn, *, cancel: threading.Event) -> Iterator[ChatEvent]:
        guard = StageGuard(cancel)
        # Reader links are the asker's own (a view grant gets none): added as events leave, never to what is
        # saved or cached, which askers of other levels read back.
        links = CitationLinks(turn.user)
        events = self._answer_guarded(turn, guard, links)
        try:
            with observe.turn_observed(turn):
                try:
                    for event in events:
                        yield payloads.with_reader_links(event, links)
                finally:
                    events.close()  # a client that leaves closes the turn inside its span, as `yield from` did
        finally:
            guard.settle()  # after the last event: stages abandoned on Stop end before the slot is freed

    def _answer_guarded(self, turn: ChatTurn, guard: StageGuard, links: CitationLinks) -> Iterator[ChatEvent]:
        try:
            yield from self._answer(turn, guard, links)
        except (TurnCancelled, LlmCancelled):
            # Stop is a normal end of a turn: one line, no traceback.
            log.info("chat turn cancelled by the client (conversation %s)", turn.conversation.pk)
            saved = finish_turn(turn, status=MessageStatus.CANCELLED, error="cancelled")
            yield error_event("cancelled", _("Cancelled."), message_id=saved.pk, **turn.ids(), **_trace(turn))
        except LlmTimeout:
            yield self._failed(turn, "llm_timeout")
        except LlmUnavailable:
            yield self._failed(turn, "llm_unavailable")
        except LlmError as exc:
            log.warning("chat turn: model error: %s", exc)
            yield self._failed(turn, "llm_error")
        except Exception:
            log.exception("chat turn failed")
            yield self._failed(turn, "internal")

    def _answer(self, turn: ChatTurn, guard: StageGuard, links: CitationLinks) -> Iterator[ChatEvent]:
        stages = self._stages_factory(turn.snapshot, kb_ids=turn.kb_ids)
        record = turn.record
        classification: QueryClassification = self._timed(turn, "understanding", lambda: guard.call(
            lambda: stages.understanding.run(message=turn.question, history=turn.history, context=turn.context),
            name="understanding"))
        record.classification = classification
        yield payloads.understanding(classification, record.timings_ms["understanding"])
        guard.check()
        if not classification.scope.needs_retrieval:
            yield from self._meta_answer(turn, stages, classification, guard)
            return
        named = classification.intent is Intent.SUMMARY and select_named_document(turn, classification.rewritten)
        with span("chat.routing"):
            decision = gathering.route(stages, classification, turn.document_id)
        if named and decision.mode is Mode.SELECTED_DOC:
            decision = replace(decision, reason=_("the question names the document “%(title)s”: reading it")
                               % {"title": turn.document_title})
        record.route = decision
        yield payloads.routing(decision)
        with span("chat.curated"):
            curated = guard.call(lambda: curated_answers.curated_probe(turn, classification), name="curated")
        if curated is not None:
            yield from self._curated(turn, stages, curated, guard)
            return

        memory = self._timed(turn, "memory", lambda: guard.call(
            lambda: memories.recall_memories(stages, turn, classification), name="memory"))
        # An answer made with other memories of the user is not reused.
        # Nor one made with another set of readable knowledge bases (a revoked grant changes the set).
        cache_scope = ((f"doc{turn.document_id}" if turn.document_id else "kb") + ":"
                       + ",".join(map(str, sorted(turn.kb_ids))) + memory.cache_tag)
        with span("chat.cache.lookup"):
            probe = guard.call(lambda: caching.cache_probe(stages, turn, classification, cache_scope), name="cache")
        if probe.vector is not None:
            observe.cache_lookup(probe.hit is not None)
        if probe.hit is not None:
            yield from self._replay(turn, stages, decision, probe.hit, guard, links)
            return
        with span("chat.retrieval", {"docmind.route": decision.mode.value}):
            evidence = yield from gathering.retrieve(stages, turn, classification, decision, guard)
        guard.check()
        record.evidence = evidence
        # The evidence is the asker's to see only as far as it may read each original (see kb.citation_links).
        yield payloads.retrieval(evidence, links=links)
        yield payloads.rerank(evidence)
        yield payloads.grader(evidence)
        assessment = trust.assess(stages, classification, decision, evidence)
        record.assessment = assessment
        if assessment.no_evidence:
            yield from self._abstain(turn, stages, evidence, assessment, guard)
            return

        shape = answering.answer_shape(classification, decision)
        prompt = self._timed(turn, "prompt", lambda: guard.call(
            lambda: answering.assemble(stages, turn, evidence, assessment, shape, memory), name="prompt"))
        question = classification.rewritten or turn.question
        sides = answering.comparison_sides(shape, question)
        written = None
        if stages.extractive:
            with turn.record.timed("generation"), span("chat.generation"):
                assessment, prompt, written = guard.call(lambda: self._labelled_as_written(
                    stages, assessment, prompt, evidence, question, shape, sides), name="generation")
            record.assessment = assessment
        record.prompt = prompt
        sources = answering.with_revisions(payloads.source_cards(prompt.chunks))
        record.sources, record.extractive = sources, stages.extractive
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=sources,
                             low_confidence=assessment.low_confidence, mode=decision.mode.value)
        try:
            if written is not None:
                yield from self._stream(turn, lambda: stages.generator.pieces(written), guard)
            else:
                yield from self._generate(turn, lambda: stages.generator.run(prompt=prompt, question=question,
                                                                             shape=shape, sides=sides), guard)
        except LlmTruncated:
            # What was streamed stays, said to be cut: it is saved as such, badged low and never cached.
            turn.record.truncated = True
            note = "\n\n" + str(TRUNCATED_NOTE)
            turn.answer += note
            yield payloads.token(note)
        assessment = trust.reassess(stages, assessment, turn.answer, question, evidence)
        record.assessment = assessment
        with span("chat.citations"):
            report = answering.cite(stages, turn.answer, prompt, evidence, assessment, question)
        result = report.as_dict()
        if turn.record.truncated:
            result.update(truncated=True, confidence_band="low" if result.get("confidence_band") else "")
        done = self._done(turn, stages, result, error="truncated" if turn.record.truncated else "")
        with span("chat.cache.store"):
            caching.cache_store(stages, turn, classification, cache_scope, probe, evidence, prompt, sources,
                                report.as_dict())
        yield done

    def _replay(self, turn: ChatTurn, stages: TurnStages, decision: PathDecision, hit: CachedAnswer,
                guard: StageGuard, links: CitationLinks) -> Iterator[ChatEvent]:
        """A semantic-cache hit streams the same events, with the cached evidence and answer."""
        evidence = caching.cached_evidence(hit)
        turn.record.evidence = evidence
        turn.record.cached_question = hit.question
        turn.record.sources = hit.sources
        yield payloads.retrieval(evidence, links=links, cached=True)
        yield payloads.rerank(evidence)
        yield payloads.grader(evidence)
        yield payloads.start(extractive=hit.extractive, model=hit.model, sources=hit.sources,
                             low_confidence=hit.low_confidence, cached=True, mode=decision.mode.value)
        yield from self._generate(turn, lambda: answering.replay_tokens(hit.answer), guard)
        yield self._done(turn, stages, hit.report)

    def _curated(self, turn: ChatTurn, stages: TurnStages, curated: curated_answers.CuratedAnswer,
                 guard: StageGuard) -> Iterator[ChatEvent]:
        """An editor's answer to this question: streamed as written, labelled with its author and date, citing
        the documents it names that the asker may read."""
        turn.record.curated = curated.as_dict()
        turn.record.sources = curated.sources
        yield payloads.start(extractive=False, model="curated", sources=curated.sources, mode="CURATED",
                             curated=curated.label())
        yield from self._generate(turn, lambda: answering.replay_tokens(curated.answer), guard)
        yield self._done(turn, stages, {"citations": curated.citations(), "citation_coverage": None,
                                        "invalid_refs": [], "confidence_score": 1.0, "confidence_band": "high",
                                        "curated": curated.label()})

    def _meta_answer(self, turn: ChatTurn, stages: TurnStages, classification: QueryClassification,
                     guard: StageGuard) -> Iterator[ChatEvent]:
        """Greetings, help, KB meta, memory questions: no retrieval events (see chat.events)."""
        turn.record.meta_scope = classification.scope.value
        yield payloads.meta_routing(classification.scope.value)
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=[], mode="META")
        yield from self._generate(turn, lambda: answering.meta_tokens(stages, turn, classification), guard)
        yield self._done(turn, stages, {"citations": [], "citation_coverage": None, "invalid_refs": [],
                                "confidence_score": None, "confidence_band": ""})

    def _abstain(self, turn: ChatTurn, stages: TurnStages, evidence: Evidence, assessment: Assessment,
                 guard: StageGuard) -> Iterator[ChatEvent]:
        """The evidence does not answer the question: say so, in the question's language, rather than let
        a model improvise or quote what is merely nearby; the closest sources are shown as related."""
        related = payloads.related_cards(answering.related_chunks(evidence))
        turn.record.sources, turn.record.extractive = related, stages.extractive
        yield payloads.start(extractive=stages.extractive, model=stages.main_model, sources=related,
                             no_evidence=True, mode=turn.record.route.mode.value if turn.record.route else "")
        text = answering.abstention_text(turn.question, related)
        yield from self._generate(turn, lambda: iter([text]), guard)
        yield self._done(turn, stages, {"citations": [], "citation_coverage": None, "invalid_refs": [],
                                "confidence_score": round(assessment.score, 4), "confidence_band": "none"})

    @staticmethod
    def _labelled_as_written(stages: TurnStages, assessment: Assessment, prompt: PromptParts, evidence: Evidence,
                             question: str, shape: AnswerShape,
                             sides: tuple[str, ...]) -> tuple[Assessment, PromptParts, str]:
        """The offline answer, written before it streams, with its assessment and prompt: a quote whose badge will be
        low (the calibrator's reading of what it says and cites) carries the low-relevance label from the start,
        in its lead and in `start`, instead of a plain lead under a low badge. Rewritten only then."""
        written = stages.generator.written(prompt=prompt, question=question, shape=shape, sides=sides)
        if assessment.low_confidence or assessment.no_evidence:
            return assessment, prompt, written
        coverage = answering.citation_coverage(stages, written, prompt, evidence, question)
        if not stages.calibrator.reads_low(trust.reassess(stages, assessment, written, question, evidence), coverage):
            return assessment, prompt, written
        prompt = replace(prompt, low_confidence=True)
        written = stages.generator.written(prompt=prompt, question=question, shape=shape, sides=sides)
        return replace(assessment, verdict=Verdict.LOW), prompt, written

    def _generate(self, turn: ChatTurn, produce: Callable[[], Iterator[str]],
                  guard: StageGuard) -> Iterator[ChatEvent]:
        with turn.record.timed("generation"), span("chat.generation"):
            yield from self._stream(turn, produce, guard)

    @staticmethod
    def _stream(turn: ChatTurn, produce: Callable[[], Iterator[str]], guard: StageGuard) -> Iterator[ChatEvent]:
        # On a helper thread: Stop ends the turn even while the model is silent before its next token.
        for piece in guard.iterate(produce, name="generation"):
            if piece:
                turn.answer += piece
                yield payloads.token(piece)

    def _done(self, turn: ChatTurn, stages: TurnStages, report: Mapping[str, Any], *, error: str = "") -> ChatEvent:
        saved = finish_turn(turn, citations=list(report.get("citations", [])), error=error,
                            confidence_score=report.get("confidence_score"),
                            confidence_band=str(report.get("confidence_band") or ""))
        memories.schedule_memory_extraction(turn, stages)  # runs on a worker: the answer never waits for it
        turn.record.report = dict(report)
        return payloads.done(answer=turn.answer, report=report, conversation_id=turn.conversation.pk,
                             message_id=saved.pk, question_id=turn.question_message.pk,
                             timings_ms=turn.record.timings_ms, trace_id=turn.record.trace_id,
                             usage=turn.record.usage or None)

    def _failed(self, turn: ChatTurn, code: str) -> ChatEvent:
        message = str(FAILURES[code])
        saved = finish_turn(turn, status=MessageStatus.ERROR, error=f"{code}: {message}")
        return error_event(code, message, message_id=saved.pk, **turn.ids(), **_trace(turn))

    @staticmethod
    def _timed(turn: ChatTurn, name: str, call: Callable[[], Any]) -> Any:
        with turn.record.timed(name), span(f"chat.{name}"):
            return call()




def _trace(turn: ChatTurn) -> dict[str, str]:
    """The turn's trace id for an `error` event, as `done` carries it: the failure is what one looks up."""
    return {"trace_id": turn.record.trace_id} if turn.record.trace_id else {}
