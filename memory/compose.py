"""Turns a config snapshot into memory's values: the one place that reads the memory keys.

The chat turn reads them once, with its other stages (chat.pipeline.stages), and hands the value to recall,
extraction and the MEMORY scope; the REST API, the admin and the commands get them through the services."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from config_admin.conf import ai_config
from memory.types import MemoryParams


def memory_params(snapshot: Mapping[str, Any]) -> MemoryParams:
    return MemoryParams(
        enabled=bool(snapshot["memory.enabled"]),
        extraction_enabled=bool(snapshot["memory.extraction.enabled"]),
        duplicate_threshold=float(snapshot["memory.duplicate_threshold"]),
        supersede_threshold=float(snapshot["memory.supersede_threshold"]),
        calibrate=bool(snapshot["memory.similarity.calibrate"]),
        max_per_user=int(snapshot["memory.max_per_user"]),
        decay_days=float(snapshot["memory.eviction.decay_days"]),
        access_weight=float(snapshot["memory.eviction.access_weight"]),
        cache_ttl_seconds=int(snapshot["memory.cache_ttl_seconds"]),
        vector_max_chars=int(snapshot["memory.vector_max_chars"]),
        recall_top_k=int(snapshot["memory.recall.top_k"]),
        recall_min_score=float(snapshot["memory.recall.min_score"]),
        recall_margin=float(snapshot["memory.recall.margin"]),
        extract_model=str(snapshot["memory.extract_model"]),
        structured_outputs=str(snapshot["llm.structured_outputs"]),
    )


def configured_memory_params() -> MemoryParams:
    """The current configuration's values, for a caller that was handed none (a REST write, a command)."""
    return memory_params(ai_config.snapshot())
