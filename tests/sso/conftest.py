"""A real directory for the sign-in tests, and settings that point DocMind at it."""
from __future__ import annotations

import pytest

from tests.conftest import skip_unless_required
from tests.sso import slapd as directory
from tests.sso.slapd import DirectoryGroup, Person

PEOPLE = {
    "dana": Person("dana", "pw-dana-dir", given_name="Dana", surname="Ng", mail="dana@example.test"),
    "erin": Person("erin", "pw-erin-dir", given_name="Erin", surname="Li"),
    "frank": Person("frank", "pw-frank-dir"),
    "gina": Person("gina", "pw-gina-dir", locked=True),
    "hugo": Person("hugo", "pw-hugo-dir"),
    # Named like the local account the tests create: the directory must never sign in as it.
    "carol": Person("carol", "pw-carol-dir"),
}
GROUPS = {
    "staff": DirectoryGroup("staff", ["erin"]),
    "editors": DirectoryGroup("editors", ["dana", "erin"]),
    "finance": DirectoryGroup("finance", ["dana", "hugo"]),
    "everyone": DirectoryGroup("everyone", ["dana", "erin", "frank", "gina", "hugo", "carol"]),
}


@pytest.fixture(scope="module")
def slapd():
    if not directory.available():
        skip_unless_required("slapd is not installed (Debian packages slapd and ldap-utils)",
                             variable="DOCMIND_REQUIRE_SERVICES")
    server = directory.Slapd(people=list(PEOPLE.values()), groups=list(GROUPS.values()))
    yield server
    server.stop()


def ldap_environment(uri: str, **extra: str) -> dict[str, str]:
    env = {
        "DOCMIND_LDAP_URI": uri,
        "DOCMIND_LDAP_BIND_DN": directory.BIND_DN,
        "DOCMIND_LDAP_BIND_PASSWORD": directory.BIND_PASSWORD,
        "DOCMIND_LDAP_USER_BASE": directory.USER_BASE,
        "DOCMIND_LDAP_GROUP_BASE": directory.GROUP_BASE,
        # Upper case and spaces on purpose: DNs compare as the directory compares them.
        "DOCMIND_LDAP_GROUP_ROLES": f'{{"CN=Staff, {directory.GROUP_BASE}": "admin", '
                                    f'"{GROUPS["editors"].dn}": "kb_editor"}}',
        "DOCMIND_LDAP_GROUP_KBS": f'{{"{GROUPS["finance"].dn}": [{{"kb": "Finance", "access": "read"}}], '
                                  f'"{GROUPS["editors"].dn}": [{{"kb": "Handbook", "access": "edit"}}]}}',
        "DOCMIND_LDAP_TIMEOUT": "2",
    }
    env.update(extra)
    return env


def apply_ldap_settings(settings, monkeypatch, env: dict[str, str], *, local_signin: bool = True) -> None:
    """Point the running settings at a directory exactly as these variables would at start-up."""
    from sso import config

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ldap_config = config.ldap_from_env()
    settings.DOCMIND_LDAP = ldap_config
    for name, value in config.ldap_settings(ldap_config).items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "sso.ldap_backend.DirectoryBackend",
        "sso.backends.LocalBackend" if local_signin else "sso.backends.PermissionsOnlyBackend",
    ]


@pytest.fixture
def ldap_on(slapd, settings, monkeypatch):
    apply_ldap_settings(settings, monkeypatch, ldap_environment(slapd.uri))
    return slapd
