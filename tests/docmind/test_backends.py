"""Backends are built once per process, even when the first callers arrive together."""
from __future__ import annotations

import threading

from docmind.backends import built_once


def test_concurrent_first_callers_build_a_backend_exactly_once():
    builds: list[int] = []
    callers = threading.Barrier(8)
    everyone_called = threading.Event()

    @built_once
    def backend() -> object:
        builds.append(1)
        assert everyone_called.wait(10)  # the build lasts until every caller is at its call
        return object()

    def call() -> None:
        if callers.wait(10) == 0:  # one thread, once all are here, lets the build finish
            everyone_called.set()
        got.append(backend())

    got: list[object] = []
    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert all(value is got[0] for value in got)


def test_cache_clear_makes_the_next_call_build_again():
    counter = iter(range(10))

    @built_once
    def backend() -> int:
        return next(counter)

    assert backend() == backend() == 0
    backend.cache_clear()
    assert backend() == 1


def test_reset_backends_forgets_every_backend_built_once_wherever_it_is_defined():
    from docmind.backends import reset_backends

    builds: list[int] = []

    @built_once
    def app_backend() -> object:  # stands for one an app defines (the KB lexical index, the memory cache…)
        builds.append(1)
        return object()

    first = app_backend()
    reset_backends()
    assert not app_backend.is_built
    assert app_backend() is not first and len(builds) == 2


def test_reset_indexes_forgets_only_the_stores():
    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store, reset_indexes

    embedder = get_embedder()
    store, lexical = get_vector_store(), get_lexical_index()
    reset_indexes()
    assert not get_vector_store.is_built and not get_lexical_index.is_built
    assert get_embedder() is embedder
    assert get_vector_store() is not store and get_lexical_index() is not lexical


def test_reset_backends_retires_a_replaced_backend_before_forgetting_it():
    from docmind.backends import reset_backends

    retired: list[object] = []

    class Store:
        def retire(self) -> None:  # a store with background work (snapshot saves) of its own
            retired.append(self)

    @built_once
    def store() -> Store:
        return Store()

    first = store()
    reset_backends()
    assert retired == [first]
    reset_backends()  # not built since: nothing is built just to be retired
    assert retired == [first]
