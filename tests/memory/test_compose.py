"""memory.compose: the one place that reads the memory keys of a config snapshot."""
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
