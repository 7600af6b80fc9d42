"""The semantic answer cache in a turn: probe, store, and a hit's evidence rebuilt from its stored dict for replay."""
from __future__ import annotations

from typing import Any

from chat.answer_cache import CachedAnswer, CacheProbe
from chat.pipeline.stages import TurnStages
from chat.pipeline.turn import ChatTurn
from chat.types import PromptParts, QueryClassification
from kb import selectors
from kb.retrieval.types import Evidence, Grade, GradeResult, ScoredChunk, Source


def cache_probe(stages: TurnStages, turn: ChatTurn, classification: QueryClassification, scope: str) -> CacheProbe:
    if not stages.answer_cache.enabled or turn.history or turn.regenerate:
        # Follow-up questions depend on the conversation, so their answers are not reusable; a question asked
        # to be answered again wants a new answer, not the stored one replayed.
        return CacheProbe(vector=None)
    turn.record.kb_version = selectors.kb_version()
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
    grade = GradeResult(grade=Grade(g["grade"]), rerank_top1=float(g["rerank_top1"]),
                        lex_coverage=float(g["lex_coverage"]), kb_entity_weak=bool(g["kb_entity_weak"]),
                        web_compensation_needed=bool(g["web_compensation_needed"]), reason=g.get("reason", ""))
    return Evidence(chunks=chunks, grade=grade, trace=("semantic answer cache hit",))
