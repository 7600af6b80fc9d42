"""MmrSelector: picks top_k relevant yet diverse chunks (cosine over stored vectors, Jaccard fallback)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import sparse

from docmind.text import bigrams
from kb.retrieval.outcome import StageOutcome
from kb.retrieval.types import ScoredChunk

DEFAULT_LAMBDA = 0.7


def clamp_lambda(value: Any) -> float:
    """λ outside [0, 1] inverts MMR (a negative diversity weight rewards redundancy), so clamp it;
    an unreadable value falls back to the default."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DEFAULT_LAMBDA
    if math.isnan(number):
        return DEFAULT_LAMBDA
    return min(1.0, max(0.0, number))


class MmrSelector:
    def __init__(self, *, top_k: int, lambda_: Any = DEFAULT_LAMBDA, similarity: str = "cosine") -> None:
        if top_k <= 0:
            raise ValueError("top_k must be positive")
        if similarity not in ("cosine", "jaccard"):
            raise ValueError("similarity must be cosine or jaccard")
        self._k = top_k
        self._lambda = clamp_lambda(lambda_)
        self._similarity = similarity

    @property
    def lambda_(self) -> float:
        return self._lambda

    def run(self, *, chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray] | None = None) -> StageOutcome:
        """`chunks` best first; `vectors` the stored embeddings by chunk id (looked up once, in a batch)."""
        if len(chunks) <= 1:
            return StageOutcome(tuple(chunks[: self._k]))
        notes: list[str] = []
        sim: np.ndarray | None = None
        if self._similarity == "cosine":
            try:
                sim = self._cosine_matrix(chunks, vectors or {})
            except Exception as exc:  # missing or inconsistent vectors: Jaccard for all, never a failure
                notes.append(f"mmr: Jaccard instead of cosine ({exc})")
        if sim is None:
            sim = self._jaccard_matrix(chunks)
        relevance = self._relevance(chunks)
        selected: list[int] = []
        remaining = list(range(len(chunks)))
        while remaining and len(selected) < self._k:
            def mmr(i: int) -> float:
                redundancy = max((sim[i, j] for j in selected), default=0.0)
                return self._lambda * relevance[i] - (1 - self._lambda) * redundancy
            best = max(remaining, key=lambda i: (mmr(i), -i))  # ties → the better-ranked chunk
            selected.append(best)
            remaining.remove(best)
        return StageOutcome(tuple(chunks[i] for i in selected), tuple(notes))

    @staticmethod
    def _relevance(chunks: Sequence[ScoredChunk]) -> np.ndarray:
        # Min-max so that λ means the same whether scores are rerank probabilities or tiny RRF sums.
        scores = np.array([c.score for c in chunks], dtype=np.float64)
        scores = np.nan_to_num(scores, nan=0.0)
        low, high = scores.min(), scores.max()
        if high - low < 1e-12:
            return np.ones_like(scores)
        return (scores - low) / (high - low)

    @staticmethod
    def _cosine_matrix(chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
        missing = [c.chunk_id for c in chunks if c.chunk_id not in vectors]
        if missing:
            raise ValueError(f"no stored vector for {len(missing)} chunk(s)")
        matrix = np.stack([np.asarray(vectors[c.chunk_id], dtype=np.float64).reshape(-1) for c in chunks])
        matrix = np.nan_to_num(matrix, nan=0.0, posinf=0.0, neginf=0.0)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # A zero vector would divide by zero; it gets similarity 0 to everything instead of NaN.
        unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        return np.clip(unit @ unit.T, -1.0, 1.0)

    @staticmethod
    def _jaccard_matrix(chunks: Sequence[ScoredChunk]) -> np.ndarray:
        # Pairwise set operations in Python cost ~6 ms for 40 chunks, on every query whose pool holds a chunk
        # without a vector yet (a document still being ingested); intersections as one sparse product: ~2 ms.
        grams = [bigrams(c.content) for c in chunks]
        vocabulary: dict[str, int] = {}
        columns = [vocabulary.setdefault(gram, len(vocabulary)) for chunk_grams in grams for gram in chunk_grams]
        rows = np.repeat(np.arange(len(grams)), [len(g) for g in grams])
        incidence = sparse.csr_matrix((np.ones(len(columns)), (rows, columns)), shape=(len(grams), len(vocabulary)))
        inter = np.asarray((incidence @ incidence.T).todense(), dtype=np.float64)
        sizes = np.asarray([len(g) for g in grams], dtype=np.float64)
        union = sizes[:, None] + sizes[None, :] - inter
        sim = np.divide(inter, union, out=np.ones_like(inter), where=union > 0)  # two empty texts: identical
        np.fill_diagonal(sim, 0.0)
        return sim
