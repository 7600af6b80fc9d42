"""The fair-share pool: one owner holds at most its share of the threads; others get through meanwhile."""
from __future__ import annotations

import threading

import pytest

from docmind.fairshare import FairShareExecutor


def test_one_owner_holds_at_most_its_share_and_another_owner_runs_at_once():
    pool = FairShareExecutor(max_workers=4, per_owner=2)
    release = threading.Event()
    heavy = pool.for_owner("heavy")
    held = [heavy.submit(release.wait, 10) for _ in range(6)]  # six slow calls of one user
    try:
        assert pool.active("heavy") == 2
        other = pool.for_owner("light").submit(lambda: "answered")
        assert other.result(timeout=5) == "answered"  # not queued behind the heavy user's calls
    finally:
        release.set()
    assert all(f.result(timeout=10) for f in held)
    assert pool.active("heavy") == 0


def test_an_owners_waiting_calls_run_in_order_as_its_earlier_calls_finish():
    pool = FairShareExecutor(max_workers=2, per_owner=1)
    order: list[int] = []
    mine = pool.for_owner(1)
    futures = [mine.submit(order.append, i) for i in range(5)]
    for f in futures:
        f.result(timeout=5)
    assert order == [0, 1, 2, 3, 4]


def test_an_exception_reaches_the_caller_and_frees_the_slot():
    pool = FairShareExecutor(max_workers=1, per_owner=1)
    failing = pool.for_owner("x").submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=5)
    assert pool.for_owner("x").submit(lambda: 2).result(timeout=5) == 2
