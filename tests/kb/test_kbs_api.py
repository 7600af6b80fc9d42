"""/api/kbs/ and its grants: who may list, create, change and grant; unreadable ids answer 404."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from kb import access, services
from kb.models import KbGrant, KnowledgeBase

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def test_a_member_lists_only_the_bases_granted_to_it(member, seeded):
    mine = services.kb_create(name="mine")
    services.kb_create(name="secret")
    services.kb_grant(kb=mine, user=member, access="read")
    names = {row["name"] for row in _client(member).get("/api/kbs/").json()}
    assert names == {"mine", access.kb_default().name}


def test_a_member_cannot_create_a_base(member_client):
    assert member_client.post("/api/kbs/", {"name": "x"}, format="json").status_code == 403
    assert not KnowledgeBase.objects.filter(name="x").exists()


def test_an_editor_creates_a_base_and_may_edit_it(editor_client, kb_editor):
    response = editor_client.post("/api/kbs/", {"name": "Runbooks", "description": "on-call"}, format="json")
    assert response.status_code == 201 and response.json()["can_edit"] is True
    kb_id = response.json()["id"]
    assert kb_id in access.editable_kb_ids(kb_editor)
    assert editor_client.patch(f"/api/kbs/{kb_id}/", {"description": "pager"}, format="json").json()[
        "description"] == "pager"


def test_an_unreadable_base_is_404_and_a_readable_one_403_to_change(member, seeded):
    hidden = services.kb_create(name="hidden")
    shown = services.kb_create(name="shown")
    services.kb_grant(kb=shown, user=member, access="read")
    client = _client(member)
    for verb in ("get", "patch", "delete"):
        assert getattr(client, verb)(f"/api/kbs/{hidden.pk}/").status_code == 404
    assert client.get(f"/api/kbs/{hidden.pk}/grants/").status_code == 404
    assert client.get(f"/api/kbs/{shown.pk}/").status_code == 200
    assert client.patch(f"/api/kbs/{shown.pk}/", {"name": "y"}, format="json").status_code == 403
    assert client.get(f"/api/kbs/{shown.pk}/grants/").status_code == 403


def test_a_member_with_an_edit_grant_still_cannot_edit(member, seeded):
    kb = services.kb_create(name="b")
    services.kb_grant(kb=kb, user=member, access="edit")
    assert kb.pk in access.readable_kb_ids(member) and kb.pk not in access.editable_kb_ids(member)


def test_grants_to_users_and_groups_are_listed_given_and_revoked(admin_client_api, member, seeded):
    kb = services.kb_create(name="g")
    url = f"/api/kbs/{kb.pk}/grants/"
    assert admin_client_api.post(url, {"user": member.username, "access": "read"}, format="json").status_code == 201
    assert admin_client_api.post(url, {"group": "member", "access": "read"}, format="json").status_code == 201
    listed = admin_client_api.get(url).json()
    assert {(g["user"], g["group"]) for g in listed} == {(member.username, None), (None, "member")}
    assert kb.pk in access.readable_kb_ids(member)
    assert admin_client_api.delete(url, {"user": member.username}, format="json").status_code == 204
    assert admin_client_api.delete(url, {"group": "member"}, format="json").status_code == 204
    assert kb.pk not in access.readable_kb_ids(member)
    assert admin_client_api.delete(url, {"group": "member"}, format="json").status_code == 404


@pytest.mark.parametrize(("body", "code"), [({}, 400), ({"user": "alice", "group": "member"}, 400),
                                            ({"user": "nobody"}, 404), ({"group": "nobody"}, 404),
                                            ({"group": "member", "access": "own"}, 400)])
def test_a_bad_grant_is_refused_and_changes_nothing(admin_client_api, member, body, code):
    kb = services.kb_create(name="bad")
    assert admin_client_api.post(f"/api/kbs/{kb.pk}/grants/", body, format="json").status_code == code
    assert not KbGrant.objects.filter(kb=kb).exists()


def test_a_role_change_is_seen_by_the_same_user_object(member, seeded):
    from docmind.roles import ADMIN, user_set_role
    from kb.models import KnowledgeBase as Kb

    hidden = services.kb_create(name="later")
    assert hidden.pk not in access.readable_kb_ids(member)
    # Another process changes the role; this user object (say, a WebSocket's) is not refreshed.
    from django.contrib.auth import get_user_model

    user_set_role(user=get_user_model().objects.get(pk=member.pk), role=ADMIN)
    assert access.readable_kb_ids(member) == frozenset(Kb.objects.values_list("id", flat=True))


def test_a_base_with_documents_or_the_default_cannot_be_deleted(admin_client_api, seeded):
    from django.core.files.base import ContentFile

    full = services.kb_create(name="full")
    services.document_create(uploaded_file=ContentFile(b"hello", name="a.txt"), kb=full)
    assert admin_client_api.delete(f"/api/kbs/{full.pk}/").status_code == 409
    assert admin_client_api.delete(f"/api/kbs/{access.kb_default().pk}/").status_code == 409
    empty = services.kb_create(name="empty")
    assert admin_client_api.delete(f"/api/kbs/{empty.pk}/").status_code == 204


def test_upload_needs_edit_on_the_target_base(editor_client, kb_editor, seeded, settings, tmp_path):
    from django.core.files.base import ContentFile

    settings.MEDIA_ROOT = tmp_path
    readable = services.kb_create(name="read-only")
    services.kb_grant(kb=readable, user=kb_editor, access="read")
    hidden = services.kb_create(name="hidden")
    own = editor_client.post("/api/kbs/", {"name": "own"}, format="json").json()["id"]

    def upload(kb_id):
        return editor_client.post("/api/kb/documents/", {"file": ContentFile(b"text", name="t.txt"), "kb": kb_id},
                                  format="multipart")

    assert upload(hidden.pk).status_code == 404
    assert upload(readable.pk).status_code == 403
    response = upload(own)
    assert response.status_code == 202 and response.json()["kb"] == own


@pytest.mark.parametrize("fmt", ["json", "multipart"])
@pytest.mark.parametrize("name", ["", "   ", "bad\x00name", "tab\there", "line\nbreak", "\x7f"])
def test_a_blank_name_or_one_with_control_characters_is_a_400_naming_the_field(editor_client, kb_editor, fmt, name):
    kb = services.kb_create(name="runbooks", owner=kb_editor)
    response = editor_client.patch(f"/api/kbs/{kb.pk}/", {"name": name}, format=fmt)
    assert response.status_code == 400 and "name" in response.json()["fields"]
    created = editor_client.post("/api/kbs/", {"name": name}, format=fmt)
    assert created.status_code == 400 and "name" in created.json()["fields"]
    kb.refresh_from_db()
    assert kb.name == "runbooks" and KnowledgeBase.objects.count() == 2  # the default base and this one


def test_a_description_may_hold_line_breaks_but_no_other_control_character(editor_client, kb_editor):
    kb = services.kb_create(name="runbooks", owner=kb_editor)
    url = f"/api/kbs/{kb.pk}/"
    assert editor_client.patch(url, {"description": "one\ntwo\tthree"}, format="json").status_code == 200
    refused = editor_client.patch(url, {"description": "bell\x07"}, format="json")
    assert refused.status_code == 400 and "description" in refused.json()["fields"]


def test_a_grant_is_revoked_by_its_id(admin_client_api, member, seeded):
    kb = services.kb_create(name="q")
    grant = services.kb_grant(kb=kb, user=member, access="read")
    url = f"/api/kbs/{kb.pk}/grants/{grant.pk}/"
    assert admin_client_api.delete(url).status_code == 204
    assert kb.pk not in access.readable_kb_ids(member)
    assert admin_client_api.delete(url).status_code == 404


def test_a_taken_name_is_a_409_conflict(editor_client, kb_editor):
    services.kb_create(name="taken", owner=kb_editor)
    mine = services.kb_create(name="mine", owner=kb_editor)
    assert editor_client.post("/api/kbs/", {"name": "taken"}, format="json").status_code == 409
    assert editor_client.patch(f"/api/kbs/{mine.pk}/", {"name": "taken"}, format="json").status_code == 409


@pytest.mark.parametrize("fmt", ["json", "multipart"])
def test_a_patch_that_names_no_field_is_a_400_and_changes_nothing(editor_client, kb_editor, fmt):
    kb = services.kb_create(name="runbooks", owner=kb_editor)
    response = editor_client.patch(f"/api/kbs/{kb.pk}/", {}, format=fmt)
    assert response.status_code == 400 and response.json()["error"]
    kb.refresh_from_db()
    assert kb.name == "runbooks"
