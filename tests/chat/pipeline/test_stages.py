"""The chat turn's stage factory: the one place that reads config keys and hands values to the stages."""
import pytest

from chat.pipeline.stages import prompt_params
from chat.prompt import PromptParams
from config_admin.registry import KEYS
from docmind.evidence import EvidenceBudget
from kb.retrieval.compose import evidence_budget


def test_the_registry_defaults_give_the_prompt_defaults():
    snapshot = {k.key: k.default for k in KEYS}
    assert prompt_params(snapshot, evidence_budget(snapshot)) == PromptParams()


def test_each_prompt_budget_comes_from_its_own_row():
    snapshot = {k.key: k.default for k in KEYS}
    snapshot.update({"rag.context_max_tokens": 1234, "prompt.budget.memory_max_tokens": 55})
    params = prompt_params(snapshot, evidence_budget(snapshot))
    assert (params.evidence, params.memory_max_tokens) == (EvidenceBudget(1234), 55)


@pytest.mark.django_db
def test_every_consumer_of_a_turn_gets_the_one_evidence_budget_read_from_the_config():
    from chat.pipeline.stages import build_stages

    snapshot = {k.key: k.default for k in KEYS}
    snapshot["rag.context_max_tokens"] = 1234
    stages = build_stages(snapshot, kb_ids=frozenset())
    budget = stages.retrieval_params.evidence
    assert budget == EvidenceBudget(1234)
    assert stages.assembler.params.evidence is budget
    assert stages.direct_reader().budget is budget
    assert stages.retriever.params.evidence is budget
