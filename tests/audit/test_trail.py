"""The audit trail: uploads, deletes, grants, sign-ins and chunk edits recorded with who did it; read by
administrators only, exported as CSV, deleted by superusers only."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.admin import AuditEntryAdmin
from audit.models import AuditEntry
from kb.models import Chunk, Document

pytestmark = pytest.mark.django_db


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_an_upload_and_a_delete_through_the_api_are_recorded_with_the_token_user(kb_editor, settings, tmp_path):
    from tests.isolation import fresh_default_kb

    settings.MEDIA_ROOT = tmp_path
    fresh_default_kb()
    client = _token_client(kb_editor)
    body = client.post("/api/kb/documents/", {"file": SimpleUploadedFile("a.txt", b"hello audit")},
                       format="multipart").json()
    assert client.delete(f"/api/kb/documents/{body['id']}/").status_code == 204
    assert not Document.objects.filter(pk=body["id"]).exists() and not Chunk.objects.filter(document_id=body["id"])
    entries = AuditEntry.objects.filter(content_type__model="document", object_pk=str(body["id"]))
    assert sorted(e.action for e in entries) == [AuditEntry.Action.CREATE, AuditEntry.Action.DELETE]
    assert {e.actor for e in entries} == {kb_editor}


def test_a_grant_and_a_role_change_are_recorded(admin_client_api, admin_user, member):
    kb = admin_client_api.post("/api/kbs/", {"name": "hr"}, format="json").json()
    admin_client_api.post(f"/api/kbs/{kb['id']}/grants/", {"user": member.username, "access": "read"},
                          format="json")
    grants = AuditEntry.objects.filter(content_type__model="kbgrant")  # the creator's own, then the member's
    assert [(g.action, g.actor) for g in grants] == [(AuditEntry.Action.CREATE, admin_user)] * 2
    from docmind.roles import user_set_role

    user_set_role(user=member, role="kb_editor")
    assert AuditEntry.objects.filter(content_type__model="user", object_pk=str(member.pk),
                                     changes__has_key="groups").exists()


def test_sign_ins_and_failed_sign_ins_are_recorded(member):
    browser = Client()
    browser.post("/login/", {"username": member.username, "password": "wrong"})
    browser.post("/login/", {"username": member.username, "password": f"pw-{member.username}"})
    events = [(e.additional_data or {}).get("event") for e in AuditEntry.objects.filter(action=AuditEntry.Action.ACCESS)
              .order_by("id")]
    assert events == ["sign-in failed", "sign-in"]


def test_the_api_is_for_administrators_and_filters_by_actor_action_and_date(admin_client_api, admin_user,
                                                                           editor_client, member_client):
    admin_client_api.post("/api/kbs/", {"name": "finance"}, format="json")
    assert member_client.get("/api/audit/").status_code == 403
    assert editor_client.get("/api/audit/").status_code == 403
    rows = admin_client_api.get(f"/api/audit/?actor={admin_user.username}&action=create&since=2000-01-01").json()
    assert rows["count"] >= 1 and {r["action"] for r in rows["results"]} == {"create"}
    assert admin_client_api.get("/api/audit/?action=explode").status_code == 400
    assert admin_client_api.get("/api/audit/?since=2026-02-30").status_code == 400  # well-formed, impossible
    csv = admin_client_api.get("/api/audit/export/?action=create")
    text = b"".join(csv.streaming_content).decode()
    assert text.splitlines()[0].startswith("id,timestamp,actor,action") and "finance" in text


def test_only_a_superuser_may_delete_entries(rf, admin_user, django_user_model):
    from django.contrib import admin

    model_admin = AuditEntryAdmin(AuditEntry, admin.site)
    request = rf.get("/admin/audit/auditentry/")
    request.user = admin_user
    assert model_admin.has_view_permission(request) and not model_admin.has_delete_permission(request)
    request.user = django_user_model.objects.create_superuser("su", password="x")
    assert model_admin.has_delete_permission(request)


def test_moving_a_document_to_another_base_is_recorded_with_before_and_after(admin_client_api, admin_user, settings,
                                                                             tmp_path):
    from kb.models import KnowledgeBase
    from tests.isolation import fresh_default_kb

    settings.MEDIA_ROOT = tmp_path
    source = fresh_default_kb()
    target = admin_client_api.post("/api/kbs/", {"name": "archive"}, format="json").json()["id"]
    body = admin_client_api.post("/api/kb/documents/", {"file": SimpleUploadedFile("m.txt", b"move me")},
                                 format="multipart").json()
    Document.objects.filter(pk=body["id"]).update(status="ready")
    assert admin_client_api.patch(f"/api/kb/documents/{body['id']}/", {"kb": target}, format="json").status_code == 200
    moved = AuditEntry.objects.get(content_type__model="document", additional_data__event="document move")
    assert moved.changes == {"kb": [str(source.pk), str(target)]} and moved.actor == admin_user
    assert KnowledgeBase.objects.filter(pk=target).exists()
