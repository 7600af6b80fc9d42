"""Roles are groups created by migration; staff access and permissions follow the role."""
import pytest
from django.contrib.auth.models import Group

from docmind.roles import ADMIN, KB_EDITOR, KB_EDITOR_APPS, MEMBER, can_edit_kb, has_role, user_set_role

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]


def test_the_three_role_groups_exist():
    assert set(Group.objects.values_list("name", flat=True)) >= {ADMIN, KB_EDITOR, MEMBER}


def test_kb_editor_is_staff_with_permissions_of_the_knowledge_base_apps_only(kb_editor):
    assert kb_editor.is_staff
    perms = kb_editor.get_all_permissions()
    assert kb_editor.has_perm("kb.change_document")
    assert all(p.split(".")[0] in KB_EDITOR_APPS for p in perms), sorted(perms)
    assert not kb_editor.has_perm("config_admin.change_sysaiconfig")
    assert not kb_editor.has_perm("auth.change_user")


def test_admin_role_holds_every_permission(admin_user):
    assert admin_user.has_perm("config_admin.change_sysaiconfig")
    assert admin_user.has_perm("auth.change_user")


def test_member_is_not_staff_and_cannot_edit_the_kb(member):
    assert not member.is_staff
    assert has_role(member, MEMBER)
    assert not can_edit_kb(member)


def test_unknown_role_is_refused(member):
    with pytest.raises(ValueError, match="unknown role"):
        user_set_role(user=member, role="owner")
