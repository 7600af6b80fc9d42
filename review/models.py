"""One review item per answer that a reader marked unhelpful or that was flagged low or not found."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ReviewReason(models.TextChoices):
    THUMBS_DOWN = "thumbs_down", _("marked unhelpful")
    LOW = "low", _("low confidence")
    NOT_FOUND = "not_found", _("not found")


class ReviewStatus(models.TextChoices):
    OPEN = "open", _("open")
    RESOLVED = "resolved", _("resolved")
    DISMISSED = "dismissed", _("dismissed")
    CURATED = "curated", _("answered by a curated answer")


class ReviewItem(models.Model):
    """What an editor needs to judge an answer without opening the conversation: the question, the answer,
    its evidence and confidence, and why it is here. `kb` is the base whose editors see it; `kbs` every base
    its evidence came from (an editor sees the item only if it reads them all)."""

    message = models.OneToOneField("chat.Message", on_delete=models.CASCADE, related_name="review",
                                   verbose_name=_("answer message"))
    kb = models.ForeignKey("kb.KnowledgeBase", on_delete=models.CASCADE, related_name="review_items",
                           verbose_name=_("knowledge base"))
    kbs = models.JSONField(_("knowledge bases of the evidence"), default=list, blank=True)
    reason = models.CharField(_("reason"), max_length=16, choices=ReviewReason.choices, db_index=True)
    comment = models.TextField(_("reader's comment"), blank=True, default="")
    question = models.TextField(_("question"))
    answer = models.TextField(_("answer"), blank=True, default="")
    evidence = models.JSONField(_("evidence"), default=list, blank=True)
    confidence_score = models.FloatField(_("confidence score"), null=True, blank=True)
    confidence_band = models.CharField(_("confidence"), max_length=16, blank=True, default="")
    status = models.CharField(_("status"), max_length=16, choices=ReviewStatus.choices, default=ReviewStatus.OPEN)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+", verbose_name=_("resolved by"))
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)
    qa_pair = models.ForeignKey("curation.QaPair", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="review_items", verbose_name=_("curated answer"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kb", "status", "-created_at"]),
                   models.Index(fields=["status", "-created_at"])]
        verbose_name = _("review item")
        verbose_name_plural = _("review queue")

    def __str__(self) -> str:
        return self.question[:80]
