"""Background tasks of the evaluation app, on Django's task API (queue `eval`)."""
from __future__ import annotations

from django.tasks import task


@task(queue_name="eval")
def run_evaluation(run_id: int) -> None:
    # heavy: the engine loads the chat pipeline (pydantic, httpx2: about 0.2 s); django.setup() loads this module
    from evals.engine import execute_run

    execute_run(run_id=run_id)
