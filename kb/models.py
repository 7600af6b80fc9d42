"""Knowledge-base tables: documents, their parent/child chunks, and the knowledge-domain map."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class DocumentStatus(models.TextChoices):
    PENDING = "pending", "pending"
    PROCESSING = "processing", "processing"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class Document(models.Model):
    """An uploaded file; the row doubles as its ingestion job (status is the queue state)."""

    title = models.CharField(max_length=255)
    file = models.FileField(upload_to="documents/%Y/%m/", max_length=500, blank=True)
    file_type = models.CharField(max_length=16)
    # KnowledgeDomain.domain_id as a plain slug: a domain row is created lazily by the refresh service.
    domain = models.CharField(max_length=64, default="general", db_index=True)
    status = models.CharField(max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.PENDING,
                              db_index=True)
    progress = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    # Attempts at processing; a job interrupted by crashes three times is failed, not retried forever.
    attempts = models.PositiveSmallIntegerField(default=0)
    checksum = models.CharField(max_length=64, unique=True)
    size = models.PositiveBigIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="documents")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["domain", "status"])]

    def __str__(self) -> str:
        return self.title


class ChunkLevel(models.IntegerChoices):
    PARENT = 0, "parent"
    CHILD = 1, "child"


class Chunk(models.Model):
    """A parent (level 0, ~1000 chars) or child (level 1, ~240 chars) piece; only children are indexed."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    level = models.PositiveSmallIntegerField(choices=ChunkLevel.choices)
    ordinal = models.PositiveIntegerField()
    content = models.TextField()
    # Document title › section headings: indexed with a child (it says what the text is about) and shown
    # once on its source card, never quoted as part of the text.
    context = models.CharField(max_length=300, blank=True, default="")
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField(default=0)
    # Set once the child's vector is in the vector store (the store's primary key is the chunk id).
    vector_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["document_id", "level", "ordinal"]
        indexes = [models.Index(fields=["document", "level", "ordinal"])]

    def __str__(self) -> str:
        return f"{self.document_id}/{self.get_level_display()}#{self.ordinal}"


class KnowledgeDomain(models.Model):
    """One row per domain (seed 003 `knowledge_domain`), with the live document count."""

    domain_id = models.CharField(max_length=64, unique=True)
    description = models.CharField(max_length=256, null=True, blank=True)
    when_to_retrieve = models.TextField(null=True, blank=True)
    document_count = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "knowledge_domain"
        ordering = ["domain_id"]

    def __str__(self) -> str:
        return self.domain_id
