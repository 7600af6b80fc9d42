"""The evaluation worker thread: asleep while no run is queued, woken as soon as one is."""
from __future__ import annotations

import threading

import pytest

from evals import services
from evals.importing import ItemData
from evals.wakeup import wait_for_work
from evals.worker import IDLE_CHECK_SECONDS, run_waiting
from tests.evals.conftest import drain

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_started_run_wakes_the_sleeping_worker_at_once_and_is_waiting_for_it(bases):
    eval_set = services.eval_set_create(kb=bases["hr"], name="wake", items=[ItemData(
        question="星河公司的婚假有几天？", answers=[["十天"]], documents=["休假制度"], category="leave", history=[])])
    assert not run_waiting()
    sleeper = threading.Thread(target=wait_for_work, args=(IDLE_CHECK_SECONDS,))
    sleeper.start()

    services.run_start(eval_set=eval_set)

    sleeper.join(timeout=5)
    assert not sleeper.is_alive()  # woken, not at the end of its idle wait
    assert run_waiting()
    assert drain() == 1
    assert not run_waiting()
