"""Every declared key parses its default, and values are validated by type and range."""
import pytest

from config_admin.registry import KEYS, ConfigValueError, UnknownConfigKey, spec


@pytest.mark.parametrize("item", KEYS, ids=lambda k: k.key)
def test_every_default_round_trips_through_its_text_form(item):
    assert item.parse(item.render(item.default)) == item.default


@pytest.mark.parametrize("key,raw", [
    ("mmr.lambda", "1.5"),
    ("mmr.lambda", "-0.1"),
    ("mmr.lambda", "nan"),
    ("rag.context_max_tokens", "0"),
    ("rag.context_max_tokens", "-5"),
    ("rag.context_max_tokens", "12.5"),
    ("agentic.enabled", "maybe"),
    ("mmr.similarity", "euclid"),
    ("grader.mode", "always"),
])
def test_bad_values_are_refused_with_the_key_named(key, raw):
    with pytest.raises(ConfigValueError, match=key.replace(".", r"\.")):
        spec(key).parse(raw)


def test_unknown_key_raises():
    with pytest.raises(UnknownConfigKey):
        spec("no.such.key")


def test_seeded_defaults_match_the_seed_document():
    expected = {
        "rag.context_max_tokens": 3000, "prompt.budget.aux_max_tokens": 2500,
        "prompt.budget.computations_max_tokens": 1500, "prompt.budget.memory_max_tokens": 600,
        "prompt.budget.history_max_tokens": 1000, "prompt.budget.total_max_tokens": 6000,
        "prompt.history.rolling_summary": True, "prompt.history.summary_max_tokens": 300,
        "agentic.enabled": True, "agentic.max_iterations": 4, "sandbox.enabled": False,
        "mmr.lambda": 0.7, "mmr.similarity": "cosine", "compress.near_dup_jaccard": 0.85,
        "grader.mode": "heuristic", "retrieval.web_compensation_on_low": True,
        "grader.web_fallback_on_ambiguous": True, "llm.main_model": "qwen-plus",
        "llm.small_model": "qwen-turbo", "memory.extract_model": "qwen-flash",
    }
    assert {k: spec(k).default for k in expected} == expected
