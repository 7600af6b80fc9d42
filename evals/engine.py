"""One evaluation run: every item of the set asked through the chat pipeline, as a reader of the set's base only.

The asking and the scoring are `chat.evaluation`'s (`Asker`, `ask_all`, `score`, `summary`): the same engine
as `manage.py eval_answers`. This module adds what a run in the product needs: results saved one by one
(progress, and what was answered survives a cancel or a restart), cancellation within an item, chat first
(`ChatFirstGate`), and a user of its own that reads exactly the set's knowledge base.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.crypto import get_random_string

from chat import runner as chat_runner
from chat.evaluation.runner import Asker, ask_all
from chat.evaluation.scoring import PERSONAL, EvalQuestion, Outcome, Scored, reliability, summary
from docmind.llm.budget import call_budget
from docmind.roles import MEMBER, user_set_role
from evals.gate import ChatFirstGate
from evals.models import EvalItem, EvalResult, EvalRun, RunStatus
from evals.selectors import document_aliases
from kb.models import KbAccess
from kb.services import kb_grant
from memory.services import memory_forget_all

log = logging.getLogger(__name__)

# A run gives way to users' chat turns for at most this long at a time, so that a server that is never idle
# still finishes its runs (one pipeline step per wait).
YIELD_MAX_SECONDS = 30.0
# How often a running item looks whether its run was cancelled or deleted (one indexed read).
CANCEL_CHECK_SECONDS = 1.0
# Waiting for chat counts against the model-call deadline of the item; this much is added to the turn's own.
GATE_ALLOWANCE_SECONDS = 300.0


def chat_turns_in_flight() -> int:
    return chat_runner.get_turn_runner().in_flight()


class _Watch:
    """Whether the run is still running, read from the database at most once a `CANCEL_CHECK_SECONDS`."""

    def __init__(self, run_id: int, cancel: threading.Event) -> None:
        self.run_id, self.cancel, self._last = run_id, cancel, 0.0

    def stopped(self, *, now: bool = False) -> bool:
        if self.cancel.is_set():
            return True
        if not now and time.monotonic() - self._last < CANCEL_CHECK_SECONDS:
            return False
        self._last = time.monotonic()
        status = EvalRun.objects.filter(pk=self.run_id).values_list("status", flat=True).first()
        if status != RunStatus.RUNNING:
            self.cancel.set()
        return self.cancel.is_set()


def _claim(run_id: int) -> EvalRun | None:
    """The run, now running; None when it was cancelled or deleted before it started."""
    now = timezone.now()
    claimed = EvalRun.objects.filter(pk=run_id, status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).update(
        status=RunStatus.RUNNING, started_at=Coalesce(F("started_at"), now))
    if not claimed:
        EvalRun.objects.filter(pk=run_id, status=RunStatus.CANCELLING).update(status=RunStatus.CANCELLED,
                                                                              finished_at=now)
        return None
    return EvalRun.objects.select_related("eval_set").get(pk=run_id)


def _run_user(run: EvalRun, suffix: str) -> Any:
    """A member of its own with a read grant on the set's base and nothing else: the run's answers come from that
    base only, through the same permission filter as every chat turn, and its conversations and memories touch
    no one's. Deleted when the run ends."""
    # A fresh name each time: an existing account is never taken over (nor deleted at the end).
    user = get_user_model()(username=f"eval-run-{run.pk}{suffix}-{get_random_string(10)}")
    user.set_unusable_password()
    user.save()
    user_set_role(user=user, role=MEMBER)
    kb_grant(kb=run.eval_set.kb, access=KbAccess.READ, user=user)
    return user


def _drop_user(user: Any) -> None:
    try:
        memory_forget_all(user_id=user.pk)
    finally:
        user.delete()


def _questions(run: EvalRun, aliases: dict[str, str]) -> list[EvalQuestion]:
    """The items not answered yet in this run (a resumed run asks only the rest), in the set's order."""
    answered = EvalResult.objects.filter(run=run, item__isnull=False).values_list("item_id", flat=True)
    items = EvalItem.objects.filter(eval_set_id=run.eval_set_id).exclude(pk__in=answered).order_by("position", "id")
    return [EvalQuestion(id=str(item.pk), question=item.question, category=item.category,
                         answers=tuple(tuple(a) if len(a) > 1 else a[0] for a in item.answers if a),
                         documents=tuple(aliases.get(d.casefold(), d) for d in item.documents),
                         history=tuple(item.history))
            for item in items.iterator(chunk_size=500)]


def _result(run: EvalRun, row: Scored) -> EvalResult:
    outcome = row.outcome
    return EvalResult(
        run=run, item_id=int(row.question.id), question=row.question.question, category=row.question.category,
        answer=outcome.answer, retrieved=list(outcome.retrieved[:10]), cited=list(outcome.cited), band=outcome.band,
        confidence=outcome.score, flagged=outcome.flagged, hit=row.hit, cites_expected=row.cites_gold,
        recall_at_5=row.recall_at_5, reciprocal_rank=row.reciprocal_rank, wrong_unflagged=row.wrong_unflagged,
        not_found=row.false_not_found, answerable=row.question.answerable, latency_ms=outcome.latency_ms,
        error=outcome.error[:200])


def _budget(cancel: threading.Event) -> Callable[[], AbstractContextManager[Any]]:
    def enter() -> AbstractContextManager[Any]:
        limits = chat_runner.turn_limits()
        return call_budget(seconds=limits.deadline_seconds + GATE_ALLOWANCE_SECONDS, cancel=cancel, max_retries=1,
                           call_timeout=limits.call_timeout_seconds)

    return enter


def execute_run(*, run_id: int, busy: Callable[[], int] = chat_turns_in_flight,
                yield_max_seconds: float = YIELD_MAX_SECONDS) -> None:
    """Ask every item of the run's set and store the results and metrics; returns when done, cancelled, deleted
    or failed (the reason is stored)."""
    run = _claim(run_id)
    if run is None:
        return
    cancel = threading.Event()
    watch = _Watch(run_id, cancel)
    users: list[Any] = []
    try:
        aliases = document_aliases(run.eval_set.kb_id)
        titles = dict(run.eval_set.kb.documents.values_list("id", "title"))
        questions = _questions(run, aliases)
        users = [_run_user(run, ""), _run_user(run, "-statements")]
        gate = ChatFirstGate(busy=busy, max_wait=yield_max_seconds, stopped=watch.stopped)
        common = {"names_by_id": titles, "kb": [run.eval_set.kb_id], "cancel": cancel, "pause": gate,
                  "budget": _budget(cancel)}
        asker, statements = Asker(user=users[0], **common), Asker(user=users[1], **common)
        for row in ask_all(questions, asker, statements):
            if watch.stopped(now=True):
                break
            try:
                _result(run, row).save()
            except IntegrityError:  # the run was deleted meanwhile
                cancel.set()
                break
            EvalRun.objects.filter(pk=run_id).update(done=F("done") + 1)
            gate()
        _finish(run_id, RunStatus.CANCELLED if cancel.is_set() else RunStatus.SUCCEEDED)
    except Exception as exc:
        log.exception("evaluation run %s failed", run_id)
        _finish(run_id, RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:500])
    finally:
        for user in users:
            try:
                _drop_user(user)
            except Exception:
                log.exception("evaluation run %s: its user %s was not deleted", run_id, user.pk)


def _finish(run_id: int, status: str, *, error: str = "") -> None:
    run = EvalRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    EvalRun.objects.filter(pk=run_id).update(status=status, error=error, finished_at=timezone.now(),
                                             metrics=run_metrics(run))


def _scored(results: Iterable[EvalResult]) -> list[Scored]:
    """Stored results as the engine's rows, for its summaries."""
    rows = []
    for r in results:
        question = EvalQuestion(id=str(r.item_id or r.pk), question="", category=r.category,
                                documents=("expected",) if r.answerable else ())
        outcome = Outcome(band=r.band, error=r.error, latency_ms=r.latency_ms, low_confidence=r.flagged)
        rows.append(Scored(question=question, outcome=outcome, hit=r.hit, cites_gold=r.cites_expected,
                           retrieved_at_5=bool(r.recall_at_5), recall_at_5=r.recall_at_5,
                           reciprocal_rank=r.reciprocal_rank, false_not_found=r.not_found,
                           wrong_unflagged=r.wrong_unflagged, right=r.hit))
    return rows


def _public(stats: dict) -> dict:
    return {"n": stats["n"], "recall_at_5": stats["recall_at_5"], "mrr": stats["mrr"],
            "answer_hit": stats["answer_hit"], "cites_expected": stats["cites_gold"], "flagged": stats["flagged"],
            "wrong_unflagged": stats["wrong_unflagged"], "false_not_found": stats["false_not_found"],
            "p50_ms": stats["p50_ms"], "p95_ms": stats["p95_ms"], "errors": stats["errors"]}


def run_metrics(run: EvalRun) -> dict:
    """Metrics of the results stored so far: overall, per category, and the share right per confidence band."""
    fields = ("item_id", "category", "band", "error", "latency_ms", "flagged", "hit", "cites_expected",
              "recall_at_5", "reciprocal_rank", "not_found", "wrong_unflagged", "answerable")
    rows = _scored(EvalResult.objects.filter(run_id=run.pk).only("id", *fields).iterator(chunk_size=1000))
    categories = sorted({r.question.category for r in rows})
    knowledge = [r for r in rows if r.question.category not in PERSONAL]
    return {**_public(summary(rows)),
            "categories": {c: _public(summary([r for r in rows if r.question.category == c])) for c in categories},
            "reliability": reliability(knowledge)}
