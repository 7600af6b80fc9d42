"""The user admin shows roles and sets one; only administrators manage users."""
import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


def test_user_list_shows_each_users_role(client, admin_user, kb_editor):
    client.force_login(admin_user)
    page = client.get("/admin/auth/user/").content.decode()
    assert "kb_editor" in page and "eddie" in page


def test_admin_promotes_a_member_to_kb_editor_with_staff_access(client, admin_user, member):
    client.force_login(admin_user)
    data = {"username": "alice", "role": "kb_editor", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "last_login_0": "", "last_login_1": "", "is_active": "on", "email": "", "first_name": "", "last_name": ""}
    response = client.post(f"/admin/auth/user/{member.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    member = get_user_model().objects.get(pk=member.pk)
    assert member.is_staff and list(member.groups.values_list("name", flat=True)) == ["kb_editor"]


def test_kb_editor_cannot_manage_users(client, kb_editor):
    client.force_login(kb_editor)
    assert client.get("/admin/auth/user/").status_code == 403
