"""RetrievalParams: every tunable of the retrieval path (kb.retrieval.compose reads them from the config)."""
from __future__ import annotations

from dataclasses import dataclass

from docmind.evidence import EvidenceBudget


@dataclass(frozen=True)
class RetrievalParams:
    top_k: int = 6
    candidate_k: int = 30
    vector_weight: float = 1.0
    bm25_weight: float = 1.0
    rrf_k: int = 60
    hyde_enabled: bool = False
    web_on_low: bool = True
    mmr_lambda: float = 0.7
    mmr_similarity: str = "cosine"
    near_dup_jaccard: float = 0.85
    window_chars: int = 800
    grader_mode: str = "heuristic"
    web_on_ambiguous: bool = True
    high_threshold: float = 0.6
    low_threshold: float = 0.3
    # Shared with the chat prompt and the direct read, which apply it in the same unit.
    evidence: EvidenceBudget = EvidenceBudget()
    web_k: int = 5

    def __post_init__(self) -> None:
        if self.top_k <= 0 or self.candidate_k <= 0:
            raise ValueError("top_k and candidate_k must be positive")
