"""Evaluation runs: every item asked through the chat pipeline of the set's base only, scored and stored."""
from __future__ import annotations

import pytest

from evals import services
from evals.engine import execute_run, run_metrics
from evals.importing import ItemData
from evals.models import EvalRun, RunStatus
from tests.evals.conftest import drain

pytestmark = pytest.mark.django_db(transaction=True)


def _set(bases, items):
    return services.eval_set_create(kb=bases["hr"], name="smoke", items=[ItemData(**i) for i in items])


def test_a_run_asks_every_item_as_a_task_and_stores_results_and_metrics(bases):
    eval_set = _set(bases, [
        {"question": "星河公司的婚假有几天？", "answers": [["十天"]], "documents": ["休假制度"], "category": "leave",
         "history": []},
        {"question": "星河公司的婚假多久内要休完？", "answers": [["十天", "一年"], ["ten days"]],
         "documents": ["休假制度"], "category": "leave", "history": []},
        {"question": "星河公司的婚假有几天？", "answers": [["十天", "二十天"]], "documents": ["休假制度"],
         "category": "leave", "history": []},
    ])
    run = services.run_start(eval_set=eval_set)

    assert drain() == 1

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.done == 3 and run.progress == 100
    results = list(run.results.order_by("id"))
    assert [r.hit for r in results] == [True, True, False]  # all parts of an alternative must appear
    assert results[0].retrieved[0] == "休假制度" and results[0].cites_expected
    assert run.metrics["answer_hit"] == 0.667 and run.metrics["recall_at_5"] == 1.0 and run.metrics["mrr"] == 1.0
    assert run.metrics["categories"]["leave"]["n"] == 3 and run.metrics["p50_ms"] > 0
    assert run.config["cache.semantic.enabled"] in (True, False)  # the AI configuration it ran under


def test_a_run_sees_only_the_sets_knowledge_base(bases):
    """The finance base holds the answer; a set of the HR base must not find it."""
    eval_set = _set(bases, [{"question": "星河公司预算超过五万元需要谁签字？", "answers": [["财务总监"]],
                             "documents": [], "category": "other", "history": []}])
    run = services.run_start(eval_set=eval_set)
    drain()

    result = run.results.get()
    assert "预算规定" not in result.retrieved and "财务总监" not in result.answer


def test_the_runs_user_is_removed_when_it_ends(bases, django_user_model):
    eval_set = _set(bases, [{"question": "婚假几天？", "answers": [["十天"]], "documents": ["休假制度"],
                             "category": "leave", "history": []}])
    services.run_start(eval_set=eval_set)
    drain()
    assert not django_user_model.objects.filter(username__startswith="eval-run-").exists()


def test_a_cancelled_queued_run_asks_nothing(bases):
    eval_set = _set(bases, [{"question": "婚假几天？", "answers": [["十天"]], "documents": ["休假制度"],
                             "category": "leave", "history": []}])
    run = services.run_start(eval_set=eval_set)
    services.run_cancel(run=run)
    drain()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.results.count() == 0


def test_cancelling_a_running_run_stops_it_within_the_item_and_keeps_what_was_answered(bases):
    items = [{"question": f"婚假几天？({n})", "answers": [["十天"]], "documents": ["休假制度"], "category": "leave",
              "history": []} for n in range(5)]
    eval_set = _set(bases, items)
    run = EvalRun.objects.create(eval_set=eval_set, total=5)
    def busy() -> int:  # the gate asks between steps: cancel once the first answer is stored
        if run.results.exists():
            services.run_cancel(run=run)
        return 0

    execute_run(run_id=run.pk, busy=busy)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert 1 <= run.results.count() < 5 and run.metrics["n"] == run.results.count()


def test_a_deleted_run_stops_without_error(bases):
    eval_set = _set(bases, [{"question": f"婚假几天？({n})", "answers": [["十天"]], "documents": ["休假制度"],
                             "category": "leave", "history": []} for n in range(3)])
    run = EvalRun.objects.create(eval_set=eval_set, total=3)

    def busy() -> int:
        EvalRun.objects.filter(pk=run.pk).delete()
        return 0

    execute_run(run_id=run.pk, busy=busy)
    assert not EvalRun.objects.filter(pk=run.pk).exists()


def test_metrics_of_a_run_in_progress_cover_the_results_so_far(bases):
    eval_set = _set(bases, [{"question": "婚假几天？", "answers": [["十天"]], "documents": ["休假制度"],
                             "category": "leave", "history": []}])
    run = EvalRun.objects.create(eval_set=eval_set, total=1)
    assert run_metrics(run)["n"] == 0
