"""`ConfidenceCalibrator`: how likely the evidence answers the question — the score, the band, abstention.

One calibrated probability drives everything the user sees: abstain ("not in the knowledge base")
below `abstain_below`, answer with the low-relevance label below `medium_from`, and the confidence
badge's band. Because all three come from the same number, they cannot disagree.

The probability is a logistic model over evidence signals that work with or without an LLM (the
answer has not been written yet when it is needed). Its weights were fitted on the CMRC 2018 trial
set by `bench/fit_confidence.py` (see bench/README.md).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from chat.citations import split_sentences
from chat.generation.extractive import beyond_context, overlap, terms
from chat.types import Assessment, Verdict
from docmind.text import coverage, salient_terms
from kb.retrieval.types import GradeResult, ScoredChunk, Source

TOP_N = 3
FEATURES = ("rerank_top1", "lex_coverage", "entity_coverage", "best_sentence", "sentence_margin", "best_in_top",
            "focus_match")
# Fitted by bench/fit_confidence.py on the trial set (--sample 0.5), two logistic regressions:
# "answerable" (the KB holds the answer: answerable against held-back questions) and "right" (among
# answerable questions, the extractive answer contains the gold answer). The score is
# P(answerable) × P(right | answerable). Each model keeps only the signals that carried it (see the script).
ANSWERABLE_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "rerank_top1": 17.34, "lex_coverage": 0.0, "entity_coverage": 0.0, "best_sentence": 8.76,
    "sentence_margin": 0.0, "best_in_top": 0.0, "focus_match": 0.0, "bias": -11.91,
})
RIGHT_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "rerank_top1": 3.08, "lex_coverage": 0.0, "entity_coverage": 0.0, "best_sentence": 0.0,
    "sentence_margin": 0.0, "best_in_top": 0.0, "focus_match": 2.80, "bias": -2.17,
})


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-40.0, min(40.0, x))))


def evidence_features(*, question: str, chunks: Sequence[ScoredChunk], grade: GradeResult) -> dict[str, float]:
    """Signals in [0, 1]: rerank score of the best chunk, salient-term coverage of the top chunks, coverage
    of the question's entities (its rare terms) in the top KB chunks, and the best single sentence's match."""
    top = list(chunks[:TOP_N])
    salient = salient_terms(question)
    rare = tuple(t for t in salient if t.rare and len(t.text) >= 2) or \
        ((max(salient, key=lambda t: t.weight),) if salient else ())
    kb_top = [c.searchable_text for c in top if c.source == Source.KB] or [c.content for c in top]
    entity = max((coverage(rare, text) for text in kb_top), default=0.0) if rare else 0.0
    wanted = terms(question)
    scored = sorted(((overlap(wanted, f"{c.context} {s}"), rank) for rank, c in enumerate(top)
                     for s in split_sentences(c.content)), reverse=True)
    best, best_rank = scored[0] if scored else (0.0, 1)
    second = scored[1][0] if len(scored) > 1 else 0.0
    # How well the best sentence matches what the question asks beyond what its title already names
    # (the offline answerer's own criterion); 1 when the title names the whole question.
    focus = 0.0
    for c in top:
        rest = beyond_context(wanted, c)
        focus = max(focus, 1.0 if rest is None else max((overlap(rest, s) for s in split_sentences(c.content)),
                                                         default=0.0))
    return {"rerank_top1": float(grade.rerank_top1), "lex_coverage": float(grade.lex_coverage),
            "entity_coverage": float(entity), "best_sentence": float(best),
            "sentence_margin": float(best - second), "best_in_top": 1.0 if best_rank == 0 else 0.0,
            "focus_match": float(focus)}


class ConfidenceCalibrator:
    def __init__(self, *, abstain_below: float, medium_from: float, high_from: float,
                 answerable: Mapping[str, float] = ANSWERABLE_WEIGHTS, right: Mapping[str, float] = RIGHT_WEIGHTS
                 ) -> None:
        if not 0 <= abstain_below <= medium_from <= high_from <= 1:
            raise ValueError("need 0 <= abstain_below <= medium_from <= high_from <= 1")
        for weights in (answerable, right):
            if set(weights) != {*FEATURES, "bias"}:
                raise ValueError(f"weights must name exactly {', '.join(FEATURES)} and bias")
        self.abstain_below, self.medium_from, self.high_from = abstain_below, medium_from, high_from
        self.answerable, self.right = dict(answerable), dict(right)

    @staticmethod
    def probability(weights: Mapping[str, float], features: Mapping[str, float]) -> float:
        return _sigmoid(weights["bias"] + sum(weights[name] * features[name] for name in FEATURES))

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], grade: GradeResult) -> Assessment:
        """ABSTAIN when the KB most likely lacks the answer, LOW when it may, else ANSWER; the score is the
        probability that the answer will be right, capped below `medium_from` for a LOW verdict."""
        if not chunks:
            return Assessment(score=0.0, verdict=Verdict.ABSTAIN, features=MappingProxyType({}))
        features = evidence_features(question=question, chunks=chunks, grade=grade)
        answerable = self.probability(self.answerable, features)
        score = answerable * self.probability(self.right, features)
        verdict = Verdict.ABSTAIN if answerable < self.abstain_below else Verdict.LOW \
            if answerable < self.medium_from else Verdict.ANSWER
        if verdict is not Verdict.ANSWER:
            score = min(score, answerable)
        features = {**features, "p_answerable": answerable}
        return Assessment(score=score, verdict=verdict, features=MappingProxyType(features))

    def finish(self, *, assessment: Assessment, citation_coverage: float | None) -> tuple[float, str]:
        """The answer's final (score, band). An answer that cites little of what it says is trusted less;
        it is never trusted more than its evidence, so a LOW start never ends in a better band."""
        if assessment.verdict is Verdict.ABSTAIN:
            return assessment.score, "none"
        score = assessment.score
        if citation_coverage is not None:
            score *= 0.5 + 0.5 * min(1.0, max(0.0, citation_coverage))
        if assessment.verdict is Verdict.LOW:
            return score, "low"
        return score, self.band(score)

    def band(self, score: float) -> str:
        return "high" if score >= self.high_from else "medium" if score >= self.medium_from else "low"
