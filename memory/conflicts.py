"""`ConflictResolver`: what a new memory does to its nearest active neighbours of the same type."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Action(StrEnum):
    NEW = "new"
    DUPLICATE = "duplicate"  # same memory reworded: the new wording replaces it, keeping its use count
    SUPERSEDE = "supersede"  # the new memory replaces it (a changed preference or fact)


@dataclass(frozen=True)
class Resolution:
    action: Action
    replaced: tuple[int, ...] = ()  # ids of active memories the new one invalidates
    carried_access: int = 0
    reason: str = ""


class ConflictResolver:
    """Embedding layer of conflict handling; the extractor's explicit `supersedes` is the other layer
    (contradictions that embeddings miss). Neighbours are (memory id, calibrated similarity, access count)
    of the user's active memories of the new memory's type."""

    def __init__(self, *, duplicate_threshold: float, supersede_threshold: float) -> None:
        if supersede_threshold > duplicate_threshold:
            raise ValueError("supersede_threshold must not exceed duplicate_threshold")
        self.duplicate_threshold = duplicate_threshold
        self.supersede_threshold = supersede_threshold

    def run(self, *, neighbours: Sequence[tuple[int, float, int]], explicit: Sequence[int] = ()) -> Resolution:
        explicit_ids = tuple(dict.fromkeys(int(i) for i in explicit))
        best = max(neighbours, key=lambda n: n[1], default=None)
        if best is not None and best[1] >= self.duplicate_threshold:
            replaced = tuple(dict.fromkeys((best[0], *explicit_ids)))
            return Resolution(Action.DUPLICATE, replaced, carried_access=best[2],
                              reason=f"similarity {best[1]:.3f} ≥ {self.duplicate_threshold} with #{best[0]}")
        close = tuple(i for i, score, _ in sorted(neighbours, key=lambda n: -n[1]) if score >= self.supersede_threshold)
        replaced = tuple(dict.fromkeys((*close, *explicit_ids)))
        if replaced:
            why = [f"similarity ≥ {self.supersede_threshold} with #{i}" for i in close]
            why += [f"extractor: supersedes #{i}" for i in explicit_ids if i not in close]
            return Resolution(Action.SUPERSEDE, replaced, reason="; ".join(why))
        return Resolution(Action.NEW)
