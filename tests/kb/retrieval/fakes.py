"""In-memory fakes of the retrieval ports, for stage tests only."""
from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kb.retrieval.types import ScoredChunk, Source


def chunk(chunk_id: str, content: str = "", score: float = 1.0, **kwargs) -> ScoredChunk:
    return ScoredChunk(chunk_id=chunk_id, content=content or f"text of {chunk_id}", score=score, **kwargs)


def web_chunk(chunk_id: str, content: str, score: float = 1.0) -> ScoredChunk:
    return ScoredChunk(chunk_id=chunk_id, content=content, score=score, source=Source.WEB,
                       url=f"https://example.com/{chunk_id}")


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


@dataclass
class FakeSearcher:
    """Children with vectors and parents; lexical search = substring hits, vector search = cosine."""

    children: dict[str, ScoredChunk] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    parents: dict[str, tuple[int, str]] = field(default_factory=dict)
    fail_vector: bool = False
    fail_lexical: bool = False
    fail_lookup: bool = False

    def add(self, chunk_id: str, content: str, vector: np.ndarray, parent: tuple | None = None,
            document_id: int = 1) -> None:
        self.children[chunk_id] = ScoredChunk(chunk_id=chunk_id, content=content, score=0.0, document_id=document_id)
        self.vectors[chunk_id] = vector
        if parent is not None:
            self.parents[chunk_id] = parent

    def vector_search(self, query_vector: np.ndarray, *, k: int, domains: Sequence[str] | None = None,
                      document_ids: Sequence[int] | None = None) -> list[ScoredChunk]:
        if self.fail_vector:
            raise ConnectionError("milvus down")
        scored = [(float(np.dot(query_vector, self.vectors[cid])), c) for cid, c in self.children.items()]
        scored.sort(key=lambda pair: -pair[0])
        return [c.with_score("vector", s) for s, c in scored[:k]]

    def lexical_search(self, query: str, *, k: int, domains: Sequence[str] | None = None,
                       document_ids: Sequence[int] | None = None) -> list[ScoredChunk]:
        if self.fail_lexical:
            raise RuntimeError("bm25 index unavailable")
        hits = [(sum(ch in c.content for ch in set(query)), c) for c in self.children.values()]
        hits = [h for h in hits if h[0] > 0]
        hits.sort(key=lambda pair: -pair[0])
        return [c.with_score("bm25", float(s)) for s, c in hits[:k]]

    def vectors_of(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if self.fail_lookup:
            raise ConnectionError("milvus down")
        return {cid: self.vectors[cid] for cid in chunk_ids if cid in self.vectors}

    def parents_of(self, chunk_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        if self.fail_lookup:
            raise ConnectionError("db down")
        return {cid: self.parents[cid] for cid in chunk_ids if cid in self.parents}


class FakeEmbedder:
    """Maps known texts to fixed vectors; anything else gets a unit vector seeded by the text's CRC-32.

    Python's own `hash()` of a str changes with every process (PYTHONHASHSEED), which made a test that
    depends on an unknown text's vector pass or fail by the worker it ran in."""

    name = "fake"
    dim = 3

    def __init__(self, table: dict[str, np.ndarray] | None = None) -> None:
        self.table = table or {}

    def embed_query(self, text: str) -> np.ndarray:
        if text in self.table:
            return self.table[text]
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        return unit(*rng.normal(size=self.dim))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
