"""Directory and identity-provider settings from the environment: valid values map, bad ones name the variable."""
from __future__ import annotations

import pytest

from docmind import roles
from docmind.env import EnvError
from sso import config


def test_grant_levels_match_the_knowledge_base_access_levels():
    from kb.models import KbAccess

    assert set(config.GRANT_LEVELS) == set(KbAccess.values)


def test_role_names_match_docmind_roles():
    assert config.ROLES == roles.ROLES
    assert set(config.ROLE_RANK) == set(roles.ROLES)


def test_the_directory_is_off_without_a_uri(monkeypatch):
    monkeypatch.delenv("DOCMIND_LDAP_URI", raising=False)
    assert config.ldap_from_env() is None
    assert config.ldap_settings(None) == {}


def _ldap_env(monkeypatch, **values: str) -> None:
    base = {"DOCMIND_LDAP_URI": "ldap://dir.example:389", "DOCMIND_LDAP_USER_BASE": "ou=people,dc=example"}
    for name, value in {**base, **values}.items():
        monkeypatch.setenv(name, value)


def test_the_user_filter_defaults_to_uid_and_the_timeout_bounds_every_operation(monkeypatch):
    import ldap

    _ldap_env(monkeypatch)
    values = config.ldap_settings(config.ldap_from_env())
    assert values["AUTH_LDAP_USER_SEARCH"].filterstr == "(uid=%(user)s)"
    assert values["AUTH_LDAP_CONNECTION_OPTIONS"][ldap.OPT_NETWORK_TIMEOUT] == 5
    assert values["AUTH_LDAP_CONNECTION_OPTIONS"][ldap.OPT_TIMEOUT] == 5
    assert "AUTH_LDAP_GROUP_SEARCH" not in values  # no group base: no group lookups


@pytest.mark.parametrize(("name", "value"), [
    ("DOCMIND_LDAP_URI", "dir.example"),
    ("DOCMIND_LDAP_USER_BASE", ""),
    ("DOCMIND_LDAP_USER_FILTER", "(uid=*)"),
    ("DOCMIND_LDAP_GROUP_ROLES", "{not json"),
    ("DOCMIND_LDAP_GROUP_ROLES", '{"cn=x": "owner"}'),
    ("DOCMIND_LDAP_GROUP_KBS", '{"cn=x": [{"kb": "A", "access": "write"}]}'),
    ("DOCMIND_LDAP_GROUP_KBS", '{"cn=x": {"kb": "A", "access": "read"}}'),
    ("DOCMIND_LDAP_GROUP_KBS", '{"cn=x": [{"kb": "A", "access": "read", "extra": 1}]}'),
    ("DOCMIND_LDAP_DEFAULT_ROLE", "root"),
    ("DOCMIND_LDAP_TIMEOUT", "0"),
])
def test_a_bad_value_names_its_variable(monkeypatch, name, value):
    _ldap_env(monkeypatch, **{name: value})
    with pytest.raises(EnvError) as caught:
        config.ldap_from_env()
    assert caught.value.name == name


def test_group_dns_compare_as_the_directory_compares_them(monkeypatch):
    _ldap_env(monkeypatch, DOCMIND_LDAP_GROUP_ROLES='{"CN=Staff, OU=Groups,DC=Example": "admin"}',
              DOCMIND_LDAP_GROUP_KBS='{"cn=fin,ou=groups,dc=example": [{"kb": "Finance", "access": "view"}]}')
    mapping = config.ldap_from_env().mapping
    assert mapping.role_for({"cn=staff,ou=groups,dc=example"}) == roles.ADMIN
    assert mapping.mapped_groups({"CN=Fin, ou=groups, dc=example"}) == {"cn=fin,ou=groups,dc=example"}
    assert mapping.kbs["cn=fin,ou=groups,dc=example"] == (config.KbRule(kb="Finance", access="view"),)


@pytest.mark.parametrize(("groups", "expected"), [
    (set(), roles.MEMBER),
    ({"editors"}, roles.KB_EDITOR),
    ({"editors", "admins"}, roles.ADMIN),
    ({"unmapped"}, roles.MEMBER),
])
def test_the_strongest_mapped_role_wins_and_unmapped_users_get_the_default(groups, expected):
    mapping = config.GroupMapping(roles={"editors": roles.KB_EDITOR, "admins": roles.ADMIN})
    assert mapping.role_for(groups) == expected


def test_oidc_group_names_are_case_sensitive():
    mapping = config.GroupMapping(roles={"Admins": roles.ADMIN})
    assert mapping.role_for({"admins"}) == roles.MEMBER
    assert mapping.role_for({"Admins"}) == roles.ADMIN


def _oidc_env(monkeypatch, **values: str) -> None:
    base = {"DOCMIND_OIDC_CLIENT_ID": "docmind", "DOCMIND_OIDC_AUTHORIZATION_ENDPOINT": "https://idp.example/auth",
            "DOCMIND_OIDC_TOKEN_ENDPOINT": "https://idp.example/token",
            "DOCMIND_OIDC_USERINFO_ENDPOINT": "https://idp.example/userinfo",
            "DOCMIND_OIDC_JWKS_ENDPOINT": "https://idp.example/jwks"}
    for name, value in {**base, **values}.items():
        monkeypatch.setenv(name, value)


def test_oidc_is_off_without_a_client_id_and_uses_pkce_when_on(monkeypatch):
    monkeypatch.delenv("DOCMIND_OIDC_CLIENT_ID", raising=False)
    assert config.oidc_from_env() is None and config.oidc_settings(None) == {}
    _oidc_env(monkeypatch)
    values = config.oidc_settings(config.oidc_from_env())
    assert values["OIDC_USE_PKCE"] is True and values["OIDC_PKCE_CODE_CHALLENGE_METHOD"] == "S256"
    assert values["OIDC_RP_SIGN_ALGO"] == "RS256" and values["OIDC_USE_NONCE"] is True


@pytest.mark.parametrize(("name", "value"), [
    ("DOCMIND_OIDC_TOKEN_ENDPOINT", ""),
    ("DOCMIND_OIDC_JWKS_ENDPOINT", "idp.example/jwks"),
    ("DOCMIND_OIDC_END_SESSION_ENDPOINT", "logout"),
    ("DOCMIND_OIDC_GROUP_ROLES", '["admins"]'),
    ("DOCMIND_OIDC_TIMEOUT", "x"),
])
def test_a_bad_oidc_value_names_its_variable(monkeypatch, name, value):
    _oidc_env(monkeypatch, **{name: value})
    with pytest.raises(EnvError) as caught:
        config.oidc_from_env()
    assert caught.value.name == name


def test_password_policy_defaults_keep_djangos_length_and_common_list():
    names = [v["NAME"].rsplit(".", 1)[-1] for v in config.password_validators(
        min_length=8, reject_common=True, reject_numeric=False, reject_similar=False)]
    assert names == ["MinimumLengthValidator", "CommonPasswordValidator"]
