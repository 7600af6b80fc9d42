"""Builds the memory store's backends once per process: the vector index and the cache-aside hash."""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django_redis import get_redis_connection

import docmind.backends
from docmind.backends import built_once
from memory.cache import LocalMemoryCache, MemoryCache, RedisMemoryCache
from memory.vector_writes import memory_vectors_rebuild
from memory.vectors import MilvusMemoryIndex

log = logging.getLogger(__name__)


@built_once
def get_memory_index() -> MilvusMemoryIndex:
    # heavy: the indexes load scipy (about 0.3 s) and Milvus on first use, not at django.setup()
    from docmind.indexes.stores import get_vector_store

    store = get_vector_store()
    embedder = docmind.backends.get_embedder()
    # The same MilvusClient as the KB vectors: a Milvus Lite file is opened once per process.
    index = MilvusMemoryIndex(client=store.client, dim=embedder.dim, embedder_name=embedder.name,
                              in_process=store.is_lite)
    if index.emptied_for_new_embedder:
        count = memory_vectors_rebuild(index=index)
        log.info("memory vectors rebuilt for %s: %d active memories", embedder.name, count)
    return index


@built_once
def get_memory_cache() -> MemoryCache:
    """Redis (one hash per user) when REDIS_URL is set, else the in-process implementation of the same contract."""
    if settings.REDIS_URL:
        # The cache framework's own prefix and version, so that `cache.clear()` style tooling sees these keys.
        return RedisMemoryCache(client=get_redis_connection("default"), key_prefix=cache.make_key(""))
    return LocalMemoryCache()
