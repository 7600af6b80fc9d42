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
