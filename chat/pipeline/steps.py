"""The steps of a knowledge turn that need more than one stage call: routing, retrieval, prompt, cache."""
from __future__ import annotations

import logging
import queue
import re
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import connections
from django.utils.translation import gettext as _

from chat.answer_cache import CachedAnswer, CacheProbe
from chat.events import ChatEvent
from chat.generation.abstention import abstention
from chat.pipeline.interrupt import StageGuard
from chat.pipeline.record import AgenticRecord
from chat.pipeline.stages import TurnStages
from chat.pipeline.turn import ChatTurn
from chat.prompt.templates import SHAPE_INSTRUCTIONS
from chat.types import (
    AnswerShape,
    Assessment,
    CitationReport,
    Intent,
    Mode,
    PathDecision,
    PromptParts,
    QueryClassification,
    Verdict,
)
from chat.understanding.comparison import comparison_sides as _sides
from docmind.telemetry import span
from kb.access import key_scope
from kb.retrieval.types import Evidence, Grade, GradeResult, ScoredChunk, Source
from memory.scope import memory_scope_reply
from memory.turn import TurnMemory, recall_for_turn, recall_tool, schedule_extraction

log = logging.getLogger(__name__)

REPLAY_CHARS = 6
RELATED_SOURCES = 3


def route(stages: TurnStages, classification: QueryClassification, document_id: int | None) -> PathDecision:
    # Whether the agentic loop is enabled is the router's decision alone (it was built with the flag).
    return stages.router.run(classification=classification, selected_document_id=document_id)


def retrieve(stages: TurnStages, turn: ChatTurn, classification: QueryClassification, decision: PathDecision,
             guard: StageGuard) -> Generator[ChatEvent, None, Evidence]:
    """Evidence for the answer (a generator because the agentic loop streams `agentic` events).

    Each search runs under `guard`: Stop ends the turn while a search is still running.
    """
    started = time.monotonic()
    try:
        if decision.mode is Mode.SELECTED_DOC and turn.document_id is not None:
            document_id, kb_ids = turn.document_id, turn.kb_ids
            return guard.call(lambda: direct_read(stages, document_id, kb_ids), name="direct-read")
        if decision.mode is Mode.AGENTIC:
            evidence = yield from agentic(stages, turn, classification, guard)
            if evidence is not None:
                return evidence
            turn.record.agentic_fallback = "agentic loop failed or found nothing: one-shot retrieval"
        return guard.call(lambda: one_shot(stages, turn, classification), name="retrieval")
    finally:
        turn.record.timings_ms["retrieval"] = round((time.monotonic() - started) * 1000, 1)


def one_shot(stages: TurnStages, turn: ChatTurn, classification: QueryClassification) -> Evidence:
    # A selected document that the question does not ask to read still narrows the search to it.
    ids = [turn.document_id] if turn.document_id is not None else None
    with span("retrieval.one_shot"):
        return stages.retriever.run(query=classification.rewritten or turn.question, document_ids=ids)


def direct_read(stages: TurnStages, document_id: int, kb_ids: frozenset[int]) -> Evidence:
    with span("retrieval.direct_read", {"docmind.document_id": document_id}):
        return _direct_read(stages, document_id, kb_ids)


def _direct_read(stages: TurnStages, document_id: int, kb_ids: frozenset[int]) -> Evidence:
    from kb import selectors

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
    from chat.agentic import factory
    from chat.agentic.types import AgenticCancelled

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


def recall_memories(stages: TurnStages, turn: ChatTurn, classification: QueryClassification) -> TurnMemory:
    """The user's long-term memories for this question (vector recall checked against the record + standing)."""
    memory = recall_for_turn(user_id=turn.user.pk, query=classification.rewritten or turn.question,
                             params=stages.memory, memory_aware=bool(classification.memory_aware))
    turn.record.memory = memory
    return memory


def schedule_memory_extraction(turn: ChatTurn, stages: TurnStages) -> None:
    """After `done`: what the user said about themselves becomes memories (MEMORY-scope turns did it already)."""
    from docmind.backends import get_chat_model

    classification = turn.record.classification
    if classification is None or classification.scope.value == "MEMORY" or not turn.answer:
        return
    schedule_extraction(user_id=turn.user.pk, message=turn.question,
                        hints=list(classification.memory_write_hints), params=stages.memory,
                        chat_model=get_chat_model())


def assess(stages: TurnStages, classification: QueryClassification, decision: PathDecision,
           evidence: Evidence) -> Assessment:
    """Whether the evidence answers the question. A selected document the user asked to read answers
    "summarise this" by definition: only its absence is a reason to abstain."""
    if decision.mode is Mode.SELECTED_DOC and evidence.chunks:
        return Assessment(score=1.0, verdict=Verdict.ANSWER)
    assessment = stages.calibrator.run(question=assessed_question(classification.rewritten),
                                       chunks=evidence.chunks, grade=evidence.grade,
                                       unnamed_subject=classification.unresolved_reference)
    if assessment.no_evidence and evidence.chunks and not stages.extractive:
        # A model reads evidence the lexical signals cannot score (another language, other words): weak
        # evidence goes to it under the low-confidence prompt, which has it say what the documents do not
        # cover. Only the offline answerer, which can but quote, abstains.
        return replace(assessment, verdict=Verdict.LOW)
    return assessment


_CLAUSES = re.compile(r"[^，,；;：:]+[，,；;：:]?")
_ABOUT_THE_ASKER = re.compile(r"^\s*(?:我|本人|根据我|按我|结合我|以我|i\b|i'm\b|my\b)", re.I)


def assessed_question(question: str) -> str:
    """The question without its clauses about the asker ("我刚调到深圳分公司，年假有多少天？" → "年假有多少天？").

    Whether the documents answer a question does not depend on what the user says about themselves
    (that is for memory), but those words count as unmatched terms. A question that is all about the
    asker is kept whole."""
    clauses = [c for c in _CLAUSES.findall(question) if c.strip()]
    kept = [c for c in clauses if not _ABOUT_THE_ASKER.search(c)]
    if not kept or len(kept) == len(clauses):
        return question
    return "".join(kept).strip()


def answer_shape(classification: QueryClassification, decision: PathDecision) -> AnswerShape:
    if decision.mode is Mode.SELECTED_DOC:
        return AnswerShape.SUMMARY
    return {Intent.COMPARISON: AnswerShape.COMPARISON, Intent.HOW_TO: AnswerShape.STEPS}.get(
        classification.intent, AnswerShape.FACTS)


def comparison_sides(shape: AnswerShape, question: str) -> tuple[str, ...]:
    return _sides(question) if shape is AnswerShape.COMPARISON else ()


def assemble(stages: TurnStages, turn: ChatTurn, evidence: Evidence, assessment: Assessment,
             shape: AnswerShape, memory: TurnMemory | None = None) -> PromptParts:
    memory = memory or TurnMemory()
    rewritten = turn.record.classification.rewritten if turn.record.classification else turn.question
    # The model sees the question as asked and, for a follow-up, what it was understood to mean.
    question = turn.question if rewritten == turn.question else f"{turn.question}\n（结合上文，即：{rewritten}）"
    prompt = stages.assembler.run(question=question, chunks=list(evidence.chunks), grade=evidence.grade,
                                  history=turn.history, memories=list(memory.lines),
                                  computations=turn.record.computations, profile=memory.profile,
                                  history_summarizer=stages.summarizer, low_confidence=assessment.low_confidence,
                                  instructions=SHAPE_INSTRUCTIONS.get(shape.value, ""))
    return replace(prompt, answer_style=memory.style, memory_applied=memory.applied)


def reassess(stages: TurnStages, assessment: Assessment, answer: str, question: str,
             evidence: Evidence) -> Assessment:
    """The assessment of the written answer (what it says about what was asked), not only of its evidence."""
    return stages.calibrator.on_answer(assessment=assessment, answer=answer, question=assessed_question(question),
                                       chunks=evidence.chunks)


def cite(stages: TurnStages, answer: str, prompt: PromptParts, evidence: Evidence,
         assessment: Assessment, question: str = "") -> CitationReport:
    """Citations and coverage from the parser; score and band from the calibrated assessment."""
    report = stages.citations.run(answer=answer, chunks=list(prompt.chunks), rerank_top1=evidence.grade.rerank_top1,
                                  grade=evidence.grade, question=question)
    score, band = stages.calibrator.finish(assessment=assessment, citation_coverage=report.citation_coverage)
    return replace(report, confidence_score=score, confidence_band=band)


def related_chunks(evidence: Evidence) -> list[ScoredChunk]:
    """One chunk per document, best first: the closest the knowledge base came."""
    seen: set[int | str | None] = set()
    picked = []
    for chunk in evidence.chunks:
        key = chunk.document_id if chunk.document_id is not None else chunk.url
        if key not in seen:
            seen.add(key)
            picked.append(chunk)
    return picked[:RELATED_SOURCES]


def abstention_text(question: str, related: list[dict]) -> str:
    titles = [str(card.get("document_title") or card.get("url") or "") for card in related]
    return abstention(question=question, related_titles=titles)


def meta_tokens(stages: TurnStages, turn: ChatTurn, classification: QueryClassification) -> Iterator[str]:
    from kb import selectors

    scope = classification.scope.value
    # Only the scope that talks about them reads them: a greeting needs neither list.
    if scope == "MEMORY" and key_scope(turn.user) is not None:
        # An API key is shared by all its callers (a widget's visitors): none may list or forget its creator's
        # memories.
        yield _("Memories are not available through an API key.")
        return
    if scope == "MEMORY":
        yield memory_scope_reply(user_id=turn.user.pk, message=turn.question, params=stages.memory,
                                 hints=classification.memory_write_hints, chat_model=stages.chat_model)
        return
    documents = selectors.ready_documents(kb_ids=turn.kb_ids) if scope == "KB_META" else []
    answer = stages.meta().run(classification=classification, message=turn.question, documents=documents)
    if isinstance(answer, str):
        yield answer
    else:
        yield from answer


def replay_tokens(answer: str) -> Iterator[str]:
    for i in range(0, len(answer), REPLAY_CHARS):
        yield answer[i:i + REPLAY_CHARS]


def cache_probe(stages: TurnStages, turn: ChatTurn, classification: QueryClassification, scope: str) -> CacheProbe:
    if not stages.answer_cache.enabled or turn.history or turn.regenerate:
        # Follow-up questions depend on the conversation, so their answers are not reusable; a question asked
        # to be answered again wants a new answer, not the stored one replayed.
        return CacheProbe(vector=None)
    from kb.selectors import kb_version

    turn.record.kb_version = kb_version()
    return stages.answer_cache.lookup(user_id=turn.user.pk, kb_version=turn.record.kb_version, scope=scope,
                                      query=classification.rewritten or turn.question)


def cache_store(stages: TurnStages, turn: ChatTurn, classification: QueryClassification, scope: str,
                probe: CacheProbe, evidence: Evidence, prompt: PromptParts, sources: list[dict],
                report: dict[str, Any]) -> None:
    # A weakly supported answer is not worth repeating to the next asker (abstentions never get here).
    # Nor is a reply cut at the model's token limit.
    if probe.vector is None or not turn.answer or turn.record.kb_version is None or prompt.low_confidence \
            or turn.record.truncated:
        return
    stages.answer_cache.store(
        user_id=turn.user.pk, kb_version=turn.record.kb_version, scope=scope, probe=probe,
        answer=CachedAnswer(
            question=turn.question, answer=turn.answer, classification=classification.as_dict(),
            # The child's own text too: a replay gives an asker who may not read the original only that snippet.
            chunks=[{**c.as_dict(), "child_content": c.child_content} for c in evidence.chunks],
            grade=evidence.grade.as_dict(), sources=sources,
            report=report, model=stages.main_model, extractive=stages.extractive,
            low_confidence=bool(prompt.low_confidence)),
    )


def cached_evidence(hit: CachedAnswer) -> Evidence:
    chunks = tuple(ScoredChunk(chunk_id=c["chunk_id"], content=c["content"], score=float(c["score"]),
                               source=Source(c["source"]), document_id=c["document_id"],
                               document_title=c["document_title"], domain=c["domain"], url=c.get("url"),
                               location=c.get("location"), child_content=c.get("child_content"))
                   for c in hit.chunks)
    g = hit.grade
    grade = GradeResult(grade=Grade(g["grade"]), rerank_top1=float(g["rerankTop1"]),
                        lex_coverage=float(g["lexCoverage"]), kb_entity_weak=bool(g["kbEntityWeak"]),
                        web_compensation_needed=bool(g["webCompensationNeeded"]), reason=g.get("reason", ""))
    return Evidence(chunks=chunks, grade=grade, trace=("semantic answer cache hit",))


@dataclass(frozen=True)
class CuratedAnswer:
    """A curated pair that answers the turn, with the documents it names that the asker may read."""

    pair_id: int
    question: str
    answer: str
    author: str
    updated_at: str
    similarity: float
    documents: tuple[tuple[int, str], ...] = field(default_factory=tuple)

    def label(self) -> dict[str, Any]:
        return {"id": self.pair_id, "author": self.author, "updated_at": self.updated_at,
                "question": self.question}

    @property
    def sources(self) -> list[dict[str, Any]]:
        return [{"index": i, "chunk_id": None, "document_id": doc_id, "document_title": title, "content": "",
                 "score": 1.0, "source": "KB", "domain": "", "location": None}
                for i, (doc_id, title) in enumerate(self.documents, start=1)]

    def citations(self) -> list[dict[str, Any]]:
        return [{"index": i, "chunk_id": None, "document_id": doc_id, "document_title": title, "source": "KB"}
                for i, (doc_id, title) in enumerate(self.documents, start=1)]

    def as_dict(self) -> dict[str, Any]:
        return {**self.label(), "similarity": round(self.similarity, 4)}


def curated_probe(turn: ChatTurn, classification: QueryClassification) -> CuratedAnswer | None:
    """The curated answer of one of the turn's bases whose question this one repeats or paraphrases.

    Not for a turn about a selected document (the user asked about that document) nor a regenerated one (the
    user asked for another answer than the one given)."""
    if turn.document_id is not None or turn.regenerate or not turn.kb_ids:
        return None
    from curation.matcher import CuratedMatcher
    from curation.selectors import cited_documents, curated_candidates, qa_pair_served
    from docmind.backends import get_embedder

    question = classification.rewritten or turn.question
    embedder = get_embedder()
    candidates = curated_candidates(kb_ids=turn.kb_ids, embedder_name=embedder.name, dim=embedder.dim)
    if not candidates.ids:
        return None
    match = CuratedMatcher().run(question=question, vector=embedder.embed_query(question), candidates=candidates)
    if match is None:
        return None
    pair = qa_pair_served(pair_id=match.pair_id, kb_ids=turn.kb_ids)
    if pair is None:  # deactivated or deleted since the matrix was loaded
        return None
    author = pair.author.get_username() if pair.author is not None else ""
    return CuratedAnswer(pair_id=pair.pk, question=pair.question, answer=pair.answer, author=author,
                         updated_at=pair.updated_at.isoformat(), similarity=match.similarity,
                         documents=tuple(cited_documents(pair=pair, kb_ids=turn.kb_ids)))


def with_revisions(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each KB source card with the revision of its chunk it quoted (0: the text as ingested), so that the
    reader can show that text later and say the chunk was edited since."""
    from kb.selectors import latest_revisions

    ids = [int(card["chunk_id"]) for card in sources
           if card.get("source") == "KB" and str(card.get("chunk_id") or "").isdigit()]
    if not ids:
        return sources
    latest = latest_revisions(chunk_ids=ids)
    return [{**card, "revision": latest.get(int(card["chunk_id"]), 0)}
            if card.get("source") == "KB" and str(card.get("chunk_id") or "").isdigit() else card
            for card in sources]
