"""The cache-aside contract, over the in-process cache and (when REDIS_URL is set) the real Redis."""
from __future__ import annotations

import threading
from datetime import UTC, datetime

from memory.cache import LocalMemoryCache
from memory.types import MemoryItem

TTL = 60


def _item(pk: int, user_id: int = 1, content: str = "我在上海工作", count: int = 0) -> MemoryItem:
    return MemoryItem(id=pk, user_id=user_id, memory_type="profile", content=content, access_count=count,
                      created_at=datetime(2026, 1, pk % 28 + 1, tzinfo=UTC))


def test_an_uncached_user_is_a_miss_and_an_empty_set_is_a_hit(any_cache):
    assert any_cache.get(7) is None
    assert any_cache.fill(7, [], any_cache.begin_read(7), TTL)
    assert any_cache.get(7) == []


def test_fill_then_get_returns_the_set_newest_first(any_cache):
    items = [_item(1, content="喜欢简洁 🧾"), _item(2, content="I prefer English")]
    assert any_cache.fill(1, items, any_cache.begin_read(1), TTL)
    assert [m.id for m in any_cache.get(1)] == [2, 1]
    assert any_cache.get(1)[1].content == "喜欢简洁 🧾"


def test_invalidate_drops_the_whole_key(any_cache):
    any_cache.fill(1, [_item(1), _item(2)], any_cache.begin_read(1), TTL)
    any_cache.invalidate(1)
    assert any_cache.get(1) is None


def test_a_fill_that_raced_an_invalidation_is_refused(any_cache):
    token = any_cache.begin_read(1)  # a reader starts loading from the database…
    any_cache.invalidate(1)  # …a writer changes the set meanwhile…
    assert not any_cache.fill(1, [_item(1)], token, TTL)  # …so the reader's old set is not cached
    assert any_cache.get(1) is None


def test_touch_changes_only_that_field(any_cache):
    any_cache.fill(1, [_item(1, count=3), _item(2, count=5)], any_cache.begin_read(1), TTL)
    any_cache.touch(1, 1)
    counts = {m.id: m.access_count for m in any_cache.get(1)}
    assert counts == {1: 4, 2: 5}


def test_touch_of_an_uncached_user_caches_nothing(any_cache):
    any_cache.touch(3, 9)
    assert any_cache.get(3) is None


def test_users_have_separate_keys(any_cache):
    any_cache.fill(1, [_item(1, user_id=1)], any_cache.begin_read(1), TTL)
    any_cache.fill(2, [_item(2, user_id=2)], any_cache.begin_read(2), TTL)
    any_cache.invalidate(1)
    assert any_cache.get(1) is None
    assert [m.id for m in any_cache.get(2)] == [2]


def test_concurrent_touches_of_different_memories_lose_no_update(any_cache):
    ids = list(range(1, 9))
    any_cache.fill(1, [_item(i) for i in ids], any_cache.begin_read(1), TTL)
    rounds = 25
    start = threading.Barrier(len(ids))

    def writer(pk: int) -> None:
        start.wait()
        for _ in range(rounds):
            any_cache.touch(1, pk)

    threads = [threading.Thread(target=writer, args=(pk,)) for pk in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {m.id: m.access_count for m in any_cache.get(1)} == {pk: rounds for pk in ids}


def test_local_cache_entries_expire_after_the_ttl():
    now = [100.0]
    cache = LocalMemoryCache(clock=lambda: now[0])
    cache.fill(1, [_item(1)], cache.begin_read(1), 10)
    now[0] = 111.0
    assert cache.get(1) is None


def test_the_redis_hash_expires_with_the_configured_ttl(redis_cache):
    redis_cache.fill(1, [_item(1)], redis_cache.begin_read(1), 7 * 24 * 3600)
    ttl = redis_cache._client.ttl(redis_cache.key(1))
    assert 7 * 24 * 3600 - 5 <= ttl <= 7 * 24 * 3600
    redis_cache.touch(1, 1)  # a touch updates a field, it does not extend the set's life
    assert redis_cache._client.ttl(redis_cache.key(1)) <= ttl
