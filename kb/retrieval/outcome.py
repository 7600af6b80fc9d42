"""The result of a stage that can degrade: its chunks plus notes for the trace."""
from __future__ import annotations

from dataclasses import dataclass

from kb.retrieval.types import ScoredChunk


@dataclass(frozen=True)
class StageOutcome:
    chunks: tuple[ScoredChunk, ...]
    # Why the stage fell back (reranker timeout, Jaccard instead of cosine…); empty when all went well.
    notes: tuple[str, ...] = ()
