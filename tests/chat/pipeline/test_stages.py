"""The chat turn's stage factory: the one place that reads config keys and hands values to the stages."""
from chat.pipeline.stages import prompt_params
from chat.prompt import PromptParams
from config_admin.registry import KEYS


def test_the_registry_defaults_give_the_prompt_defaults():
    assert prompt_params({k.key: k.default for k in KEYS}) == PromptParams()


def test_each_prompt_budget_comes_from_its_own_row():
    snapshot = {k.key: k.default for k in KEYS}
    snapshot.update({"rag.context_max_tokens": 1234, "prompt.budget.memory_max_tokens": 55})
    params = prompt_params(snapshot)
    assert (params.context_max_tokens, params.memory_max_tokens) == (1234, 55)
