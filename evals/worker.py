"""The evaluation worker: django-tasks-db's worker on the `eval` queue, in a thread of the server process.

A Milvus Lite file opens in one process only, so by default runs execute inside the server, one at a time,
in a thread at the lowest CPU priority that also gives way to chat turns (`evals.engine`). With a Milvus
server and a database server, `manage.py db_worker --queue-name eval` can run them in other processes instead.
"""
from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from docmind.indexes.vectorstore import is_lite_uri
from evals.models import EvalRun, RunStatus
from evals.tasks import run_evaluation
from evals.wakeup import wait_for_work

log = logging.getLogger(__name__)

QUEUE = "eval"
# While a run is being worked on: how often django-tasks-db's loop looks for the next (or waits out a locked
# database).
POLL_SECONDS = 1.0
# With nothing to do: how often the queue is looked at without a wake-up. A run started in this process wakes the
# worker at once; this only finds one queued by another process (a database server shared by several), or one a
# wake-up missed. Before, the worker opened a connection and a write transaction every second, for ever: half of an
# idle server's CPU.
IDLE_CHECK_SECONDS = 30.0
_started = threading.Lock()
_thread: threading.Thread | None = None


def _lowest_priority() -> None:
    """Niceness 19 for this thread only (Linux schedules threads one by one), so chat turns get the CPU first."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # not Linux, or not permitted: the chat gate still applies
        pass


def recover_interrupted_runs() -> int:
    """Runs left running by a server that stopped (this process is the only worker): queue them again, so they
    go on with the items they had not answered; those being cancelled end as cancelled."""
    if not is_lite_uri(str(settings.MILVUS_URI)):
        return 0  # other worker processes may be running these runs right now
    EvalRun.objects.filter(status=RunStatus.CANCELLING).update(status=RunStatus.CANCELLED, finished_at=timezone.now())
    resumed = 0
    for run_id in EvalRun.objects.filter(status=RunStatus.RUNNING).values_list("id", flat=True):
        result = run_evaluation.enqueue(run_id)
        EvalRun.objects.filter(pk=run_id).update(task_id=str(result.id))
        resumed += 1
    return resumed


def _loop() -> None:
    _lowest_priority()
    try:
        if resumed := recover_interrupted_runs():
            log.info("evaluation: %s interrupted run(s) queued again", resumed)
    except Exception:  # e.g. not migrated yet; the worker still starts
        log.exception("evaluation: interrupted runs not recovered")
    finally:
        close_old_connections()
    # batch: the worker returns once the queue is empty, and this thread sleeps until a run is queued.
    worker = Worker(queue_names=[QUEUE], interval=POLL_SECONDS, batch=True, backend_name="default",
                    startup_delay=False, max_tasks=None, worker_id=f"server-{os.getpid()}-{get_random_string(8)}",
                    excluded_queue_names=[])
    while True:
        try:
            if run_waiting():
                worker.run()
        except Exception:
            log.exception("evaluation worker failed; restarting it")
            time.sleep(POLL_SECONDS)
        finally:
            close_old_connections()
        wait_for_work(IDLE_CHECK_SECONDS)


def run_waiting() -> bool:
    """Whether a run of this queue is waiting: one read, no write transaction (the worker's own look takes one)."""
    return DBTaskResult.objects.ready().filter(backend_name="default", queue_name=QUEUE).exists()


def start_background_worker() -> None:
    """Start the daemon evaluation thread once per process (idempotent)."""
    global _thread
    with _started:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_loop, name="docmind-eval", daemon=True)
        _thread.start()
