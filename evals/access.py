"""Who may see and change evaluation sets and runs: administrators and the editors of the set's knowledge base.

kb.permissions.require_kb_edit answers, as for every base-guarded write: a set of a base the caller cannot see
answers 404 like an unknown one; a base it sees (a view grant is enough) but does not edit answers 403.
"""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from evals.models import EvalRun, EvalSet
from kb.access import editable_kb_ids
from kb.models import KnowledgeBase
from kb.permissions import editable_kb, require_kb_edit


def _refusal() -> str:
    return _("Only staff and editors of this knowledge base may evaluate it.")


def evaluable_kb(user: Any, pk: int) -> KnowledgeBase:
    """The knowledge base `pk` if `user` may make evaluation sets of it."""
    return editable_kb(user, pk, refusal=_refusal())


def editable_set(user: Any, pk: Any) -> EvalSet:
    eval_set = EvalSet.objects.select_related("kb").filter(pk=pk).first() if str(pk).isdigit() else None
    if eval_set is None:
        raise Http404(_("No such evaluation set."))
    require_kb_edit(user, eval_set.kb_id, not_found=_("No such evaluation set."), refusal=_refusal())
    return eval_set


def editable_run(user: Any, pk: Any) -> EvalRun:
    run = EvalRun.objects.select_related("eval_set", "eval_set__kb").filter(pk=pk).first() \
        if str(pk).isdigit() else None
    if run is None:
        raise Http404(_("No such evaluation run."))
    require_kb_edit(user, run.eval_set.kb_id, not_found=_("No such evaluation run."), refusal=_refusal())
    return run


def sets_for(user: Any) -> QuerySet[EvalSet]:
    return EvalSet.objects.filter(kb_id__in=editable_kb_ids(user)).select_related("kb")


def runs_for(user: Any) -> QuerySet[EvalRun]:
    return EvalRun.objects.filter(eval_set__kb_id__in=editable_kb_ids(user)).select_related("eval_set")
