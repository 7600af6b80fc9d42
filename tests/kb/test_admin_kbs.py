"""Knowledge bases in the admin: created and edited with their grants inline, the grants written by the services."""
from __future__ import annotations

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import Group

from kb.models import KbGrant, KnowledgeBase
from kb.selectors import kb_version
from kb.services import kb_create, kb_grant

# The messages are asserted in English: the default language is Chinese (zh-hans has its own test).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

ADD_URL = "/admin/kb/knowledgebase/add/"


def _form(kb: KnowledgeBase | None, *, name: str, rows: list[dict], description: str = "") -> dict:
    """The add/change form as the browser posts it: the base's fields, the grant rows and the (read-only)
    document inline. A row with an "id" is a stored grant; "DELETE" marks it for removal."""
    stored = [row for row in rows if row.get("id")]
    data = {"name": name, "description": description,
            "grants-TOTAL_FORMS": str(len(rows)), "grants-INITIAL_FORMS": str(len(stored)),
            "grants-MIN_NUM_FORMS": "0", "grants-MAX_NUM_FORMS": "1000",
            "documents-TOTAL_FORMS": "0", "documents-INITIAL_FORMS": "0",
            "documents-MIN_NUM_FORMS": "0", "documents-MAX_NUM_FORMS": "0"}
    for i, row in enumerate(rows):
        data |= {f"grants-{i}-id": row.get("id", ""), f"grants-{i}-kb": kb.pk if kb else "",
                 f"grants-{i}-user": row.get("user", ""), f"grants-{i}-group": row.get("group", ""),
                 f"grants-{i}-access": row.get("access", "read")}
        if row.get("DELETE"):
            data[f"grants-{i}-DELETE"] = "on"
    return data


def _grants(kb: KnowledgeBase) -> set[tuple[str, str]]:
    return {(g.user.username if g.user_id else "@" + g.group.name, g.access) for g in KbGrant.objects.filter(kb=kb)}


def _change_url(kb: KnowledgeBase) -> str:
    return f"/admin/kb/knowledgebase/{kb.pk}/change/"


def test_an_admin_creates_a_base_with_grants_to_a_user_and_a_group(client, admin_user, member, kb_index,
                                                                   django_capture_on_commit_callbacks):
    client.force_login(admin_user)
    assert client.get(ADD_URL).status_code == 200
    readers = Group.objects.get(name="member")
    before = kb_version()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(ADD_URL, _form(None, name="人事", description="HR", rows=[
            {"user": member.pk, "access": "read"}, {"group": readers.pk, "access": "edit"}]))
    assert response.status_code == 302, response.content.decode()[:2000]
    kb = KnowledgeBase.objects.get(name="人事")
    assert (kb.description, kb.owner) == ("HR", admin_user)
    # The creator's own edit grant comes from kb_create, the others from the rows.
    assert _grants(kb) == {("root-admin", "edit"), ("alice", "read"), ("@member", "edit")}
    assert kb_version() != before  # grants went through the services, which drop answers cached before them
    entry = LogEntry.objects.get(object_id=str(kb.pk))
    assert entry.action_flag == ADDITION and "knowledge-base grant" in entry.get_change_message()


def test_an_admin_edits_a_base_changing_removing_and_adding_grants(client, admin_user, member, other_member,
                                                                    kb_index):
    client.force_login(admin_user)
    kb = kb_create(name="财务", owner=admin_user)
    alice = kb_grant(kb=kb, user=member, access="read")
    bob = kb_grant(kb=kb, user=other_member, access="read")
    own = KbGrant.objects.get(kb=kb, user=admin_user)
    editors = Group.objects.get(name="kb_editor")
    response = client.post(_change_url(kb), _form(kb, name="财务部", rows=[
        {"id": own.pk, "user": admin_user.pk, "access": "edit"},
        {"id": alice.pk, "user": member.pk, "access": "edit"},
        {"id": bob.pk, "user": other_member.pk, "access": "read", "DELETE": True},
        {"group": editors.pk, "access": "read"}]))
    assert response.status_code == 302, response.content.decode()[:2000]
    kb.refresh_from_db()
    assert kb.name == "财务部"
    assert _grants(kb) == {("root-admin", "edit"), ("alice", "edit"), ("@kb_editor", "read")}
    assert LogEntry.objects.filter(object_id=str(kb.pk), action_flag=CHANGE).exists()


def test_a_grant_row_given_to_someone_else_revokes_the_first_holder(client, admin_user, member, other_member,
                                                                   kb_index):
    client.force_login(admin_user)
    kb = kb_create(name="法务")
    grant = kb_grant(kb=kb, user=member, access="read")
    response = client.post(_change_url(kb), _form(kb, name="法务", rows=[
        {"id": grant.pk, "user": other_member.pk, "access": "read"}]))
    assert response.status_code == 302
    assert _grants(kb) == {("bob", "read")}


@pytest.mark.parametrize("holder", [{}, {"user": "member", "group": "member"}], ids=["neither", "both"])
def test_a_grant_row_must_name_a_user_or_a_group(client, admin_user, member, kb_index, holder):
    client.force_login(admin_user)
    group = Group.objects.get(name="member")
    row = {"access": "edit", **{k: (member.pk if k == "user" else group.pk) for k in holder}}
    response = client.post(ADD_URL, _form(None, name="空", rows=[row]))
    assert response.status_code == 200
    assert "Give a grant to a user or to a group, not both or neither." in response.content.decode()
    assert not KnowledgeBase.objects.filter(name="空").exists()


def test_a_kb_editor_creates_a_base_with_a_grant_and_then_edits_it(client, kb_editor, member, kb_index):
    client.force_login(kb_editor)
    # A kb_editor types the holder's name (it is not shown the list of every account).
    response = client.post(ADD_URL, _form(None, name="编辑的库", rows=[{"user": member.username, "access": "read"}]))
    assert response.status_code == 302, response.content.decode()[:2000]
    kb = KnowledgeBase.objects.get(name="编辑的库")
    assert _grants(kb) == {("eddie", "edit"), ("alice", "read")}
    own, alice = KbGrant.objects.get(kb=kb, user=kb_editor), KbGrant.objects.get(kb=kb, user=member)
    response = client.post(_change_url(kb), _form(kb, name="编辑的库", description="改过", rows=[
        {"id": own.pk, "user": kb_editor.username, "access": "edit"},
        {"id": alice.pk, "user": member.username, "access": "read", "DELETE": True}]))
    assert response.status_code == 302
    kb.refresh_from_db()
    assert kb.description == "改过" and _grants(kb) == {("eddie", "edit")}


def test_a_kb_editor_cannot_change_the_grants_of_a_base_it_may_only_read(client, kb_editor, member, kb_index):
    kb = kb_create(name="只读库")
    kb_grant(kb=kb, user=kb_editor, access="read")
    client.force_login(kb_editor)
    response = client.post(_change_url(kb), _form(kb, name="只读库", rows=[{"user": member.pk, "access": "edit"}]))
    assert response.status_code == 403
    assert _grants(kb) == {("eddie", "read")}
