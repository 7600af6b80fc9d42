"""`EvictionPlanner`: which active memories to archive when a user holds more than the cap."""
from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from memory.types import MemoryItem


def eviction_value(*, age_days: float, access_count: int, decay_days: float, access_weight: float) -> float:
    """exp(-ageDays/decay) + weight·log1p(accessCount): recent or often-used memories are worth keeping."""
    return math.exp(-max(0.0, age_days) / decay_days) + access_weight * math.log1p(max(0, access_count))


class EvictionPlanner:
    def __init__(self, *, cap: int, decay_days: float = 14.0, access_weight: float = 0.5) -> None:
        if cap <= 0:
            raise ValueError("cap must be positive")
        if decay_days <= 0 or access_weight < 0:
            raise ValueError("decay_days must be positive and access_weight not negative")
        self.cap, self.decay_days, self.access_weight = cap, decay_days, access_weight

    def run(self, *, items: Sequence[MemoryItem], now: datetime) -> list[int]:
        """Ids to evict, lowest value first; ties go to the older memory."""
        if len(items) <= self.cap:
            return []
        ranked = sorted(items, key=lambda m: (
            eviction_value(age_days=(now - m.created_at).total_seconds() / 86400, access_count=m.access_count,
                           decay_days=self.decay_days, access_weight=self.access_weight),
            m.created_at, m.id))
        return [m.id for m in ranked[:len(items) - self.cap]]
