"""HydeExpander: embeds a hypothetical answer together with the query (one-shot path only)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from docmind.embeddings import Embedder

# Writes a short hypothetical answer to the question (a small-model call); may raise.
AnswerWriter = Callable[[str], str]


class HydeExpander:
    """Query vector = normalised mean of the query embedding and the hypothetical answer's passage
    embedding. Keeping the query in the mean guards against a hallucinated answer steering the
    search away; if the writer fails or returns nothing, the plain query vector is used."""

    def __init__(self, *, embedder: Embedder, write_answer: AnswerWriter, answer_weight: float = 0.5) -> None:
        if not 0 <= answer_weight <= 1:
            raise ValueError("answer_weight must be in [0, 1]")
        self._embedder = embedder
        self._write = write_answer
        self._w = answer_weight
        self.last_note = ""

    def run(self, *, query: str) -> np.ndarray:
        query_vector = self._embedder.embed_query(query)
        try:
            answer = (self._write(query) or "").strip()
        except Exception as exc:  # HyDE is an optional boost, never a reason to fail retrieval
            self.last_note = f"hyde: answer writer failed ({exc.__class__.__name__}); plain query"
            return query_vector
        if not answer:
            self.last_note = "hyde: empty hypothetical answer; plain query"
            return query_vector
        answer_vector = self._embedder.embed_passages([answer])[0]
        mixed = (1 - self._w) * query_vector + self._w * answer_vector
        norm = float(np.linalg.norm(mixed))
        self.last_note = "hyde: query + hypothetical answer"
        return (mixed / norm).astype(np.float32) if norm > 0 else query_vector
