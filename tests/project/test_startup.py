"""project.startup: what a server process loads in the background before its first question."""
from __future__ import annotations

import threading

import pytest


def test_the_warm_up_measures_the_embedders_language_means(monkeypatch):
    measured = threading.Event()

    class Means:
        def means(self):
            measured.set()
            return None

    import docmind.backends
    import docmind.bilingual
    import docmind.indexes.stores
    from project import startup

    class Store:
        def warm_up(self):
            pass

    monkeypatch.setattr(docmind.indexes.stores, "get_vector_store", lambda: Store())
    monkeypatch.setattr(docmind.indexes.stores, "get_lexical_index", lambda: Store())
    monkeypatch.setattr(docmind.bilingual, "get_lexicon", lambda: None)
    monkeypatch.setattr(docmind.backends, "get_language_means", lambda: Means())
    startup._warm_up_indexes()
    assert measured.wait(10), "the language means were not measured at start"


@pytest.fixture(autouse=True)
def _no_leftover_warm_up():
    yield
    for thread in threading.enumerate():
        if thread.name == "docmind-warm-up":
            thread.join(10)


def test_routing_starts_nothing_and_the_server_entry_point_starts_the_warm_up(tmp_path):
    # Importing the application to route requests (a test, a tool) must not load the dictionary, the embedder and
    # the indexes in the background, as a server process does once at start.
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = ("import threading\n"
             "import project.routing\n"
             "print(sorted(t.name for t in threading.enumerate()))\n"
             "import project.asgi\n"
             "print(sorted(t.name for t in threading.enumerate()))\n")
    env = {**os.environ, "DOCMIND_DATA_DIR": str(tmp_path), "DOCMIND_INGEST_WORKER": "false",
           "DOCMIND_EVAL_WORKER": "false"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    routed, served = done.stdout.strip().splitlines()[-2:]
    assert "docmind-warm-up" not in routed and "knowledge-index" not in routed
    assert "docmind-warm-up" in served
