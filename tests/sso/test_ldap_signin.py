"""Directory sign-in against a real slapd: users, roles and grants from the directory, and its failures."""
from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from docmind.roles import ADMIN, KB_EDITOR, MEMBER, has_role
from kb import access
from kb.models import KbGrant
from kb.services import kb_create
from sso.models import ExternalIdentity
from tests.sso.conftest import GROUPS, PEOPLE, apply_ldap_settings, ldap_environment

pytestmark = pytest.mark.django_db


@pytest.fixture
def bases(seeded):
    return {"Finance": kb_create(name="Finance"), "Handbook": kb_create(name="Handbook"),
            "Secret": kb_create(name="Secret")}


def _client(client_class=APIClient):
    # An address of its own per test: the lockout counts failures per (username, address).
    return client_class(REMOTE_ADDR=f"198.51.100.{uuid.uuid4().int % 250 + 1}")


def _login(client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def _token(username: str, password: str):
    return _client().post("/api/auth/token/", {"username": username, "password": password}, format="json")


def _fresh(username: str):
    return get_user_model().objects.get(username=username)


def test_a_directory_user_signs_in_on_the_login_page_and_is_created_on_first_sign_in(ldap_on, bases):
    from django.test import Client

    assert not get_user_model().objects.filter(username="dana").exists()
    response = _login(_client(Client), "dana", PEOPLE["dana"].password)
    assert response.status_code == 302 and response["Location"] == "/"
    dana = _fresh("dana")
    assert (dana.first_name, dana.last_name, dana.email) == ("Dana", "Ng", "dana@example.test")
    assert not dana.has_usable_password()  # the directory holds the password, never DocMind
    assert ExternalIdentity.objects.get(user=dana).subject == PEOPLE["dana"].dn.lower()


def test_a_directory_user_gets_an_api_token(ldap_on, bases):
    response = _token("frank", PEOPLE["frank"].password)
    assert response.status_code == 200
    me = APIClient(HTTP_AUTHORIZATION=f"Token {response.json()['token']}").get("/api/me/")
    assert me.json()["username"] == "frank" and me.json()["roles"] == [MEMBER]


def test_a_directory_user_in_a_staff_group_signs_in_on_the_admin_login(ldap_on, bases):
    from django.test import Client

    client = _client(Client)
    response = client.post("/admin/login/?next=/admin/", {"username": "erin", "password": PEOPLE["erin"].password,
                                                         "next": "/admin/"})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    assert has_role(_fresh("erin"), ADMIN)


def test_a_wrong_directory_password_is_refused(ldap_on, bases):
    assert _token("dana", "not-her-password").status_code == 401
    assert not get_user_model().objects.filter(username="dana").exists()


def test_an_unknown_user_is_refused(ldap_on, bases):
    assert _token("nobody-here", "whatever").status_code == 401


def test_the_strongest_mapped_role_wins(ldap_on, bases):
    # erin is in staff (admin) and editors (kb_editor); dana in editors; frank in no mapped group.
    for name in ("erin", "dana", "frank"):
        assert _token(name, PEOPLE[name].password).status_code == 200
    assert has_role(_fresh("erin"), ADMIN) and _fresh("erin").is_staff
    dana = _fresh("dana")
    assert has_role(dana, KB_EDITOR) and not has_role(dana, ADMIN) and dana.is_staff
    frank = _fresh("frank")
    assert has_role(frank, MEMBER) and not frank.is_staff


def test_mapped_groups_grant_their_knowledge_bases_and_nothing_else(ldap_on, bases):
    for name in ("dana", "hugo", "frank"):
        assert _token(name, PEOPLE[name].password).status_code == 200
    dana, hugo, frank = _fresh("dana"), _fresh("hugo"), _fresh("frank")
    finance, handbook, secret = bases["Finance"].pk, bases["Handbook"].pk, bases["Secret"].pk
    assert {finance, handbook} <= access.readable_kb_ids(dana) and secret not in access.readable_kb_ids(dana)
    assert handbook in access.editable_kb_ids(dana) and finance not in access.editable_kb_ids(dana)
    assert finance in access.readable_kb_ids(hugo)
    assert not {finance, handbook, secret} & access.readable_kb_ids(hugo) - {finance}
    assert not {finance, handbook, secret} & access.readable_kb_ids(frank)


def test_roles_and_grants_follow_the_directory_at_every_sign_in(ldap_on, bases):
    import ldap

    assert _token("hugo", PEOPLE["hugo"].password).status_code == 200
    assert bases["Finance"].pk in access.readable_kb_ids(_fresh("hugo"))
    conn = ldap_on.admin()
    conn.modify_s(GROUPS["finance"].dn, [(ldap.MOD_DELETE, "member", [PEOPLE["hugo"].dn.encode()])])
    conn.modify_s(GROUPS["editors"].dn, [(ldap.MOD_ADD, "member", [PEOPLE["hugo"].dn.encode()])])
    try:
        assert _token("hugo", PEOPLE["hugo"].password).status_code == 200
        hugo = _fresh("hugo")
        assert bases["Finance"].pk not in access.readable_kb_ids(hugo)
        assert has_role(hugo, KB_EDITOR) and bases["Handbook"].pk in access.editable_kb_ids(hugo)
    finally:
        conn.modify_s(GROUPS["finance"].dn, [(ldap.MOD_ADD, "member", [PEOPLE["hugo"].dn.encode()])])
        conn.modify_s(GROUPS["editors"].dn, [(ldap.MOD_DELETE, "member", [PEOPLE["hugo"].dn.encode()])])
        conn.unbind_s()


def test_an_unchanged_mapping_does_not_rewrite_grants(ldap_on, bases):
    assert _token("dana", PEOPLE["dana"].password).status_code == 200
    before = list(KbGrant.objects.filter(group__name__startswith="ldap:").values_list("id", "created_at"))
    assert _token("dana", PEOPLE["dana"].password).status_code == 200
    assert list(KbGrant.objects.filter(group__name__startswith="ldap:").values_list("id", "created_at")) == before


def test_a_view_grant_is_accepted_in_the_mapping(slapd, settings, monkeypatch, bases):
    env = ldap_environment(slapd.uri, DOCMIND_LDAP_GROUP_KBS=f'{{"{GROUPS["finance"].dn}": '
                                                             '[{"kb": "Finance", "access": "view"}]}')
    apply_ldap_settings(settings, monkeypatch, env)
    assert _token("hugo", PEOPLE["hugo"].password).status_code == 200
    grant = KbGrant.objects.get(group__name__startswith="ldap:", kb=bases["Finance"])
    assert grant.access == "view"
    hugo = _fresh("hugo")
    # Answers from the base, but not its originals.
    assert bases["Finance"].pk in access.askable_kb_ids(hugo)
    assert bases["Finance"].pk not in access.readable_kb_ids(hugo)


def test_a_disabled_directory_account_cannot_sign_in(ldap_on, bases):
    assert _token("gina", PEOPLE["gina"].password).status_code == 401
    assert not get_user_model().objects.filter(username="gina").exists()


def test_an_account_disabled_after_its_first_sign_in_cannot_sign_in_again(ldap_on, bases):
    import ldap

    frank = PEOPLE["frank"]
    assert _token("frank", frank.password).status_code == 200
    ldap_on.lock(frank)
    try:
        assert _token("frank", frank.password).status_code == 401
    finally:
        conn = ldap_on.admin()
        conn.modify_s(frank.dn, [(ldap.MOD_DELETE, "pwdAccountLockedTime", None)])
        conn.unbind_s()


def test_a_user_deactivated_in_docmind_stays_out(ldap_on, bases):
    assert _token("frank", PEOPLE["frank"].password).status_code == 200
    get_user_model().objects.filter(username="frank").update(is_active=False)
    assert _token("frank", PEOPLE["frank"].password).status_code == 401


def test_a_directory_entry_never_signs_in_as_a_local_account_of_the_same_name(ldap_on, bases, django_user_model):
    carol = django_user_model.objects.create_user(username="carol", password="pw-carol-local")
    assert _token("carol", PEOPLE["carol"].password).status_code == 401
    assert _token("Carol", PEOPLE["carol"].password).status_code == 401
    assert _token("carol", "pw-carol-local").status_code == 200
    assert not ExternalIdentity.objects.filter(user=carol).exists()


def test_local_accounts_keep_working_beside_the_directory(ldap_on, member):
    assert _token("alice", "pw-alice").status_code == 200


def test_local_sign_in_can_be_switched_off(slapd, settings, monkeypatch, member, bases):
    apply_ldap_settings(settings, monkeypatch, ldap_environment(slapd.uri), local_signin=False)
    assert _token("alice", "pw-alice").status_code == 401
    assert _token("dana", PEOPLE["dana"].password).status_code == 200
    # Permissions still come from roles and groups: a directory kb_editor may use the admin's kb pages.
    assert _fresh("dana").has_perm("kb.view_document")


def test_the_directory_group_names_are_kept_within_djangos_limit():
    from sso.services import external_group_name

    name = external_group_name("ldap", "cn=" + "x" * 300 + ",dc=test")
    assert len(name) <= 150 and name.startswith("ldap:cn=xxx")
    assert name != external_group_name("ldap", "cn=" + "x" * 301 + ",dc=test")


def test_mapped_groups_are_django_groups_of_their_own(ldap_on, bases):
    assert _token("dana", PEOPLE["dana"].password).status_code == 200
    names = set(_fresh("dana").groups.values_list("name", flat=True))
    assert names == {KB_EDITOR, f"ldap:{GROUPS['editors'].dn}", f"ldap:{GROUPS['finance'].dn}"}
    assert Group.objects.filter(name__startswith="ldap:").count() == 2


def test_the_name_is_matched_as_the_directory_matches_it(ldap_on, bases):
    assert _token("Dana", PEOPLE["dana"].password).status_code == 200
    assert _token("dana", PEOPLE["dana"].password).status_code == 200
    assert list(get_user_model().objects.filter(username__iexact="dana").values_list("username", flat=True)) == ["dana"]
