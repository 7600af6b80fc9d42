"""Knowledge-base tables: documents, their parent/child chunks, and the knowledge-domain map."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models, transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from simple_history import register as simple_history_register
from simple_history.models import HistoricalRecords

DEFAULT_KB_NAME = "默认知识库 / Default"
# Before knowledge bases existed members read every document and kb_editors changed them all: the default
# base keeps exactly that until someone restricts it.
DEFAULT_GRANTS = (("member", "read"), ("kb_editor", "edit"))


class KnowledgeBaseManager(models.Manager):
    def default(self) -> KnowledgeBase:
        """The default knowledge base, created with its readers when missing (a fresh or flushed database)."""
        # Read first: every upload without a `kb` asks, and the locking read below is a write transaction
        # (SQLite's BEGIN IMMEDIATE) that would queue behind ingestion's writes for a row that nearly always exists.
        existing = self.filter(is_default=True).order_by("id").first()
        if existing is not None:
            return existing
        with transaction.atomic():
            existing = self.select_for_update().filter(is_default=True).order_by("id").first()
            if existing is not None:
                return existing
            default, _ = self.get_or_create(name=DEFAULT_KB_NAME, defaults={"is_default": True})
            if not default.is_default:
                self.filter(pk=default.pk).update(is_default=True)
                default.is_default = True
            for name, access in DEFAULT_GRANTS:
                group, _ = Group.objects.get_or_create(name=name)
                KbGrant.objects.get_or_create(kb=default, group=group, defaults={"access": access})
            return default


class KnowledgeBase(models.Model):
    """A set of documents with its own readers and editors; every document belongs to exactly one."""

    objects = KnowledgeBaseManager()

    name = models.CharField(_("name"), max_length=128, unique=True)
    description = models.TextField(_("description"), blank=True, default="")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="owned_kbs", verbose_name=_("owner"))
    # The knowledge base that uploads without a `kb` go to; kb.access.kb_default keeps it to one row.
    is_default = models.BooleanField(_("default"), default=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = _("knowledge base")
        verbose_name_plural = _("knowledge bases")

    def __str__(self) -> str:
        return self.name


def default_kb_id() -> int:
    """The default knowledge base's id: where a document or domain goes when no base is named."""
    return KnowledgeBase.objects.default().pk


class KbAccess(models.TextChoices):
    # view: answers and citation snippets only, never the original file, the reader's page or a download.
    VIEW = "view", pgettext_lazy("knowledge-base access", "view")
    READ = "read", _("read")
    EDIT = "edit", _("edit")


class KbGrant(models.Model):
    """View, read or edit access to one knowledge base for one user or one group (exactly one of the two)."""

    kb = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="grants",
                           verbose_name=_("knowledge base"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="kb_grants", verbose_name=_("user"))
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="kb_grants", verbose_name=_("group"))
    access = models.CharField(_("access"), max_length=8, choices=KbAccess.choices, default=KbAccess.READ)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(user__isnull=False, group__isnull=True)
                                   | Q(user__isnull=True, group__isnull=False), name="kb_grant_user_xor_group",
                                   violation_error_message=_("Give a grant to a user or to a group, not both "
                                                             "or neither.")),
            # NULLs are distinct in a unique index, so these hold for the user and the group rows alike.
            models.UniqueConstraint(fields=["kb", "user"], name="kb_grant_user_once"),
            models.UniqueConstraint(fields=["kb", "group"], name="kb_grant_group_once"),
        ]
        verbose_name = _("knowledge-base grant")
        verbose_name_plural = _("knowledge-base grants")

    def __str__(self) -> str:
        who = self.user.username if self.user_id else f"@{self.group.name}"
        return f"{who}: {self.get_access_display()}"


class DocumentStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    PROCESSING = "processing", _("processing")
    READY = "ready", _("ready")
    FAILED = "failed", _("failed")


class Document(models.Model):
    """An uploaded file; the row doubles as its ingestion job (status is the queue state)."""

    title = models.CharField(_("title"), max_length=255)
    kb = models.ForeignKey(KnowledgeBase, on_delete=models.PROTECT, related_name="documents", default=default_kb_id,
                           verbose_name=_("knowledge base"))
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
    # Unique within a base only: whether a base the uploader cannot read holds the same file is not its business.
    checksum = models.CharField(_("checksum"), max_length=64, db_index=True)
    size = models.PositiveBigIntegerField(_("size (bytes)"), default=0)
    metadata = models.JSONField(_("metadata"), default=dict, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="documents", verbose_name=_("uploaded by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    # Not stored: set on the row document_create returns when a failed document took the re-uploaded file and
    # is queued again, so that a batch upload lists it as queued rather than as a duplicate.
    requeued = False

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["domain", "status"]), models.Index(fields=["kb", "status"])]
        constraints = [models.UniqueConstraint(fields=["kb", "checksum"], name="document_checksum_once_per_kb")]
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
    # Where the text is in the original file, as the parser found it: {"page": 3, "boxes": [[x0, top, x1,
    # bottom], …]} (PDF points from the page's top-left corner), {"sheet": "价格表", "rows": [4, 9]} or
    # {"slide": 3}; null for formats without pages (plain text, Markdown, HTML, Word).
    location = models.JSONField(_("location"), null=True, blank=True)
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
    """One row per domain of a knowledge base (`knowledge_domain`), with the live document count."""

    kb = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="domains", default=default_kb_id,
                           verbose_name=_("knowledge base"))
    domain_id = models.CharField(_("domain"), max_length=64)
    description = models.CharField(_("description"), max_length=256, null=True, blank=True)
    when_to_retrieve = models.TextField(_("when to retrieve"), null=True, blank=True)
    document_count = models.IntegerField(_("documents"), default=0)
    # True for a row created because a document named the domain (an upload or a move), False for one an
    # administrator created or described: only the former goes away with the domain's last document.
    created_automatically = models.BooleanField(_("created automatically"), default=False)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        db_table = "knowledge_domain"
        ordering = ["domain_id", "kb_id"]
        constraints = [models.UniqueConstraint(fields=["kb", "domain_id"], name="knowledge_domain_once_per_kb")]
        verbose_name = _("knowledge domain")
        verbose_name_plural = _("knowledge domains")

    def __str__(self) -> str:
        return self.domain_id


class _EditHistory(HistoricalRecords):
    """History of a chunk's saves only. A chunk leaves with its document: a delete listener would cost a
    fetch and a history row per chunk of every deleted document (and Django's fast cascade), for nothing
    anyone reads — a deleted document's text is not restored chunk by chunk."""

    def finalize(self, sender, **kwargs):
        super().finalize(sender, **kwargs)
        if sender is self.cls:
            models.signals.post_delete.disconnect(self.post_delete, sender=sender)
            models.signals.pre_delete.disconnect(self.pre_delete, sender=sender)


# Every edit of a chunk's text is a revision (author, time, the text then); the history table belongs to the
# curation app, which edits and restores chunks through kb.editing. Ingestion writes chunks in bulk, which
# records nothing: the first edit records the text as ingested first (kb.editing.chunk_edit).
simple_history_register(
    Chunk, app="curation", records_class=_EditHistory, manager_name="revisions",
excluded_fields=["vector_id", "token_count"],
    verbose_name=_("chunk revision"), verbose_name_plural=_("chunk revisions"),
    history_change_reason_field=models.TextField(null=True),
)
