"""JSON shapes of documents and the upload form (no business logic: services validate)."""
from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from docmind.fields import IdField, NameField
from docmind.redact import without_paths
from kb.ingestion import reasons
from kb.models import Document
from kb.selectors import child_chunk_count
from kb.services import DOMAIN_PATTERN

# In the request's language, like the refusals of the file itself.
FILE_ERRORS = {"required": gettext_lazy("a file is required"), "invalid": gettext_lazy("file must be an uploaded file")}


class DocumentSerializer(serializers.ModelSerializer):
    chunk_count = serializers.SerializerMethodField()
    uploaded_by = serializers.CharField(source="uploaded_by.username", default=None, read_only=True)
    error = serializers.SerializerMethodField(
        help_text="Why the document could not be indexed (status failed), in the request's language; else empty.")

    class Meta:
        model = Document
        fields = ["id", "title", "kb", "domain", "file_type", "status", "progress", "error", "chunk_count", "size",
                  "checksum", "metadata", "uploaded_by", "created_at", "updated_at"]
        read_only_fields = fields

    def get_error(self, document: Document) -> str:
        # Rows failed before reasons were cleaned may still hold a server path; stored in English, shown in the
        # request's language.
        return reasons.in_language(without_paths(document.error))

    def get_chunk_count(self, document: Document) -> int:
        annotated = getattr(document, "chunk_count", None)
        if annotated is not None:
            return annotated

        return child_chunk_count(document=document)


class DocumentUploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True, error_messages=FILE_ERRORS)
    domain = NameField(required=False, allow_blank=True, max_length=64, pattern=DOMAIN_PATTERN)
    kb = serializers.IntegerField(required=False, min_value=1,
                                  help_text="knowledge-base id; the default one when absent")
    title = NameField(required=False, allow_blank=True, max_length=255)


class DocumentMoveSerializer(serializers.Serializer):
    """PATCH /api/kb/documents/<id>/: where the document goes; at least one of the two."""

    openapi_any_of = ("kb", "domain")

    kb = IdField(required=False,
                 help_text="Target knowledge base id (edit access needed on both bases).")
    domain = NameField(required=False, max_length=64, pattern=DOMAIN_PATTERN, help_text="Target knowledge domain.")

    def validate(self, attrs: dict) -> dict:
        if not attrs.get("kb") and not attrs.get("domain"):
            raise serializers.ValidationError(_("Give a knowledge base, a domain or both."))
        return attrs


class ArchiveUploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True, help_text="a zip archive of documents",
                                 error_messages=FILE_ERRORS)
    domain = NameField(required=False, allow_blank=True, max_length=64, pattern=DOMAIN_PATTERN,
                       help_text="knowledge domain of every document in the archive")
    kb = serializers.IntegerField(required=False, min_value=1,
                                  help_text="knowledge-base id; the default one when absent")


class ArchiveAcceptedSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="the file's path inside the archive (the document's title keeps it)")
    document = DocumentSerializer()


class ArchiveRefusedSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="the entry's path inside the archive")
    code = serializers.ChoiceField(choices=["unsupported", "empty", "too_large", "duplicate", "unsafe_path",
                                            "symlink", "encrypted", "nested_archive", "system_file",
                                            "unsupported_compression", "invalid"])
    reason = serializers.CharField(help_text="why, in the request's language (Accept-Language; Chinese by "
                                             "default); `code` names the kind for a program")
    document = serializers.IntegerField(source="document_id", allow_null=True,
                                        help_text="a duplicate: the document already holding this content")


class ArchiveResultSerializer(serializers.Serializer):
    accepted = ArchiveAcceptedSerializer(many=True, help_text="queued for ingestion, one document per file")
    refused = ArchiveRefusedSerializer(many=True, help_text="entries not stored, each with its reason")
