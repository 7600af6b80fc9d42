"""A knowledge turn's evidence: route, then direct read, agentic loop or one-shot; the one step that streams events."""
from __future__ import annotations

import logging
import queue
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from django.db import connections

from chat.agentic import factory
from chat.agentic.types import AgenticCancelled
from chat.events import ChatEvent
from chat.other_language import own_language_gap
from chat.pipeline.interrupt import StageGuard
from chat.pipeline.record import AgenticRecord
from chat.pipeline.stages import TurnStages
from chat.pipeline.turn import ChatTurn
from chat.types import Mode, PathDecision, QueryClassification
from docmind.telemetry import span
from kb import selectors
from kb.retrieval.types import Evidence, Grade, GradeResult, ScoredChunk
from memory.turn import recall_tool

log = logging.getLogger(__name__)


def route(stages: TurnStages, classification: QueryClassification, document_id: int | None) -> PathDecision:
    # Whether the agentic loop is enabled is the router's decision alone (it was built with the flag).
    return stages.router.run(classification=classification, selected_document_id=document_id)


def retrieve(stages: TurnStages, turn: ChatTurn, classification: QueryClassification, decision: PathDecision,
             guard: StageGuard) -> Generator[ChatEvent, None, Evidence]:
    """Evidence for the answer (a generator because the agentic loop streams `agentic` events).

    Each search runs under `guard`: Stop ends the turn while a search is still running.
    """
    with turn.record.timed("retrieval"):
        if decision.mode is Mode.SELECTED_DOC and turn.document_id is not None:
            document_id, kb_ids = turn.document_id, turn.kb_ids
            return guard.call(lambda: direct_read(stages, document_id, kb_ids), name="direct-read")
        if decision.mode is Mode.AGENTIC:
            evidence = yield from agentic(stages, turn, classification, guard)
            if evidence is not None:
                return evidence
            turn.record.agentic_fallback = "agentic loop failed or found nothing: one-shot retrieval"
        return guard.call(lambda: one_shot(stages, turn, classification), name="retrieval")


def one_shot(stages: TurnStages, turn: ChatTurn, classification: QueryClassification) -> Evidence:
    # A selected document that the question does not ask to read still narrows the search to it.
    ids = [turn.document_id] if turn.document_id is not None else None
    query = classification.rewritten or turn.question
    with span("retrieval.one_shot"):
        evidence = stages.retriever.run(query=query, document_ids=ids)
        gap = own_language_gap(query, evidence.chunks)
        if gap is None:
            return evidence
        again = stages.retriever.run_across(query=query, document_ids=ids)
        if again is None:
            return evidence
        if not gap.closed_by(query, again.chunks):
            return replace(evidence, trace=(*evidence.trace, "searched the other language too; it did not state "
                                                             "what the question's own language left unsaid"))
        return replace(again, trace=(*again.trace, "searched the other language too: it states what the question's "
                                                   "own language left unsaid"))


def direct_read(stages: TurnStages, document_id: int, kb_ids: frozenset[int]) -> Evidence:
    with span("retrieval.direct_read", {"docmind.document_id": document_id}):
        return _direct_read(stages, document_id, kb_ids)


def _direct_read(stages: TurnStages, document_id: int, kb_ids: frozenset[int]) -> Evidence:
    parents = selectors.document_parent_chunks(document_id=document_id, kb_ids=kb_ids)
    chunks = [ScoredChunk(chunk_id=str(c.pk), content=c.content, score=1.0, document_id=c.document_id,
                          document_title=c.document.title, domain=c.document.domain, parent_id=c.pk,
                          location=c.location)
              for c in parents]
    picked = stages.direct_reader().run(chunks=chunks)
    grade = GradeResult(grade=Grade.HIGH if picked else Grade.LOW, rerank_top1=1.0 if picked else 0.0,
                        lex_coverage=1.0 if picked else 0.0, kb_entity_weak=False, web_compensation_needed=False,
                        reason="direct read of the selected document")
    return Evidence(chunks=picked, grade=grade, trace=(f"direct read: {len(picked)} of {len(chunks)} parts",))


def agentic(stages: TurnStages, turn: ChatTurn, classification: QueryClassification,
            guard: StageGuard) -> Generator[ChatEvent, None, Evidence | None]:
    """Runs the agentic loop on a helper thread and streams what it emits.

    Returns the loop's evidence, or None (any exception, empty result) so the caller falls back
    to one-shot retrieval, as the design requires. Stop raises TurnCancelled at once; the loop
    notices the flag at its next check and ends on its own.
    """
    emitted: queue.Queue[ChatEvent] = queue.Queue()
    outcome: dict[str, Any] = {}
    cancel = guard.cancel

    def work() -> None:
        try:
            with span("agentic.loop"):
                orchestrator = factory.build_orchestrator(snapshot=stages.snapshot, chat_model=stages.chat_model,
                                                          kb_ids=stages.kb_ids, params=stages.retrieval_params,
                                                          owner=turn.user.pk)
                outcome["result"] = orchestrator.run(question=turn.question, classification=classification,
                                                     history=turn.history, emit=emitted.put, cancel=cancel,
                                                     recall_memory=recall_tool(user_id=turn.user.pk,
                                                                               params=stages.memory))
        except AgenticCancelled as exc:  # the user pressed Stop or left: the turn logs that once
            log.debug("agentic loop stopped: %s", exc)
            outcome["error"] = exc
        except Exception as exc:  # noqa: BLE001 - the design says: any failure → one-shot
            log.warning("agentic loop failed, falling back to one-shot", exc_info=True)
            outcome["error"] = exc
        finally:
            connections.close_all()  # this helper thread's own connections die with it

    thread = guard.start(work, name="agentic")
    while thread.is_alive() or not emitted.empty():
        guard.check()
        try:
            yield emitted.get(timeout=0.05)
        except queue.Empty:
            continue
    guard.check()
    result = outcome.get("result")
    if "error" in outcome:  # the stored trace says why the loop fell back (AgenticEmpty, ToolFailed…)
        turn.record.agentic_fallback_reason = f"{outcome['error'].__class__.__name__}: {outcome['error']}"[:500]
    if result is None or not result.evidence.chunks:
        return None
    turn.record.agentic = AgenticRecord(tool_calls=list(result.tool_calls), used_web=result.used_web,
                                        trace=list(result.trace))
    turn.record.computations = list(result.computations)
    return result.evidence
