"""Reads of long-term memory: a user's active set through the cache-aside hash, lists, the supersede chain."""
from __future__ import annotations

from typing import Any

from django.db import DatabaseError
from django.db.models import QuerySet

from memory.cache import MemoryCache
from memory.models import UserMemory
from memory.types import MemoryItem, MemoryStoreUnavailable


def memory_list(*, user: Any) -> QuerySet[UserMemory]:
    """The user's own active memories, newest first (the API and the "My memories" page)."""
    return UserMemory.objects.filter(user=user, invalidated_at__isnull=True).order_by("-created_at", "-id")


def _item(row: UserMemory) -> MemoryItem:
    return MemoryItem(id=row.id, user_id=row.user_id, memory_type=row.memory_type, content=row.content,
                      access_count=row.access_count, created_at=row.created_at)


def memory_items_from_db(*, user_id: int) -> list[MemoryItem]:
    """The active set straight from the system of record; MemoryStoreUnavailable when it cannot be read."""
    try:
        rows = list(UserMemory.objects.filter(user_id=user_id, invalidated_at__isnull=True)
                    .order_by("-created_at", "-id"))
    except DatabaseError as exc:
        raise MemoryStoreUnavailable(f"user_memory could not be read: {exc}") from exc
    return [_item(r) for r in rows]


def memory_active_items(*, user_id: int, cache: MemoryCache, ttl_seconds: int) -> list[MemoryItem]:
    """Cache-aside: the cached set, else the database's (then cached unless a change raced the read).

    Raises MemoryStoreUnavailable when the database is unreachable and nothing is cached: an empty
    list always means "this user has no active memory", never "we could not tell".
    """
    try:
        cached = cache.get(user_id)
    except Exception:  # a cache outage costs a database read, never an answer
        cached, token = None, None
    else:
        if cached is not None:
            return cached
        token = _token(cache, user_id)
    items = memory_items_from_db(user_id=user_id)
    if token is not None:
        try:
            cache.fill(user_id, items, token, ttl_seconds)
        except Exception:
            pass
    return items


def _token(cache: MemoryCache, user_id: int) -> str | None:
    try:
        return cache.begin_read(user_id)
    except Exception:
        return None


def memory_chain(*, memory: UserMemory) -> list[UserMemory]:
    """Oldest to newest: the memories this one replaced (transitively) and those that replaced it."""
    before: list[UserMemory] = []
    frontier = [memory.pk]
    seen = {memory.pk}
    while frontier:
        rows = list(UserMemory.objects.filter(superseded_by_id__in=frontier).exclude(pk__in=seen))
        before.extend(rows)
        frontier = [r.pk for r in rows]
        seen.update(frontier)
    after: list[UserMemory] = []
    current = memory
    while current.superseded_by_id is not None and current.superseded_by_id not in seen:
        current = UserMemory.objects.get(pk=current.superseded_by_id)
        seen.add(current.pk)
        after.append(current)
    return sorted(before, key=lambda m: (m.created_at, m.pk)) + [memory] + after
