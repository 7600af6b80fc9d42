"""Every write to long-term memory. Order: database (the commit point) → vector index (a failure only
degrades recall) → drop the user's cache key → eviction. Invalidation is a soft delete in the database
and a physical delete of the vector."""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.db import close_old_connections, connections, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from memory.backends import get_memory_cache, get_memory_index
from memory.conflicts import Action, ConflictResolver, Resolution
from memory.eviction import EvictionPlanner
from memory.models import MemorySource, UserMemory
from memory.selectors import memory_items_from_db
from memory.similarity import RAW, scale_for
from memory.types import TYPES, MemoryCandidate, MemoryParams
from memory.vector_writes import (
    delete_vectors,
    embed_memory,
    embedder_or_default,
    params_or_config,
    upsert_vector,
)

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 1000
_SPACES = re.compile(r"\s+")
# Conflict search looks at a few neighbours: more than one old memory may be replaced by one new.
CONFLICT_NEIGHBOURS = 5
# Saves of one user are serialised in this process so that two extractions never both miss each other.
_user_locks = [threading.Lock() for _ in range(64)]
# Access counts are written off the answer's critical path, in order, by one worker.
_touch_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-touch")


class MemoryInputError(ValueError):
    """Content or type the memory store refuses; the message is shown to the user."""


@dataclass(frozen=True)
class SaveOutcome:
    memory: UserMemory | None
    action: str  # "new" | "duplicate" | "supersede" | "exact-duplicate"
    replaced: tuple[int, ...] = ()
    vector_written: bool = False
    evicted: tuple[int, ...] = ()
    reason: str = ""




def normalise_content(content: str) -> str:
    text = _SPACES.sub(" ", str(content or "")).strip()
    if not text:
        raise MemoryInputError(_("The memory is empty."))
    if len(text) > MAX_CONTENT_CHARS:
        raise MemoryInputError(_("A memory holds at most %(limit)d characters.") % {"limit": MAX_CONTENT_CHARS})
    return text


def _check_type(memory_type: str) -> str:
    if memory_type not in TYPES:
        raise MemoryInputError(_("The memory type must be one of: %(types)s.") % {"types": ", ".join(TYPES)})
    return memory_type


def _stores(index: Any = None, cache: Any = None) -> tuple[Any, Any]:
    """The memory vector index (None when it cannot be opened: it is derived) and the cache."""
    if cache is None:
        cache = get_memory_cache()
    if index is None:
        try:
            index = get_memory_index()
        except Exception:  # without the vector index memories are still saved and listed
            log.exception("memory vector index unavailable")
    return index, cache


def _drop_cache(cache: Any, user_id: int) -> None:
    try:
        cache.invalidate(user_id)
    except Exception:
        log.exception("memory cache invalidation failed for user %s", user_id)


def _neighbours(index: Any, embedder: Any, vector: Any, *, user_id: int, memory_type: str,
                params: MemoryParams) -> list[tuple[int, float, int]]:
    """Active same-type memories near the new one, checked against the database, calibrated."""
    if index is None or vector is None:
        return []

    try:
        hits = index.search(vector, user_id=user_id, k=CONFLICT_NEIGHBOURS, memory_types=[memory_type], strong=True)
    except Exception:
        log.exception("memory conflict search failed; only the extractor's supersedes apply")
        return []
    scale = scale_for(embedder) if params.calibrate else RAW
    counts = dict(UserMemory.objects.filter(pk__in=[h for h, _ in hits], user_id=user_id, memory_type=memory_type,
                                            invalidated_at__isnull=True).values_list("id", "access_count"))
    return [(pk, scale.passages(cos), counts[pk]) for pk, cos in hits if pk in counts]


def memory_save(*, user_id: int, candidate: MemoryCandidate, source: str = MemorySource.EXPLICIT,
                params: MemoryParams | None = None, index: Any = None, cache: Any = None,
                embedder: Any = None) -> SaveOutcome:
    """Save one memory with two-layer conflict handling (embedding neighbours + explicit supersedes)."""
    params = params_or_config(params)
    content = normalise_content(candidate.content)
    memory_type = _check_type(candidate.memory_type)
    index, cache = _stores(index, cache)
    embedder = embedder_or_default(embedder)
    with _user_locks[int(user_id) % len(_user_locks)]:
        exact = (UserMemory.objects.filter(user_id=user_id, invalidated_at__isnull=True, content=content)
                 .order_by("-created_at").first())
        if exact is not None:
            return SaveOutcome(memory=exact, action="exact-duplicate", reason=f"same text as #{exact.pk}")
        vector = embed_memory(embedder, content, params)
        explicit = list(UserMemory.objects.filter(pk__in=list(candidate.supersedes), user_id=user_id,
                                                  invalidated_at__isnull=True).values_list("id", flat=True))
        resolution: Resolution = ConflictResolver(
            duplicate_threshold=params.duplicate_threshold, supersede_threshold=params.supersede_threshold,
        ).run(neighbours=_neighbours(index, embedder, vector, user_id=user_id, memory_type=memory_type,
                                     params=params), explicit=explicit)
        with transaction.atomic():  # the commit point: if it fails, nothing else is written
            row = UserMemory.objects.create(user_id=user_id, memory_type=memory_type, content=content,
                                            source=source, access_count=resolution.carried_access)
            if resolution.replaced:
                reason = "duplicate" if resolution.action is Action.DUPLICATE else "superseded"
                UserMemory.objects.filter(pk__in=resolution.replaced, user_id=user_id,
                                          invalidated_at__isnull=True).update(
                    invalidated_at=timezone.now(), invalidated_reason=reason, superseded_by=row,
                    updated_at=timezone.now())
        written = upsert_vector(index, row, vector, params)
        delete_vectors(index, resolution.replaced)
        _drop_cache(cache, user_id)
        evicted = _evict(user_id=user_id, params=params, index=index, cache=cache)
    return SaveOutcome(memory=row, action=resolution.action.value, replaced=resolution.replaced,
                       vector_written=written, evicted=tuple(evicted), reason=resolution.reason)


def _evict(*, user_id: int, params: MemoryParams, index: Any, cache: Any) -> list[int]:
    items = memory_items_from_db(user_id=user_id)
    doomed = EvictionPlanner(cap=params.max_per_user, decay_days=params.decay_days,
                             access_weight=params.access_weight).run(items=items, now=timezone.now())
    if not doomed:
        return []
    UserMemory.objects.filter(pk__in=doomed, invalidated_at__isnull=True).update(
        invalidated_at=timezone.now(), invalidated_reason="evicted", updated_at=timezone.now())
    delete_vectors(index, doomed)
    _drop_cache(cache, user_id)
    return doomed


def memory_update(*, user_id: int, memory_id: int, content: str | None = None, memory_type: str | None = None,
                  params: MemoryParams | None = None, index: Any = None, cache: Any = None,
                  embedder: Any = None) -> UserMemory:
    """The user corrects one of their memories; it is theirs to word, so no conflict handling applies."""
    params = params_or_config(params)
    index, cache = _stores(index, cache)
    embedder = embedder_or_default(embedder)
    with transaction.atomic():
        row = UserMemory.objects.select_for_update().get(pk=memory_id, user_id=user_id, invalidated_at__isnull=True)
        if content is not None:
            row.content = normalise_content(content)
        if memory_type is not None:
            row.memory_type = _check_type(memory_type)
        row.source = MemorySource.USER
        row.save(update_fields=["content", "memory_type", "source", "updated_at"])
    upsert_vector(index, row, embed_memory(embedder, row.content, params), params)
    _drop_cache(cache, user_id)
    return row


def _invalidate(*, user_id: int, ids: Sequence[int], reason: str, index: Any, cache: Any) -> int:
    with transaction.atomic():
        changed = UserMemory.objects.filter(pk__in=list(ids), user_id=user_id, invalidated_at__isnull=True).update(
            invalidated_at=timezone.now(), invalidated_reason=reason, updated_at=timezone.now())
    delete_vectors(index, ids)
    _drop_cache(cache, user_id)
    return changed


def memory_forget(*, user_id: int, memory_id: int, reason: str = "forgotten", index: Any = None,
                  cache: Any = None) -> bool:
    """Soft-delete one of the user's own memories; False when it is not theirs or not active."""
    index, cache = _stores(index, cache)
    return _invalidate(user_id=user_id, ids=[memory_id], reason=reason, index=index, cache=cache) == 1


def memory_forget_all(*, user_id: int, index: Any = None, cache: Any = None) -> int:
    index, cache = _stores(index, cache)
    ids = list(UserMemory.objects.filter(user_id=user_id, invalidated_at__isnull=True).values_list("id", flat=True))
    return _invalidate(user_id=user_id, ids=ids, reason="cleared", index=index, cache=cache)


def memory_invalidate(*, memories: Sequence[UserMemory], reason: str = "admin") -> int:
    """Admin action: soft-delete, whoever owns them."""
    index, cache = _stores()
    total = 0
    for user_id in {m.user_id for m in memories}:
        ids = [m.pk for m in memories if m.user_id == user_id]
        total += _invalidate(user_id=user_id, ids=ids, reason=reason, index=index, cache=cache)
    return total


def memory_restore(*, memories: Sequence[UserMemory], params: MemoryParams | None = None) -> int:
    """Admin action: make invalidated memories active again (vector rewritten, cache dropped, cap kept)."""
    params = params_or_config(params)
    index, cache = _stores()
    embedder = embedder_or_default()
    restored = 0
    for row in memories:
        if row.invalidated_at is None:
            continue
        with transaction.atomic():
            changed = UserMemory.objects.filter(pk=row.pk, invalidated_at__isnull=False).update(
                invalidated_at=None, invalidated_reason="", superseded_by=None, updated_at=timezone.now())
        if not changed:
            continue
        row.refresh_from_db()
        restored += 1
        upsert_vector(index, row, embed_memory(embedder, row.content, params), params)
        _drop_cache(cache, row.user_id)
        _evict(user_id=row.user_id, params=params, index=index, cache=cache)
    return restored


def memory_touch(*, user_id: int, memory_ids: Sequence[int], cache: Any = None, wait: bool = False) -> None:
    """Count a use of each recalled memory: an atomic increment in the database, and only that field of the
    cached hash; queued to a worker so the answer never waits for it."""
    ids = [int(i) for i in memory_ids]
    if not ids:
        return
    if cache is None:
        cache = get_memory_cache()

    def work() -> None:
        try:
            UserMemory.objects.filter(pk__in=ids, user_id=user_id).update(access_count=F("access_count") + 1)
            for memory_id in ids:
                cache.touch(user_id, memory_id)
        except Exception:
            log.exception("memory access counts not updated for user %s", user_id)

    def on_worker() -> None:
        # The worker thread outlives requests: its connection is checked before and closed after.
        close_old_connections()
        try:
            work()
        finally:
            connections.close_all()

    if wait:
        work()
    else:
        _touch_pool.submit(on_worker)
