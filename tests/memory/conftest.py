"""Memory fixtures: an emptied docmind_memory collection and a fresh cache per test (the database rolls back)."""
from __future__ import annotations

import os

import pytest

from memory.cache import LocalMemoryCache, RedisMemoryCache
from memory.types import MemoryParams
from tests.conftest import require_services


@pytest.fixture
def memory_index():
    from memory.backends import get_memory_index

    index = get_memory_index()
    index.clear()  # database rows roll back after a test, Milvus rows do not; ids (SQLite) come round again
    return index


@pytest.fixture
def embedder():
    from docmind.backends import get_embedder

    return get_embedder()


@pytest.fixture
def params() -> MemoryParams:
    return MemoryParams()


def _redis_cache(prefix: str) -> RedisMemoryCache:
    from django_redis import get_redis_connection

    client = get_redis_connection("default")
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    return RedisMemoryCache(client=client, key_prefix=prefix)


def _redis_or_skip() -> RedisMemoryCache:
    if not os.environ.get("REDIS_URL"):
        if require_services() and os.environ.get("DATABASE_URL"):
            pytest.fail("REDIS_URL must be set when the services run")
        pytest.skip("REDIS_URL is not set")
    return _redis_cache(f"docmind-test-{os.getpid()}:")


@pytest.fixture(params=["local", "redis"])
def any_cache(request):
    """Both implementations of the cache contract; Redis only when REDIS_URL names it (CI sets it)."""
    if request.param == "local":
        return LocalMemoryCache()
    return _redis_or_skip()


@pytest.fixture
def redis_cache() -> RedisMemoryCache:
    return _redis_or_skip()


@pytest.fixture
def memory_cache():
    """The cache the services use by default in this run (Redis with REDIS_URL), emptied of memory keys."""
    from memory.backends import get_memory_cache

    cache = get_memory_cache()
    if isinstance(cache, LocalMemoryCache):
        cache._sets.clear()
    else:
        client = cache._client
        for key in client.scan_iter(cache.key(0).rsplit(":", 1)[0] + ":*"):
            client.delete(key)
    return cache
