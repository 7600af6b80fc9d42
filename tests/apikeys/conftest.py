"""The API-key tests' world: Eddie edits HR and reads Finance, each base with a marker document."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from docmind.backends import reset_backends
from kb import services
from kb.models import KbAccess
from tests.apikeys.world import FIN_MARKER, FIN_TEXT, HR_MARKER, HR_TEXT
from tests.isolation import skip_used_ids


@pytest.fixture
def world(settings, tmp_path, django_user_model):
    from docmind.roles import KB_EDITOR, MEMBER, ensure_roles, user_set_role
    from kb.ingestion.worker import process_pending_documents

    settings.MEDIA_ROOT = tmp_path / "media"
    reset_backends()
    cache.clear()
    ensure_roles()
    eddie = django_user_model.objects.create_user(username="eddie", password="pw-eddie")
    user_set_role(user=eddie, role=KB_EDITOR)
    mia = django_user_model.objects.create_user(username="mia", password="pw-mia")
    user_set_role(user=mia, role=MEMBER)
    skip_used_ids()
    hr = services.kb_create(name="HR", owner=eddie)
    fin = services.kb_create(name="Finance")
    hr_doc, _ = services.document_ingest_text(title=f"人事{HR_MARKER}", text=HR_TEXT, domain="policy", kb=hr)
    fin_doc, _ = services.document_ingest_text(title=f"财务{FIN_MARKER}", text=FIN_TEXT, domain="policy", kb=fin)
    process_pending_documents()
    services.kb_grant(kb=fin, user=eddie, access=KbAccess.READ)
    services.kb_grant(kb=hr, user=mia, access=KbAccess.READ)
    yield {"eddie": eddie, "mia": mia, "hr": hr, "fin": fin, "hr_doc": hr_doc, "fin_doc": fin_doc}
    reset_backends()
