"""Memory vectors: embed, upsert, delete and rebuild; a failing vector write degrades recall, never loses a row."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from docmind import backends
from memory.compose import configured_memory_params
from memory.models import UserMemory
from memory.types import MemoryParams

log = logging.getLogger(__name__)


def params_or_config(params: MemoryParams | None) -> MemoryParams:
    if params is not None:
        return params

    return configured_memory_params()


def embedder_or_default(embedder: Any = None) -> Any:
    if embedder is not None:
        return embedder

    return backends.get_embedder()


def embed_memory(embedder: Any, text: str, params: MemoryParams) -> Any:
    try:
        return embedder.embed_passages([text[:params.vector_max_chars]])[0]
    except Exception as exc:  # EmbeddingError or a broken model: the row is kept, recall degrades
        log.warning("memory embedding failed, the row is stored without a vector: %s", exc)
        return None


def delete_vectors(index: Any, ids: Sequence[int]) -> None:
    if index is None or not ids:
        return
    try:
        index.delete(list(ids))
    except Exception:
        # Recall checks every hit against the database, so a vector left behind is never recalled.
        log.exception("memory vectors %s could not be deleted", list(ids))


def upsert_vector(index: Any, row: UserMemory, vector: Any, params: MemoryParams) -> bool:
    if index is None or vector is None:
        return False
    try:
        index.upsert(memory_id=row.pk, user_id=row.user_id, memory_type=row.memory_type,
                     text=row.content[:params.vector_max_chars], vector=vector)
        return True
    except Exception:
        log.exception("memory vector for #%s could not be written; recall of it is degraded", row.pk)
        return False


def memory_vectors_rebuild(*, index: Any, embedder: Any = None, params: MemoryParams | None = None) -> int:
    """Re-embed every active memory into an emptied index (another embedder, or a lost collection)."""
    params = params_or_config(params)
    embedder = embedder_or_default(embedder)
    count = 0
    for row in UserMemory.objects.filter(invalidated_at__isnull=True).iterator():
        if upsert_vector(index, row, embed_memory(embedder, row.content, params), params):
            count += 1
    return count
