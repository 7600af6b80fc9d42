"""Roles are groups created by migration; staff access and permissions follow the role."""
import pytest
from django.contrib.auth.models import Group

from docmind.roles import ADMIN, KB_EDITOR, KB_EDITOR_APPS, MEMBER, has_role, roles_of, user_set_role
from kb.access import has_editor_role

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
    assert not has_editor_role(member)


def test_unknown_role_is_refused(member):
    with pytest.raises(ValueError, match="unknown role"):
        user_set_role(user=member, role="owner")


def test_a_role_change_reaches_a_user_object_held_from_before(member, django_user_model):
    # A WebSocket or MCP session keeps its user object for hours: the role is read now, not remembered.
    assert has_role(member, MEMBER) and not has_role(member, KB_EDITOR)
    user_set_role(user=django_user_model.objects.get(pk=member.pk), role=KB_EDITOR)
    assert has_role(member, KB_EDITOR) and not has_role(member, MEMBER)
    assert has_editor_role(member)


def test_a_deactivated_user_holds_no_role(admin_user, django_user_model):
    django_user_model.objects.filter(pk=admin_user.pk).update(is_active=False)
    assert roles_of(admin_user) is None
    assert not has_role(admin_user, ADMIN)


def test_a_superuser_holds_every_role_without_a_group(django_user_model):
    root = django_user_model.objects.create_superuser(username="root", password="pw")
    roles = roles_of(root)
    assert roles is not None and roles.superuser and not roles.names
    assert all(roles.holds(role) for role in (ADMIN, KB_EDITOR, MEMBER))


def _in_one_request(view):
    """`view()` run inside the request middleware, as a view of one HTTP request would be."""
    from django.http import HttpResponse
    from django.test import RequestFactory

    from docmind.roles import request_roles_middleware

    def get_response(request):
        view()
        return HttpResponse()

    request_roles_middleware(get_response)(RequestFactory().get("/"))


def test_within_one_request_a_user_s_roles_are_read_once(member, django_assert_num_queries):
    def view():
        with django_assert_num_queries(2):  # the user's flags, its groups
            assert has_role(member, MEMBER)
            assert roles_of(member) == roles_of(member)

    _in_one_request(view)


def test_a_role_change_within_the_request_is_read_afresh(member, django_user_model):
    def view():
        assert has_role(member, MEMBER)
        user_set_role(user=django_user_model.objects.get(pk=member.pk), role=KB_EDITOR)
        assert has_role(member, KB_EDITOR) and not has_role(member, MEMBER)
        django_user_model.objects.get(pk=member.pk).groups.clear()
        assert not has_role(member, KB_EDITOR)

    _in_one_request(view)


def test_outside_a_request_every_call_reads_the_database(member, django_user_model,
                                                         django_assert_num_queries):
    assert has_role(member, MEMBER)
    # an update that sends no signal: only a fresh read sees it
    django_user_model.objects.filter(pk=member.pk).update(is_active=False)
    with django_assert_num_queries(1):
        assert roles_of(member) is None


def test_an_upload_reads_the_caller_s_roles_once(client, admin_user):
    # the upload asks three times: the permission class, the base it may edit, the bases it may read
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(admin_user)
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/api/kb/documents/", {"file": SimpleUploadedFile("a.txt", "年假十天。".encode(),
                                                                                  "text/plain")})
    assert response.status_code == 202
    group_reads = [q["sql"] for q in queries.captured_queries if "auth_user_groups" in q["sql"]]
    assert len(group_reads) == 1, group_reads
