"""RetrievalParams: every tunable of the retrieval path, read from one config snapshot."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.retrieval.mmr import clamp_lambda


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
    context_max_tokens: int = 3000
    web_k: int = 5

    def __post_init__(self) -> None:
        if self.top_k <= 0 or self.candidate_k <= 0:
            raise ValueError("top_k and candidate_k must be positive")

    @classmethod
    def from_config(cls, snapshot: Mapping[str, Any], top_k: int | None = None) -> RetrievalParams:
        """From a config snapshot; an explicit `top_k` (the caller's request) wins over the row."""
        k = int(top_k) if top_k is not None else int(snapshot["retrieval.top_k"])
        return cls(
            top_k=k,
            # Never fetch fewer candidates than the answer needs.
            candidate_k=max(int(snapshot["retrieval.candidate_k"]), k),
            vector_weight=float(snapshot["retrieval.vector_weight"]),
            bm25_weight=float(snapshot["retrieval.bm25_weight"]),
            rrf_k=int(snapshot["retrieval.rrf_k"]),
            hyde_enabled=bool(snapshot["retrieval.hyde.enabled"]),
            web_on_low=bool(snapshot["retrieval.web_compensation_on_low"]),
            mmr_lambda=clamp_lambda(_read_or_none(snapshot, "mmr.lambda")),
            mmr_similarity=str(snapshot["mmr.similarity"]),
            near_dup_jaccard=float(snapshot["compress.near_dup_jaccard"]),
            window_chars=int(snapshot["compress.window_chars"]),
            grader_mode=str(snapshot["grader.mode"]),
            web_on_ambiguous=bool(snapshot["grader.web_fallback_on_ambiguous"]),
            high_threshold=float(snapshot["grader.high_threshold"]),
            low_threshold=float(snapshot["grader.low_threshold"]),
            context_max_tokens=int(snapshot["rag.context_max_tokens"]),
        )


def _read_or_none(snapshot: Mapping[str, Any], key: str) -> Any:
    # A value that cannot be read must not stop retrieval; the stage substitutes its default.
    try:
        return snapshot[key]
    except Exception:
        return None
