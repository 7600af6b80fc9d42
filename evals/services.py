"""Writes of the evaluation app: sets and their items, starting, cancelling and deleting runs.

The API, the staff pages and other apps (a review queue adding a question it saw) call these, so the checks
are the same wherever a change comes from. Permission checks are the caller's (see `evals.access`).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config_admin.conf import ai_config
from evals.importing import MAX_ITEMS, ImportFailed, ItemData, RowError, validate_item
from evals.models import EvalItem, EvalRun, EvalSet, RunStatus
from evals.selectors import document_aliases
from evals.tasks import run_evaluation
from evals.wakeup import wake_worker
from kb.access import editable_kb_ids, readable_kb_ids
from kb.models import Document, KnowledgeBase

# The set an answer goes to when the caller picks none, one per base, named in the site's language so that
# every user finds the same one.
DEFAULT_SET_NAME = gettext_noop("Questions from answers")

# Runs waiting or running at once over the whole server: each asks every item of its set, so more would only
# queue behind each other while holding their configuration snapshot ever longer.
MAX_PENDING_RUNS = 20


class EvalError(ValueError):
    """A change that cannot be made; the message says why (answered 400 or 409)."""

    conflict = False


class EvalConflict(EvalError):
    conflict = True


def _check_documents(items: Sequence[ItemData], *, kb_id: int) -> None:
    aliases = document_aliases(kb_id)
    errors = [RowError(item.row or n, "documents", _("no document named “%(name)s” in this knowledge base")
                       % {"name": name})
              for n, item in enumerate(items, 1) for name in item.documents if name.casefold() not in aliases]
    if errors:
        raise ImportFailed(errors)


def _item(eval_set: EvalSet, data: ItemData, position: int) -> EvalItem:
    return EvalItem(eval_set=eval_set, position=position, question=data.question, answers=data.answers,
                    documents=data.documents, category=data.category, history=data.history)


def eval_set_create(*, kb: KnowledgeBase, name: str, items: Sequence[ItemData], description: str = "",
                    created_by: Any = None) -> EvalSet:
    """A new set of `items` for `kb`; ImportFailed when an item names a document the base does not hold."""
    name = name.strip()
    if not name:
        raise EvalError(_("a set needs a name"))
    _check_documents(items, kb_id=kb.pk)
    try:
        with transaction.atomic():
            eval_set = EvalSet.objects.create(kb=kb, name=name[:128], description=description,
                                              created_by=created_by)
            EvalItem.objects.bulk_create([_item(eval_set, data, n) for n, data in enumerate(items)],
                                         batch_size=500)
    except IntegrityError:
        raise EvalConflict(_("this knowledge base already has a set with this name")) from None
    return eval_set


def eval_set_delete(*, eval_set: EvalSet) -> None:
    """The set with its items, runs and results; a run in progress stops at its next item."""
    eval_set.delete()


def add_item(eval_set: EvalSet, question: str, answers: Sequence[Any] = (), documents: Sequence[str] = (),
             category: str = "general", history: Sequence[str] = ()) -> EvalItem:
    """Append one question to `eval_set` (the page's form, "add to evaluation set" on a chat answer, a review
    queue). `answers`: alternatives, each a text or a list of texts that must all appear. Raises ImportFailed
    naming the field that is wrong."""
    errors: list[RowError] = []
    data = validate_item({"question": question, "answers": list(answers), "documents": list(documents),
                          "category": category, "history": list(history)}, row=1, errors=errors)
    if data is None:
        raise ImportFailed(errors)
    _check_documents([data], kb_id=eval_set.kb_id)
    with transaction.atomic():
        locked = EvalSet.objects.select_for_update().get(pk=eval_set.pk)
        count = locked.items.count()
        if count >= MAX_ITEMS:
            raise EvalError(_("at most %(n)s items a set") % {"n": MAX_ITEMS})
        last = locked.items.aggregate(last=Max("position"))["last"]
        item = _item(locked, data, (last + 1) if last is not None else 0)
        item.save()
        EvalSet.objects.filter(pk=locked.pk).update(updated_at=timezone.now())
    return item


def items_append(*, eval_set: EvalSet, items: Sequence[ItemData]) -> list[EvalItem]:
    """Add `items` (an imported file) after the set's last item: all of them or, when one names a document the
    base does not hold or the set would pass its size limit, none (ImportFailed / EvalError)."""
    if not items:
        raise EvalError(_("the file holds no items"))
    _check_documents(items, kb_id=eval_set.kb_id)
    with transaction.atomic():
        locked = EvalSet.objects.select_for_update().get(pk=eval_set.pk)
        if locked.items.count() + len(items) > MAX_ITEMS:
            raise EvalError(_("at most %(n)s items a set") % {"n": MAX_ITEMS})
        last = locked.items.aggregate(last=Max("position"))["last"]
        start = (last + 1) if last is not None else 0
        created = EvalItem.objects.bulk_create([_item(locked, data, start + n) for n, data in enumerate(items)],
                                               batch_size=500)
        EvalSet.objects.filter(pk=locked.pk).update(updated_at=timezone.now())
    return created


def default_set(*, kb: KnowledgeBase, created_by: Any = None) -> EvalSet:
    """The base's set for questions taken from answers, made on first use."""
    with translation.override(settings.LANGUAGE_CODE):
        name = _(DEFAULT_SET_NAME)
    eval_set, _created = EvalSet.objects.get_or_create(kb=kb, name=name, defaults={"created_by": created_by})
    return eval_set


def item_from_answer(*, user: Any, question: str, document_ids: Sequence[Any], kb_ids: Sequence[Any] = (),
                     eval_set: EvalSet | None = None, answers: Sequence[Any] = ()) -> EvalItem:
    """An answer's question as an item of `eval_set`, or of its base's default set when None (the base of the
    first cited document `user` edits, else of the first base the turn searched that it edits).

    `document_ids` are the documents the answer cited, in order: only those of the set's base enter the item,
    and only when `user` reads that base, so a document it cannot read is never named. Raises EvalError when
    `user` edits neither the set's base nor, without a set, any base the answer touched; ImportFailed as
    `add_item` does."""
    editable = editable_kb_ids(user)
    readable = readable_kb_ids(user)
    ids = [d for d in document_ids if isinstance(d, int) and not isinstance(d, bool)]
    documents = {pk: (kb_id, title) for pk, kb_id, title in
                 Document.objects.filter(pk__in=ids, kb_id__in=readable).values_list("pk", "kb_id", "title")}
    if eval_set is None:
        touched = [documents[d][0] for d in ids if d in documents] + [k for k in kb_ids if isinstance(k, int)]
        home = next((k for k in touched if k in editable), None)
        if home is None:
            raise EvalError(_("this answer touched no knowledge base you edit; choose a set"))
        eval_set = default_set(kb=KnowledgeBase.objects.get(pk=home), created_by=user)
    elif eval_set.kb_id not in editable:
        raise EvalError(_("only staff and editors of this knowledge base may add to its sets"))
    titles = list(dict.fromkeys(documents[d][1] for d in ids if d in documents and documents[d][0] == eval_set.kb_id))
    return add_item(eval_set, question, answers=answers, documents=titles)


def item_update(*, item: EvalItem, **fields: Any) -> EvalItem:
    """Change some of an item's question, answers, documents, category and history (validated like an import)."""
    current = {"question": item.question, "answers": item.answers, "documents": item.documents,
               "category": item.category, "history": item.history}
    current.update({k: v for k, v in fields.items() if k in current})
    errors: list[RowError] = []
    data = validate_item(current, row=1, errors=errors)
    if data is None:
        raise ImportFailed(errors)
    _check_documents([data], kb_id=item.eval_set.kb_id)
    for key in current:
        setattr(item, key, getattr(data, key))
    item.save()
    return item


def item_delete(*, item: EvalItem) -> None:
    item.delete()


def _config_snapshot() -> dict[str, Any]:
    snapshot = ai_config.snapshot()
    return json.loads(json.dumps({key: snapshot[key] for key in snapshot}, cls=DjangoJSONEncoder, default=str))


def run_start(*, eval_set: EvalSet, started_by: Any = None) -> EvalRun:
    """Queue a run of `eval_set` as background work; at most one unfinished run per set."""
    total = eval_set.items.count()
    if total == 0:
        raise EvalError(_("the set has no items to ask"))
    with transaction.atomic():
        EvalSet.objects.select_for_update().filter(pk=eval_set.pk).first()
        unfinished = EvalRun.objects.filter(status__in=(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.CANCELLING))
        if unfinished.filter(eval_set=eval_set).exists():
            raise EvalConflict(_("a run of this set is already in progress"))
        if unfinished.count() >= MAX_PENDING_RUNS:
            raise EvalConflict(_("too many runs are waiting; try again when some have finished"))
        run = EvalRun.objects.create(eval_set=eval_set, total=total, config=_config_snapshot(),
                                     created_by=started_by)

        def enqueue() -> None:
            result = run_evaluation.enqueue(run.pk)
            EvalRun.objects.filter(pk=run.pk).update(task_id=str(result.id))
            wake_worker()

        transaction.on_commit(enqueue)
    return run


def run_cancel(*, run: EvalRun) -> EvalRun:
    """A queued run ends at once; a running one stops within its current item and keeps what it answered."""
    now = timezone.now()
    if EvalRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(status=RunStatus.CANCELLED,
                                                                        finished_at=now):
        pass
    else:
        EvalRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(status=RunStatus.CANCELLING)
    run.refresh_from_db()
    return run


def run_delete(*, run: EvalRun) -> None:
    """The run and its results; a run in progress stops at its next step."""
    run.delete()
