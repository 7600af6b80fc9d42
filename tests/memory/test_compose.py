"""memory.compose: the one place that reads the memory keys of a config snapshot."""
import pytest

from config_admin.registry import KEYS
from memory.compose import memory_params
from memory.types import MemoryParams


def test_the_registry_defaults_give_the_memory_defaults():
    assert memory_params({k.key: k.default for k in KEYS}) == MemoryParams()


def test_each_memory_value_comes_from_its_own_row():
    snapshot = {k.key: k.default for k in KEYS}
    snapshot.update({"memory.recall.top_k": 9, "memory.recall.margin": 0.05, "memory.enabled": False})
    params = memory_params(snapshot)
    assert (params.recall_top_k, params.recall_margin, params.enabled) == (9, 0.05, False)


def test_the_extractor_asks_for_its_schema_as_llm_structured_outputs_says():
    snapshot = {k.key: k.default for k in KEYS}
    assert memory_params(snapshot).structured_outputs == "auto"
    snapshot["llm.structured_outputs"] = "off"
    assert memory_params(snapshot).structured_outputs == "off"


def test_an_unknown_structured_outputs_mode_is_refused():
    with pytest.raises(ValueError, match="structured_outputs"):
        MemoryParams(structured_outputs="maybe")
