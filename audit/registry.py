"""Which models the audit trail follows, field by field (django-auditlog's registry)."""
from __future__ import annotations

from auditlog.registry import auditlog
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from config_admin.models import SysAiConfig
from curation.models import QaPair
from docmind.models import McpServer
from kb.models import Document, KbGrant, KnowledgeBase


def register_models() -> None:
    """Documents (upload, delete), knowledge bases and grants, users and their roles, the AI configuration and
    external tool servers, curated answers. Chunk edits are logged by their service (chunks are written in
    bulk by ingestion, and a per-chunk delete listener would slow every document delete)."""
    for model, options in (
        # Progress and status move with every batch an ingestion writes; they would drown the trail.
        (Document, {"exclude_fields": ["progress", "updated_at", "attempts", "error", "status", "metadata"]}),
        (KnowledgeBase, {"exclude_fields": ["updated_at"]}),
        (KbGrant, {}),
        (get_user_model(), {"exclude_fields": ["last_login"], "mask_fields": ["password"], "m2m_fields": {"groups"}}),
        (Group, {}),  # a role is which groups a user is in (above); the permissions a role holds are code
        (SysAiConfig, {}),
        (McpServer, {}),
        (QaPair, {"exclude_fields": ["vector", "embedder", "updated_at"], "m2m_fields": {"documents"}}),
    ):
        if not auditlog.contains(model):
            auditlog.register(model, **options)
