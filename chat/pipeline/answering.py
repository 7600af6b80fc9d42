"""After the verdict: the answer's shape, prompt, citations, source cards, and texts no model writes (meta, abstain)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext as _

from chat.generation.abstention import abstention
from chat.pipeline.stages import TurnStages
from chat.pipeline.turn import ChatTurn
from chat.types import (
    AnswerShape,
    Assessment,
    CitationReport,
    Intent,
    Mode,
    PathDecision,
    PromptParts,
    QueryClassification,
)
from chat.understanding.comparison import comparison_sides as _sides
from docmind.prompts.answer import SHAPE_INSTRUCTIONS, question_as_understood
from kb import selectors
from kb.access import key_scope
from kb.retrieval.types import Evidence, ScoredChunk
from memory.scope import memory_scope_reply
from memory.turn import TurnMemory

REPLAY_CHARS = 6
RELATED_SOURCES = 3


def answer_shape(classification: QueryClassification, decision: PathDecision) -> AnswerShape:
    if decision.mode is Mode.SELECTED_DOC:
        return AnswerShape.SUMMARY
    return {Intent.COMPARISON: AnswerShape.COMPARISON, Intent.HOW_TO: AnswerShape.STEPS,
            Intent.SUMMARY: AnswerShape.SUMMARY}.get(classification.intent, AnswerShape.FACTS)


def comparison_sides(shape: AnswerShape, question: str) -> tuple[str, ...]:
    return _sides(question) if shape is AnswerShape.COMPARISON else ()


def assemble(stages: TurnStages, turn: ChatTurn, evidence: Evidence, assessment: Assessment,
             shape: AnswerShape, memory: TurnMemory | None = None) -> PromptParts:
    memory = memory or TurnMemory()
    rewritten = turn.record.classification.rewritten if turn.record.classification else turn.question
    question = question_as_understood(turn.question, rewritten)
    prompt = stages.assembler.run(question=question, chunks=list(evidence.chunks), grade=evidence.grade,
                                  history=turn.history, memories=list(memory.lines),
                                  computations=turn.record.computations, profile=memory.profile,
                                  history_summarizer=stages.summarizer, low_confidence=assessment.low_confidence,
                                  unsaid=assessment.unsaid, instructions=SHAPE_INSTRUCTIONS.get(shape.value, ""))
    return replace(prompt, answer_style=memory.style, memory_applied=memory.applied)


def citation_coverage(stages: TurnStages, answer: str, prompt: PromptParts, evidence: Evidence,
                      question: str = "") -> float | None:
    """The share of the answer's sentences its citations cover, as `cite` will read it."""
    return stages.citations.run(answer=answer, chunks=list(prompt.chunks), rerank_top1=evidence.grade.rerank_top1,
                                grade=evidence.grade, question=question).citation_coverage


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


def with_revisions(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each KB source card with the revision of its chunk it quoted (0: the text as ingested), so that the
    reader can show that text later and say the chunk was edited since."""
    ids = [int(card["chunk_id"]) for card in sources
           if card.get("source") == "KB" and str(card.get("chunk_id") or "").isdigit()]
    if not ids:
        return sources
    latest = selectors.latest_revisions(chunk_ids=ids)
    return [{**card, "revision": latest.get(int(card["chunk_id"]), 0)}
            if card.get("source") == "KB" and str(card.get("chunk_id") or "").isdigit() else card
            for card in sources]
