"""RetrievalGrader (CRAG): HIGH / AMBIGUOUS / LOW from the rerank score and salient-term coverage."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from docmind.text import Term, coverage, salient_terms
from kb.retrieval.types import Grade, GradeResult, ScoredChunk, Source

MODES = ("heuristic", "cross_encoder", "disabled")
TOP_N = 3

# Scores the query against the final (compressed) texts with the cross-encoder, in [0, 1].
Rescorer = Callable[[str, Sequence[ScoredChunk]], list[float]]


class RetrievalGrader:
    """Two signals that fail differently: the reranker (semantic, drifts on names) and lexical
    coverage (exact, blind to paraphrase). Both strong → HIGH, both weak → LOW, disagreement →
    AMBIGUOUS. Overrides in every mode: rerank strong but the KB lacks the query's entities →
    AMBIGUOUS ("looks alike, fact absent"); rerank weak but a rare entity is hit → AMBIGUOUS.

    The grey zone (low_threshold ≤ rerank < high_threshold) is arbitrated by the mode:
    heuristic — coverage decides (strong → HIGH, weak → LOW); cross_encoder — the rescorer
    scores the compressed texts once more and that score decides, coverage breaking ties;
    disabled — no arbitration, AMBIGUOUS. Without a rerank score (reranker failed) the
    grade falls in the grey zone.
    """

    def __init__(self, *, high_threshold: float = 0.6, low_threshold: float = 0.3, mode: str = "heuristic",
                 lex_high: float = 0.6, lex_low: float = 0.3, web_on_low: bool = True,
                 web_on_ambiguous: bool = True, rescorer: Rescorer | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        if not 0 <= low_threshold <= high_threshold <= 1:
            raise ValueError("need 0 <= low_threshold <= high_threshold <= 1")
        if not 0 <= lex_low <= lex_high <= 1:
            raise ValueError("need 0 <= lex_low <= lex_high <= 1")
        self._high, self._low, self._mode = high_threshold, low_threshold, mode
        self._lex_high, self._lex_low = lex_high, lex_low
        self._web_on_low, self._web_on_ambiguous = web_on_low, web_on_ambiguous
        self._rescorer = rescorer

    def run(self, *, query: str, chunks: Sequence[ScoredChunk]) -> GradeResult:
        if not chunks:
            return self._result(Grade.LOW, 0.0, 0.0, True, "no evidence")
        terms = salient_terms(query, names=[c.document_title for c in chunks])
        top = list(chunks[:TOP_N])
        lex = max((coverage(terms, c.searchable_text) for c in top), default=0.0) if terms else 0.0
        entities = self._entities(terms)
        kb_texts = [c.searchable_text for c in top if c.source == Source.KB]
        entity_cov = max((coverage(entities, t) for t in kb_texts), default=0.0) if entities else 1.0
        kb_entity_weak = entity_cov < 0.5
        rare = tuple(e for e in entities if e.rare)
        rare_hit = bool(rare) and any(coverage(rare, c.searchable_text) > 0 for c in top)
        rerank = top[0].stage_scores.get("rerank")
        top1 = float(rerank) if rerank is not None else 0.0
        lex_strong, lex_weak = lex >= self._lex_high, lex < self._lex_low
        if rerank is not None and top1 >= self._high:
            if kb_entity_weak:
                return self._result(Grade.AMBIGUOUS, top1, lex, kb_entity_weak, "rerank high but entities missing")
            grade = Grade.HIGH if lex_strong else Grade.AMBIGUOUS
            return self._result(grade, top1, lex, kb_entity_weak, "rerank high, coverage " +
                                ("high" if lex_strong else "not high"))
        if rerank is not None and top1 < self._low:
            if rare_hit:
                return self._result(Grade.AMBIGUOUS, top1, lex, kb_entity_weak, "rerank low but rare entity hit")
            grade = Grade.LOW if lex_weak else Grade.AMBIGUOUS
            return self._result(grade, top1, lex, kb_entity_weak, "rerank low, coverage " +
                                ("low" if lex_weak else "not low"))
        return self._grey(query, top, top1, lex, kb_entity_weak, lex_strong, lex_weak)

    def _grey(self, query: str, top: list[ScoredChunk], top1: float, lex: float, entity_weak: bool,
              lex_strong: bool, lex_weak: bool) -> GradeResult:
        if self._mode == "cross_encoder" and self._rescorer is not None:
            try:
                again = max(self._rescorer(query, top), default=0.0)
            except Exception:  # arbitration is optional: fall back to the heuristic
                again = None
            if again is not None:
                if again >= self._high and not lex_weak and not entity_weak:
                    return self._result(Grade.HIGH, top1, lex, entity_weak, f"grey zone, cross-encoder {again:.2f}")
                if again < self._low and not lex_strong:
                    return self._result(Grade.LOW, top1, lex, entity_weak, f"grey zone, cross-encoder {again:.2f}")
                return self._result(Grade.AMBIGUOUS, top1, lex, entity_weak, f"grey zone, cross-encoder {again:.2f}")
        if self._mode == "disabled":
            return self._result(Grade.AMBIGUOUS, top1, lex, entity_weak, "grey zone, arbitration disabled")
        if lex_strong and not entity_weak:
            return self._result(Grade.HIGH, top1, lex, entity_weak, "grey zone, coverage high")
        if lex_weak:
            return self._result(Grade.LOW, top1, lex, entity_weak, "grey zone, coverage low")
        return self._result(Grade.AMBIGUOUS, top1, lex, entity_weak, "grey zone, coverage in between")

    @staticmethod
    def _entities(terms: tuple[Term, ...]) -> tuple[Term, ...]:
        """The terms that carry the question: the rare ones, else the single heaviest term."""
        rare = tuple(t for t in terms if t.rare and len(t.text) >= 2)
        if rare:
            return rare
        return (max(terms, key=lambda t: t.weight),) if terms else ()

    def _result(self, grade: Grade, top1: float, lex: float, entity_weak: bool, reason: str) -> GradeResult:
        web = (grade == Grade.LOW and self._web_on_low) or (
            grade == Grade.AMBIGUOUS and entity_weak and self._web_on_ambiguous)
        return GradeResult(grade=grade, rerank_top1=top1, lex_coverage=lex, kb_entity_weak=entity_weak,
                           web_compensation_needed=web, reason=reason)
