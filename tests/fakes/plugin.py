"""Pytest plugin with the network-edge fakes (the scripted OpenAI-compatible server lives here)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import ScriptedOpenAIServer
from tests.fakes.silent_server import SilentServer


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAIServer]:
    """A running scripted OpenAI-compatible server (see tests/fakes/openai_server.py); stopped after the test."""
    server = ScriptedOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def silent_model_server() -> Iterator[SilentServer]:
    """A model URL whose port accepts connections and never answers (see tests/fakes/silent_server.py)."""
    server = SilentServer().start()
    try:
        yield server
    finally:
        server.stop()
