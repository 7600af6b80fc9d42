"""Writes to long-term memory: dedupe, supersede, write order, eviction, cache-aside, forgetting."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from docmind.embeddings import EmbeddingError
from memory.models import UserMemory
from memory.selectors import memory_active_items
from memory.services import (
    MemoryInputError,
    memory_forget,
    memory_forget_all,
    memory_restore,
    memory_save,
    memory_touch,
    memory_update,
)
from memory.types import MemoryCandidate, MemoryParams

pytestmark = pytest.mark.django_db


def save(user, text: str, kind: str = "preference", **kwargs):
    return memory_save(user_id=user.pk, candidate=MemoryCandidate(memory_type=kind, content=text), **kwargs)


def active(user) -> list[str]:
    return list(UserMemory.objects.filter(user=user, invalidated_at__isnull=True)
                .order_by("created_at").values_list("content", flat=True))


def test_exact_duplicate_adds_no_row(member, memory_index, memory_cache):
    first = save(member, "我更喜欢简洁的回答")
    again = save(member, "  我更喜欢简洁的回答 ")
    assert again.action == "exact-duplicate" and again.memory.pk == first.memory.pk
    assert UserMemory.objects.filter(user=member).count() == 1


def test_semantic_duplicate_keeps_one_with_the_new_wording_and_the_old_use_count(member, memory_index,
                                                                                   memory_cache):
    old = save(member, "我更喜欢简洁的回答").memory
    UserMemory.objects.filter(pk=old.pk).update(access_count=4)
    outcome = save(member, "我喜欢简短的回答")
    assert outcome.action == "duplicate" and outcome.replaced == (old.pk,)
    old.refresh_from_db()
    assert old.invalidated_reason == "duplicate" and old.superseded_by_id == outcome.memory.pk
    assert active(member) == ["我喜欢简短的回答"]
    assert outcome.memory.access_count == 4
    # The replaced vector is deleted physically.
    assert memory_index.texts([old.pk]) == {}


def test_a_changed_fact_supersedes_the_old_one(member, memory_index, memory_cache):
    old = save(member, "我在上海工作", "profile").memory
    outcome = save(member, "我在北京工作", "profile")
    assert outcome.action in ("supersede", "duplicate") and old.pk in outcome.replaced
    old.refresh_from_db()
    assert old.invalidated_at is not None and old.superseded_by_id == outcome.memory.pk
    assert active(member) == ["我在北京工作"]


def test_unrelated_memories_of_the_same_type_both_stay(member, memory_index, memory_cache):
    save(member, "我更喜欢简洁的回答")
    save(member, "我偏好用英文回答")
    save(member, "我在上海工作", "profile")
    save(member, "我对花生过敏", "fact")
    assert len(active(member)) == 4


def test_memories_of_another_type_are_never_conflicts(member, memory_index, memory_cache):
    save(member, "我在上海工作", "profile")
    save(member, "我在上海工作过三年", "fact")
    assert len(active(member)) == 2


def test_explicit_supersedes_from_the_extractor_apply_even_when_embeddings_disagree(member, memory_index,
                                                                                     memory_cache):
    old = save(member, "我每天早上跑步五公里", "fact").memory
    outcome = memory_save(user_id=member.pk, candidate=MemoryCandidate(
        memory_type="fact", content="我膝盖受伤了，医生让我暂停所有运动", supersedes=(old.pk,)))
    assert outcome.action == "supersede" and outcome.replaced == (old.pk,)
    assert active(member) == ["我膝盖受伤了，医生让我暂停所有运动"]


def test_explicit_supersedes_cannot_reach_another_users_memory(member, other_member, memory_index, memory_cache):
    theirs = save(other_member, "I work at Acme", "profile").memory
    memory_save(user_id=member.pk, candidate=MemoryCandidate(memory_type="profile", content="我是产品经理",
                                                             supersedes=(theirs.pk,)))
    theirs.refresh_from_db()
    assert theirs.invalidated_at is None


class _BrokenEmbedder:
    name, dim = "broken", 384

    def embed_passages(self, texts):
        raise EmbeddingError("embedding service down")

    def embed_query(self, text):
        raise EmbeddingError("embedding service down")


def test_embedding_failure_stores_the_row_only(member, memory_index, memory_cache):
    outcome = save(member, "我喜欢喝茶", embedder=_BrokenEmbedder())
    assert outcome.memory.pk and not outcome.vector_written
    assert active(member) == ["我喜欢喝茶"]
    assert memory_index.texts([outcome.memory.pk]) == {}


def test_a_database_failure_writes_no_vector(member, memory_index, memory_cache, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("database down")

    monkeypatch.setattr(UserMemory.objects, "create", boom)
    with pytest.raises(RuntimeError):
        save(member, "我喜欢喝茶")
    assert memory_index.all_ids() == set()


def test_eviction_keeps_the_cap_and_drops_the_lowest_value_first(member, memory_index, memory_cache):
    params = MemoryParams(max_per_user=3)
    texts = ["我对花生过敏", "我的猫叫小白", "我在学大提琴", "我开电动车"]
    rows = [save(member, t, "fact", params=params).memory for t in texts[:3]]
    now = timezone.now()
    # Old and never used < old but used often < new.
    UserMemory.objects.filter(pk=rows[0].pk).update(created_at=now - timedelta(days=60), access_count=0)
    UserMemory.objects.filter(pk=rows[1].pk).update(created_at=now - timedelta(days=90), access_count=20)
    outcome = save(member, texts[3], "fact", params=params)
    assert outcome.evicted == (rows[0].pk,)
    evicted = UserMemory.objects.get(pk=rows[0].pk)
    assert evicted.invalidated_reason == "evicted"
    assert set(active(member)) == set(texts[1:])
    assert memory_index.texts([rows[0].pk]) == {}


def test_cache_aside_refills_from_the_database_after_any_change(member, memory_index, memory_cache):
    save(member, "我在上海工作", "profile")
    first = memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
    assert [m.content for m in memory_cache.get(member.pk)] == [m.content for m in first]
    save(member, "我更喜欢简洁的回答")
    assert memory_cache.get(member.pk) is None  # the save dropped the whole key
    refilled = memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
    assert sorted(m.content for m in refilled) == ["我在上海工作", "我更喜欢简洁的回答"]


def test_touch_increments_in_the_database_and_only_that_cached_field(member, memory_index, memory_cache):
    a = save(member, "我在上海工作", "profile").memory
    b = save(member, "我对花生过敏", "fact").memory
    memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
    memory_touch(user_id=member.pk, memory_ids=[a.pk], cache=memory_cache, wait=True)
    memory_touch(user_id=member.pk, memory_ids=[a.pk], cache=memory_cache, wait=True)
    assert UserMemory.objects.get(pk=a.pk).access_count == 2
    assert {m.id: m.access_count for m in memory_cache.get(member.pk)} == {a.pk: 2, b.pk: 0}


def test_forget_is_a_soft_delete_with_a_physical_vector_delete(member, other_member, memory_index, memory_cache):
    mine = save(member, "我在上海工作", "profile").memory
    assert not memory_forget(user_id=other_member.pk, memory_id=mine.pk)  # not theirs
    assert memory_forget(user_id=member.pk, memory_id=mine.pk)
    mine.refresh_from_db()
    assert mine.invalidated_reason == "forgotten" and UserMemory.objects.filter(pk=mine.pk).exists()
    assert memory_index.texts([mine.pk]) == {}


def test_forget_all_clears_only_the_callers_memories(member, other_member, memory_index, memory_cache):
    save(member, "我在上海工作", "profile")
    save(member, "我更喜欢简洁的回答")
    save(other_member, "I prefer English answers")
    assert memory_forget_all(user_id=member.pk) == 2
    assert active(member) == [] and active(other_member) == ["I prefer English answers"]


def test_update_rewrites_content_and_vector(member, memory_index, memory_cache):
    row = save(member, "我在上海工作", "profile").memory
    memory_update(user_id=member.pk, memory_id=row.pk, content="我在杭州工作")
    row.refresh_from_db()
    assert row.content == "我在杭州工作" and row.source == "user"
    assert memory_index.texts([row.pk])[row.pk][2] == "我在杭州工作"
    with pytest.raises(MemoryInputError):
        memory_update(user_id=member.pk, memory_id=row.pk, content="   ")


def test_restore_makes_an_invalidated_memory_active_again(member, memory_index, memory_cache):
    row = save(member, "我在上海工作", "profile").memory
    memory_forget(user_id=member.pk, memory_id=row.pk)
    assert memory_restore(memories=[UserMemory.objects.get(pk=row.pk)]) == 1
    row.refresh_from_db()
    assert row.invalidated_at is None and memory_index.texts([row.pk])


def test_vectors_hold_the_truncated_text_with_the_user_filter(member, memory_index, memory_cache):
    long_text = "我负责" + "支付系统的对账与清结算，" * 40
    row = save(member, long_text, "profile").memory
    user_id, kind, text = memory_index.texts([row.pk])[row.pk]
    assert (user_id, kind) == (member.pk, "profile") and len(text) == 300


@pytest.mark.django_db(transaction=True)
def test_two_writers_saving_different_memories_of_one_user_lose_nothing(member, memory_index, memory_cache):
    texts = ["我对花生过敏", "我的猫叫小白", "我在学大提琴", "我开电动车", "我女儿明年上小学", "我每周游泳两次"]
    memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
    start = threading.Barrier(2)

    def writer(part: list[str]) -> None:
        start.wait()
        try:
            for text in part:
                save(member, text, "fact", params=MemoryParams(supersede_threshold=0.99, duplicate_threshold=0.99))
                memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(texts[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cached = memory_active_items(user_id=member.pk, cache=memory_cache, ttl_seconds=60)
    assert sorted(m.content for m in cached) == sorted(texts)
