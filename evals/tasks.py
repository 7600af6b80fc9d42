"""Background tasks of the evaluation app, on Django's task API (queue `eval`)."""
from __future__ import annotations

from django.tasks import task


@task(queue_name="eval")
def run_evaluation(run_id: int) -> None:
    from evals.engine import execute_run

    execute_run(run_id=run_id)
