"""Who may see and change evaluation sets and runs: staff and the editors of the set's knowledge base.

A set of a base the caller cannot read answers 404 like an unknown one; a base it reads but does not edit
answers 403 (as the knowledge-base API does).
"""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework.exceptions import PermissionDenied

from evals.models import EvalRun, EvalSet
from kb.access import editable_kb_ids, readable_kb_ids


def _check(user: Any, kb_id: int) -> None:
    if kb_id not in editable_kb_ids(user):
        if kb_id in readable_kb_ids(user):
            raise PermissionDenied(_("Only staff and editors of this knowledge base may evaluate it."))
        raise Http404(_("No such evaluation set."))


def editable_set(user: Any, pk: Any) -> EvalSet:
    eval_set = EvalSet.objects.select_related("kb").filter(pk=pk).first() if str(pk).isdigit() else None
    if eval_set is None:
        raise Http404(_("No such evaluation set."))
    _check(user, eval_set.kb_id)
    return eval_set


def editable_run(user: Any, pk: Any) -> EvalRun:
    run = EvalRun.objects.select_related("eval_set", "eval_set__kb").filter(pk=pk).first() \
        if str(pk).isdigit() else None
    if run is None:
        raise Http404(_("No such evaluation run."))
    _check(user, run.eval_set.kb_id)
    return run


def sets_for(user: Any) -> QuerySet[EvalSet]:
    return EvalSet.objects.filter(kb_id__in=editable_kb_ids(user)).select_related("kb")


def runs_for(user: Any) -> QuerySet[EvalRun]:
    return EvalRun.objects.filter(eval_set__kb_id__in=editable_kb_ids(user)).select_related("eval_set")
