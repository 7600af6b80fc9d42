"""Data passed between the memory stages and services: memories, candidates, recall results, parameters."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from docmind.llm.base import checked_structured_outputs

TYPES = ("preference", "fact", "profile", "instruction")
# Always worth knowing, whatever the question: who the user is and how they want to be answered.
STANDING_TYPES = ("profile", "instruction")


class MemoryStoreUnavailable(RuntimeError):
    """The system of record could not be read: "the database is down", never "the user has no memories"."""


@dataclass(frozen=True)
class MemoryItem:
    """One active memory as the cache and the recall path see it."""

    id: int
    user_id: int
    memory_type: str
    content: str
    access_count: int
    created_at: datetime

    def as_cache(self) -> dict[str, Any]:
        return {"id": self.id, "user_id": self.user_id, "memory_type": self.memory_type, "content": self.content,
                "access_count": self.access_count, "created_at": self.created_at.isoformat()}

    @classmethod
    def from_cache(cls, data: Mapping[str, Any]) -> MemoryItem:
        return cls(id=int(data["id"]), user_id=int(data["user_id"]), memory_type=str(data["memory_type"]),
                   content=str(data["content"]), access_count=int(data["access_count"]),
                   created_at=datetime.fromisoformat(str(data["created_at"])))


@dataclass(frozen=True)
class MemoryCandidate:
    """Something worth remembering, before conflict handling; `supersedes` are ids of memories it contradicts."""

    memory_type: str
    content: str
    supersedes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.memory_type not in TYPES:
            raise ValueError(f"memory type must be one of {', '.join(TYPES)}")
        if not self.content.strip():
            raise ValueError("memory content is empty")


@dataclass(frozen=True)
class RecalledMemory:
    item: MemoryItem
    score: float | None  # calibrated similarity; None for standing memories recalled by type
    # True only when the database was unreachable and the text is the vector index's truncated copy.
    from_index: bool = False


@dataclass(frozen=True)
class RecallResult:
    memories: tuple[RecalledMemory, ...] = ()
    degraded: str = ""  # why recall is partial ("database unreachable", "vector index failed: …")
    trace: tuple[str, ...] = ()

    @property
    def ids(self) -> list[int]:
        return [m.item.id for m in self.memories]


@dataclass(frozen=True)
class MemoryParams:
    """The memory keys of one config snapshot (memory.compose reads them), validated once."""

    enabled: bool = True
    extraction_enabled: bool = True
    duplicate_threshold: float = 0.85
    supersede_threshold: float = 0.75
    calibrate: bool = True
    max_per_user: int = 200
    decay_days: float = 14.0
    access_weight: float = 0.5
    cache_ttl_seconds: int = 7 * 24 * 3600
    vector_max_chars: int = 300
    recall_top_k: int = 5
    recall_min_score: float = 0.2
    recall_margin: float = 0.1
    extract_model: str = "qwen-flash"
    structured_outputs: str = "auto"  # how the extractor asks for its reply schema (llm.structured_outputs)

    def __post_init__(self) -> None:
        if not self.supersede_threshold <= self.duplicate_threshold:
            raise ValueError("memory.supersede_threshold must not exceed memory.duplicate_threshold")
        for name in ("max_per_user", "cache_ttl_seconds", "vector_max_chars", "recall_top_k"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.decay_days <= 0:
            raise ValueError("decay_days must be positive")
        checked_structured_outputs(self.structured_outputs)
