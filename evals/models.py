"""Evaluation tables: a set of questions per knowledge base, its runs, and what each question got in a run."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from kb.models import KnowledgeBase


class EvalSet(models.Model):
    """Questions with their expected answers and documents, asked of one knowledge base (deleted with it)."""

    kb = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="eval_sets",
                           verbose_name=_("knowledge base"))
    name = models.CharField(_("name"), max_length=128)
    description = models.TextField(_("description"), blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", verbose_name=_("created by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["kb_id", "name", "id"]
        constraints = [models.UniqueConstraint(fields=["kb", "name"], name="eval_set_name_once_per_kb")]
        verbose_name = _("evaluation set")
        verbose_name_plural = _("evaluation sets")

    def __str__(self) -> str:
        return self.name


class EvalItem(models.Model):
    """One question. `answers` is a list of alternatives, each a list of parts that must all appear;
    `documents` are titles (or file names) of documents of the set's base; `history` holds earlier
    questions of the same conversation, asked first."""

    eval_set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="items",
                                 verbose_name=_("evaluation set"))
    position = models.PositiveIntegerField(_("position"), default=0)
    question = models.TextField(_("question"))
    answers = models.JSONField(_("expected answers"), default=list, blank=True)
    documents = models.JSONField(_("expected documents"), default=list, blank=True)
    category = models.CharField(_("category"), max_length=64, default="general")
    history = models.JSONField(_("earlier questions"), default=list, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["eval_set_id", "position", "id"]
        verbose_name = _("evaluation item")
        verbose_name_plural = _("evaluation items")

    def __str__(self) -> str:
        return self.question[:80]


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    CANCELLING = "cancelling", _("cancelling")
    CANCELLED = "cancelled", _("cancelled")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")


FINISHED = (RunStatus.CANCELLED, RunStatus.SUCCEEDED, RunStatus.FAILED)


class EvalRun(models.Model):
    """One pass over a set, as background work; `config` is the AI configuration it ran under."""

    eval_set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="runs",
                                 verbose_name=_("evaluation set"))
    status = models.CharField(_("status"), max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED,
                              db_index=True)
    done = models.PositiveIntegerField(_("items done"), default=0)
    total = models.PositiveIntegerField(_("items"), default=0)
    config = models.JSONField(_("AI configuration"), default=dict, blank=True)
    metrics = models.JSONField(_("metrics"), default=dict, blank=True)
    error = models.TextField(_("error"), blank=True, default="")
    task_id = models.CharField(_("task id"), max_length=64, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", verbose_name=_("started by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")

    def __str__(self) -> str:
        return f"{self.eval_set} #{self.pk}"

    @property
    def progress(self) -> int:
        """Percent of the items answered."""
        return 100 if self.total == 0 and self.status == RunStatus.SUCCEEDED else \
            (self.done * 100 // self.total if self.total else 0)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class EvalResult(models.Model):
    """What one item got in one run: the answer and its evidence, as the user would have seen them, scored."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results", verbose_name=_("run"))
    item = models.ForeignKey(EvalItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                             verbose_name=_("item"))
    question = models.TextField(_("question"))
    category = models.CharField(_("category"), max_length=64, default="general")
    answer = models.TextField(_("answer"), blank=True, default="")
    retrieved = models.JSONField(_("retrieved documents"), default=list, blank=True)
    cited = models.JSONField(_("cited documents"), default=list, blank=True)
    band = models.CharField(_("confidence band"), max_length=16, blank=True, default="")
    confidence = models.FloatField(_("confidence"), null=True, blank=True)
    flagged = models.BooleanField(_("flagged"), default=False)
    hit = models.BooleanField(_("answer hit"), default=False)
    cites_expected = models.BooleanField(_("cites an expected document"), default=False)
    recall_at_5 = models.FloatField(_("recall@5"), null=True, blank=True)
    reciprocal_rank = models.FloatField(_("reciprocal rank"), null=True, blank=True)
    wrong_unflagged = models.BooleanField(_("wrong and unflagged"), default=False)
    not_found = models.BooleanField(_("false “not found”"), default=False)
    answerable = models.BooleanField(_("answerable"), default=True)
    latency_ms = models.FloatField(_("latency (ms)"), default=0)
    error = models.CharField(_("error"), max_length=200, blank=True, default="")

    class Meta:
        ordering = ["run_id", "id"]
        verbose_name = _("evaluation result")
        verbose_name_plural = _("evaluation results")

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def passed(self) -> bool:
        return self.hit and not self.error
