"""Backends are built once per process, even when the first callers arrive together."""
from __future__ import annotations

import threading
import time

from docmind.backends import built_once


def test_concurrent_first_callers_build_a_backend_exactly_once():
    builds: list[int] = []

    @built_once
    def backend() -> object:
        builds.append(1)
        time.sleep(0.2)  # long enough for every caller to arrive during the build
        return object()

    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(backend())) for _ in range(8)]
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
