"""Whether the evidence, then the written answer, answers the question: the verdict, apart from writing the answer."""
from __future__ import annotations

import re
from dataclasses import replace

from chat.pipeline.stages import TurnStages
from chat.types import Assessment, Mode, PathDecision, QueryClassification, Verdict
from kb.retrieval.types import Evidence


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


def reassess(stages: TurnStages, assessment: Assessment, answer: str, question: str,
             evidence: Evidence) -> Assessment:
    """The assessment of the written answer (what it says about what was asked), not only of its evidence."""
    return stages.calibrator.on_answer(assessment=assessment, answer=answer, question=assessed_question(question),
                                       chunks=evidence.chunks)
