"""Knowledge-base tables: documents, their parent/child chunks, and the knowledge-domain map."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class DocumentStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    PROCESSING = "processing", _("processing")
    READY = "ready", _("ready")
    FAILED = "failed", _("failed")


class Document(models.Model):
    """An uploaded file; the row doubles as its ingestion job (status is the queue state)."""

    title = models.CharField(_("title"), max_length=255)
    file = models.FileField(_("file"), upload_to="documents/%Y/%m/", max_length=500, blank=True)
    file_type = models.CharField(_("file type"), max_length=16)
    # KnowledgeDomain.domain_id as a plain slug: a domain row is created lazily by the refresh service.
    domain = models.CharField(_("domain"), max_length=64, default="general", db_index=True)
    status = models.CharField(_("status"), max_length=16, choices=DocumentStatus.choices,
                              default=DocumentStatus.PENDING, db_index=True)
    progress = models.PositiveSmallIntegerField(_("progress"), default=0)
    error = models.TextField(_("error"), blank=True, default="")
    # Attempts at processing; a job interrupted by crashes three times is failed, not retried forever.
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    checksum = models.CharField(_("checksum"), max_length=64, unique=True)
    size = models.PositiveBigIntegerField(_("size (bytes)"), default=0)
    metadata = models.JSONField(_("metadata"), default=dict, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="documents", verbose_name=_("uploaded by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["domain", "status"])]
        verbose_name = _("document")
        verbose_name_plural = _("documents")

    def __str__(self) -> str:
        return self.title


class ChunkLevel(models.IntegerChoices):
    PARENT = 0, _("parent")
    CHILD = 1, _("child")


class Chunk(models.Model):
    """A parent (level 0, ~1000 chars) or child (level 1, ~240 chars) piece; only children are indexed."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks",
                                 verbose_name=_("document"))
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children",
                               verbose_name=_("parent chunk"))
    level = models.PositiveSmallIntegerField(_("level"), choices=ChunkLevel.choices)
    ordinal = models.PositiveIntegerField(_("position"))
    content = models.TextField(_("content"))
    # Document title › section headings: indexed with a child (it says what the text is about) and shown
    # once on its source card, never quoted as part of the text.
    context = models.CharField(_("context"), max_length=300, blank=True, default="")
    char_start = models.PositiveIntegerField(_("start (character)"))
    char_end = models.PositiveIntegerField(_("end (character)"))
    token_count = models.PositiveIntegerField(_("tokens"), default=0)
    # Set once the child's vector is in the vector store (the store's primary key is the chunk id).
    vector_id = models.BigIntegerField(_("vector id"), null=True, blank=True)

    class Meta:
        ordering = ["document_id", "level", "ordinal"]
        indexes = [models.Index(fields=["document", "level", "ordinal"])]
        verbose_name = _("chunk")
        verbose_name_plural = _("chunks")

    def __str__(self) -> str:
        return f"{self.document_id}/{self.get_level_display()}#{self.ordinal}"


class KnowledgeDomain(models.Model):
    """One row per domain (`knowledge_domain`), with the live document count."""

    domain_id = models.CharField(_("domain"), max_length=64, unique=True)
    description = models.CharField(_("description"), max_length=256, null=True, blank=True)
    when_to_retrieve = models.TextField(_("when to retrieve"), null=True, blank=True)
    document_count = models.IntegerField(_("documents"), default=0)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "knowledge_domain"
        ordering = ["domain_id"]
        verbose_name = _("knowledge domain")
        verbose_name_plural = _("knowledge domains")

    def __str__(self) -> str:
        return self.domain_id
