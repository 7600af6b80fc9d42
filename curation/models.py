"""Curated answers: a question and the answer an editor wrote for it, per knowledge base."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class QaSource(models.TextChoices):
    REVIEW = "review", _("review queue")
    MANUAL = "manual", _("written")
    IMPORT = "import", _("imported")


class QaPair(models.Model):
    """A question → answer pair of one knowledge base. A chat question close enough to `question` (by the
    embedder retrieval uses) is answered with `answer`, labelled as curated, to readers of the base only."""

    kb = models.ForeignKey("kb.KnowledgeBase", on_delete=models.CASCADE, related_name="qa_pairs",
                           verbose_name=_("knowledge base"))
    question = models.TextField(_("question"))
    answer = models.TextField(_("answer"))
    # Documents the answer rests on: cited with it, when the asker may read them.
    documents = models.ManyToManyField("kb.Document", blank=True, related_name="qa_pairs",
                                       verbose_name=_("documents"))
    # The question's embedding and the embedder that made it: a pair embedded by another model is re-embedded
    # before it is compared (vectors of two models are not comparable).
    vector = models.JSONField(_("vector"), null=True, blank=True, editable=False)
    embedder = models.CharField(_("embedder"), max_length=128, blank=True, default="", editable=False)
    is_active = models.BooleanField(_("active"), default=True)
    source = models.CharField(_("source"), max_length=16, choices=QaSource.choices, default=QaSource.MANUAL)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="qa_pairs", verbose_name=_("author"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["kb", "is_active"])]
        verbose_name = _("curated answer")
        verbose_name_plural = _("curated answers")

    def __str__(self) -> str:
        return self.question[:80]
