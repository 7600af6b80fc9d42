"""Config keys are read by the factories that build the stages; the stages receive values."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("docmind", "config_admin", "kb", "memory", "chat")


def _sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for package in PACKAGES
            for p in sorted((ROOT / package).rglob("*.py")) if "migrations" not in p.parts}


def test_the_evidence_budget_key_is_read_in_one_place():
    readers = {path for path, text in _sources().items()
               if '"rag.context_max_tokens"' in text and path != "config_admin/registry.py"}
    assert readers == {"kb/retrieval/compose.py"}


def test_the_memory_keys_are_read_by_memory_compose_only():
    # memory.extract_model also names the cheap model the chat turn's summariser and the usage tiers use.
    key = re.compile(r'\["memory\.(?!extract_model)[a-z_.]+"\]')
    readers = {path for path, text in _sources().items() if key.search(text)}
    assert readers == {"memory/compose.py"}


def test_no_stage_parameters_read_the_config_themselves():
    assert not [path for path, text in _sources().items() if "def from_config" in text]


def test_every_prompt_budget_is_read_once_for_the_prompt_assembler():
    # The prompt assembler owns the budgets of the prompt's parts; a second reader (the agentic loop once
    # packed computations too) would enforce the same budget twice, possibly in different units.
    key = re.compile(r'\["prompt\.budget\.[a-z_]+"\]')
    readers = {path for path, text in _sources().items() if key.search(text)}
    assert readers == {"chat/pipeline/stages.py"}
