"""Recall: vector hits checked against the system of record; "no active memory" ≠ "database unreachable"."""
from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from memory.cache import LocalMemoryCache
from memory.models import UserMemory
from memory.recall import MemoryRecaller
from memory.selectors import memory_active_items
from memory.services import memory_forget, memory_save
from memory.similarity import scale_for
from memory.types import MemoryCandidate, MemoryStoreUnavailable

pytestmark = pytest.mark.django_db


def save(user, text: str, kind: str = "fact"):
    return memory_save(user_id=user.pk, candidate=MemoryCandidate(memory_type=kind, content=text)).memory


def recaller(embedder, index, load_active, **kwargs) -> MemoryRecaller:
    return MemoryRecaller(embed_query=embedder.embed_query, index=index, load_active=load_active,
                          scale=scale_for(embedder), **kwargs)


def from_db(user_id: int):
    return memory_active_items(user_id=user_id, cache=LocalMemoryCache(), ttl_seconds=60)


def test_the_relevant_memory_is_recalled_and_unrelated_ones_are_not(member, embedder, memory_index, memory_cache):
    save(member, "我对花生过敏")
    save(member, "我的猫叫小白")
    result = recaller(embedder, memory_index, from_db, top_k=1).run(user_id=member.pk, query="我能吃花生酱吗？")
    assert [m.item.content for m in result.memories] == ["我对花生过敏"]
    assert not result.degraded


def test_profile_instructions_and_answer_style_are_always_recalled(member, embedder, memory_index, memory_cache):
    save(member, "我在上海的一家银行做后端开发", "profile")
    save(member, "我更喜欢简洁的回答", "preference")
    save(member, "我喜欢喝茶", "preference")
    result = recaller(embedder, memory_index, from_db, min_score=0.99).run(user_id=member.pk,
                                                                          query="如何配置负载均衡？")
    assert sorted(m.item.content for m in result.memories) == ["我在上海的一家银行做后端开发", "我更喜欢简洁的回答"]
    assert all(m.score is None for m in result.memories)


def test_a_vector_left_behind_never_resurrects_an_invalidated_memory(member, embedder, memory_index, memory_cache):
    row = save(member, "我对花生过敏")
    memory_forget(user_id=member.pk, memory_id=row.pk)
    # The physical delete failed, say: the stale vector is still in the index.
    memory_index.upsert(memory_id=row.pk, user_id=member.pk, memory_type="fact", text=row.content,
                        vector=embedder.embed_passages([row.content])[0])
    result = recaller(embedder, memory_index, from_db).run(user_id=member.pk, query="我能吃花生酱吗？")
    assert result.memories == () and not result.degraded
    assert any("skipped" in line for line in result.trace)


def test_database_unreachable_falls_back_to_the_index_text_and_says_so(member, embedder, memory_index, memory_cache):
    save(member, "我对花生过敏")

    def unreachable(user_id: int):
        raise MemoryStoreUnavailable("down")

    result = recaller(embedder, memory_index, unreachable).run(user_id=member.pk, query="我能吃花生酱吗？")
    assert [m.item.content for m in result.memories] == ["我对花生过敏"]
    assert result.memories[0].from_index and "database unreachable" in result.degraded


def test_no_active_memory_is_an_empty_list_not_an_error(member):
    assert memory_active_items(user_id=member.pk, cache=LocalMemoryCache(), ttl_seconds=60) == []


def test_a_database_error_is_raised_as_unavailable_not_as_empty(member, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("server has gone away")

    monkeypatch.setattr(connection, "cursor", refuse)
    with pytest.raises(MemoryStoreUnavailable):
        memory_active_items(user_id=member.pk, cache=LocalMemoryCache(), ttl_seconds=60)


def test_a_cached_set_is_served_while_the_database_is_down(member, memory_index, memory_cache, monkeypatch):
    save(member, "我对花生过敏")
    cache = LocalMemoryCache()
    memory_active_items(user_id=member.pk, cache=cache, ttl_seconds=60)

    def refuse(*args, **kwargs):
        raise OperationalError("server has gone away")

    monkeypatch.setattr(connection, "cursor", refuse)
    assert [m.content for m in memory_active_items(user_id=member.pk, cache=cache, ttl_seconds=60)] == ["我对花生过敏"]


def test_recall_is_isolated_between_users(member, other_member, embedder, memory_index, memory_cache):
    save(other_member, "我对花生过敏")
    save(other_member, "我在上海工作", "profile")
    mine = recaller(embedder, memory_index, from_db).run(user_id=member.pk, query="我能吃花生酱吗？")
    assert mine.memories == ()
    # Even a loader that (wrongly) returned another user's rows would not leak them.
    leaky = recaller(embedder, memory_index, lambda _uid: from_db(other_member.pk))
    assert leaky.run(user_id=member.pk, query="我能吃花生酱吗？").memories == ()
    assert memory_index.search(embedder.embed_query("花生"), user_id=member.pk, k=5) == []
    assert UserMemory.objects.filter(user=member).count() == 0
