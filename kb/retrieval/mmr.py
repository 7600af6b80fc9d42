"""MmrSelector: picks top_k relevant yet diverse chunks (cosine over stored vectors, Jaccard fallback)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from docmind.text import normalise
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
                sim, missing = self._cosine_matrix(chunks, vectors or {})
            except Exception as exc:  # inconsistent vectors: Jaccard for all, never a failure
                notes.append(f"mmr: Jaccard instead of cosine ({exc})")
            else:
                if missing:
                    notes.append(f"mmr: Jaccard for {len(missing)} chunk(s) without a stored vector")
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

    @classmethod
    def _cosine_matrix(cls, chunks: Sequence[ScoredChunk], vectors: Mapping[str, np.ndarray]
                       ) -> tuple[np.ndarray, list[int]]:
        """Cosine between chunks with a stored vector, and the positions of those without one, whose pairs are
        Jaccard of bigrams instead: a chunk has no vector while its document is being ingested (its text is
        searchable first), and the rest of the pool keeps the similarity it has otherwise."""
        missing = [i for i, c in enumerate(chunks) if c.chunk_id not in vectors]
        present = [i for i, c in enumerate(chunks) if c.chunk_id in vectors]
        sim = np.zeros((len(chunks), len(chunks)), dtype=np.float64)
        if present:
            matrix = np.stack([np.asarray(vectors[chunks[i].chunk_id], dtype=np.float64).reshape(-1) for i in present])
            matrix = np.nan_to_num(matrix, nan=0.0, posinf=0.0, neginf=0.0)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            # A zero vector would divide by zero; it gets similarity 0 to everything instead of NaN.
            unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
            sim[np.ix_(present, present)] = np.clip(unit @ unit.T, -1.0, 1.0)
        if missing:
            jaccard = cls._jaccard_matrix(chunks)
            sim[missing, :] = jaccard[missing, :]
            sim[:, missing] = jaccard[:, missing]
        return sim, missing

    @staticmethod
    def _jaccard_matrix(chunks: Sequence[ScoredChunk]) -> np.ndarray:
        """Pairwise Jaccard of the chunks' bigram sets (docmind.text.bigrams), as one product of incidence rows over
        integer codes of the bigrams: ~1.3 ms for 40 chunks, where sets of strings took ~5.5 ms."""
        grams = [_gram_codes(c.content) for c in chunks]
        codes = np.concatenate([*grams, np.zeros(0, np.int64)])
        _, columns = np.unique(codes, return_inverse=True)
        # a row's repeated grams set the same cell: each row holds its distinct grams once
        incidence = np.zeros((len(chunks), len(codes) and int(columns.max()) + 1), dtype=np.float32)
        incidence[np.repeat(np.arange(len(grams)), [len(g) for g in grams]), columns.reshape(-1)] = 1.0
        sizes = incidence.sum(axis=1, dtype=np.float64)
        inter = (incidence @ incidence.T).astype(np.float64)  # counts below 2**24: exact in float32
        union = sizes[:, None] + sizes[None, :] - inter
        sim = np.divide(inter, union, out=np.ones_like(inter), where=union > 0)  # two empty texts: identical
        np.fill_diagonal(sim, 0.0)
        return sim


def _gram_codes(text: str) -> np.ndarray:
    """The codes of `bigrams(text)`, repeats included: a pair of code points packed into one integer (code points
    are below 2**21, so a single character, the gram of a one-character text, never equals a pair's code)."""
    points = np.frombuffer(normalise(text).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return points if len(points) < 2 else (points[:-1] << 21) | points[1:]
