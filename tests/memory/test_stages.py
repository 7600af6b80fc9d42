"""The memory stages as pure functions: conflicts, eviction, answer style, similarity scale."""
from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from memory.conflicts import Action, ConflictResolver
from memory.eviction import EvictionPlanner, eviction_value
from memory.similarity import SimilarityScale
from memory.style import parse_answer_style
from memory.types import MemoryCandidate, MemoryItem, MemoryParams

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def resolver() -> ConflictResolver:
    return ConflictResolver(duplicate_threshold=0.85, supersede_threshold=0.75)


@pytest.mark.parametrize(("neighbours", "explicit", "action", "replaced"), [
    ([], (), Action.NEW, ()),
    ([(1, 0.5, 0)], (), Action.NEW, ()),
    ([(1, 0.75, 0)], (), Action.SUPERSEDE, (1,)),
    ([(1, 0.8, 0), (2, 0.9, 3)], (), Action.DUPLICATE, (2,)),
    ([(1, 0.8, 0), (2, 0.77, 0)], (), Action.SUPERSEDE, (1, 2)),
    ([(1, 0.1, 0)], (7,), Action.SUPERSEDE, (7,)),
    ([(1, 0.9, 2)], (7,), Action.DUPLICATE, (1, 7)),
])
def test_conflict_resolution_by_thresholds_and_explicit_supersedes(neighbours, explicit, action, replaced):
    result = resolver().run(neighbours=neighbours, explicit=explicit)
    assert (result.action, result.replaced) == (action, replaced)


def test_a_duplicate_carries_the_old_use_count():
    assert resolver().run(neighbours=[(4, 0.95, 6)]).carried_access == 6


def test_resolver_rejects_supersede_above_duplicate():
    with pytest.raises(ValueError):
        ConflictResolver(duplicate_threshold=0.7, supersede_threshold=0.8)


def test_eviction_value_follows_the_formula():
    assert eviction_value(age_days=14, access_count=3, decay_days=14, access_weight=0.5) == pytest.approx(
        math.exp(-1) + 0.5 * math.log1p(3))


def _item(pk: int, days: float, uses: int) -> MemoryItem:
    return MemoryItem(id=pk, user_id=1, memory_type="fact", content=str(pk), access_count=uses,
                      created_at=NOW - timedelta(days=days))


def test_eviction_drops_the_lowest_values_down_to_the_cap():
    items = [_item(1, 0, 0), _item(2, 60, 0), _item(3, 60, 10), _item(4, 30, 0)]
    assert EvictionPlanner(cap=2).run(items=items, now=NOW) == [2, 4]
    assert EvictionPlanner(cap=4).run(items=items, now=NOW) == []


def test_eviction_rejects_a_zero_cap():
    with pytest.raises(ValueError):
        EvictionPlanner(cap=0)


@pytest.mark.parametrize(("texts", "language", "brevity"), [
    (["我更喜欢简洁的回答"], None, "short"),
    (["以后请用英文回答我"], "en", None),
    (["I prefer detailed answers"], None, "detailed"),
    (["Please answer in English, and keep answers short"], "en", "short"),
    (["我喜欢喝茶"], None, None),
    (["我不喜欢简短的回答"], None, None),
    (["I prefer short answers", "我更喜欢详细的回答"], None, "short"),  # the first (newest) wins
])
def test_answer_style_is_parsed_from_memories(texts, language, brevity):
    style = parse_answer_style(texts)
    assert (style.language, style.brevity) == (language, brevity)


def test_similarity_scale_maps_the_baseline_to_zero_and_one_to_one():
    scale = SimilarityScale(passage_baseline=0.8, query_baseline=0.75)
    assert scale.passages(0.8) == pytest.approx(0.0)
    assert scale.passages(1.0) == pytest.approx(1.0)
    assert scale.query(0.875) == pytest.approx(0.5)


def test_params_defaults_are_the_documented_ones():
    p = MemoryParams()
    assert (p.duplicate_threshold, p.supersede_threshold, p.max_per_user, p.decay_days, p.cache_ttl_seconds,
            p.vector_max_chars, p.extract_model) == (0.85, 0.75, 200, 14.0, 604800, 300, "qwen-flash")
    with pytest.raises(ValueError):
        MemoryParams(duplicate_threshold=0.7, supersede_threshold=0.8)


def test_a_candidate_needs_a_known_type_and_content():
    with pytest.raises(ValueError):
        MemoryCandidate(memory_type="secret", content="x")
    with pytest.raises(ValueError):
        MemoryCandidate(memory_type="fact", content="  ")
