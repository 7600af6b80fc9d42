"""/healthz reports the directory when directory sign-in is on: reachable or not, within a bounded time, the answer
kept briefly, and never the service account's DN or password."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.sso import slapd as directory
from tests.sso.conftest import apply_ldap_settings, ldap_environment

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_probe():
    from sso.directory_probe import forget

    forget()
    yield
    forget()


@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def _secrets_absent(response) -> None:
    text = response.content.decode()
    for secret in (directory.BIND_DN, directory.BIND_PASSWORD, "reader-secret", "cn=reader"):
        assert secret not in text


def test_a_directory_that_takes_the_service_bind_is_ok(ldap_on, staff):
    response = staff.get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok", body
    assert body["directory"]["enabled"] is True
    assert body["directory"]["ok"] is True and body["directory"]["reachable"] is True
    assert body["directory"]["checked_seconds_ago"] >= 0
    _secrets_absent(response)


def test_a_refused_service_bind_is_degraded_and_says_so_without_the_credentials(slapd, settings, monkeypatch,
                                                                                  staff):
    apply_ldap_settings(settings, monkeypatch,
                        ldap_environment(slapd.uri, DOCMIND_LDAP_BIND_PASSWORD="wrong-" + directory.BIND_PASSWORD))
    response = staff.get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "degraded" and body["failing"] == ["directory"]
    assert body["directory"]["reachable"] is True and body["directory"]["ok"] is False
    assert "refused" in body["directory"]["error"]
    _secrets_absent(response)
    assert "wrong-" not in response.content.decode()


def test_a_port_nothing_listens_on_is_unreachable_and_degraded_not_down(settings, monkeypatch, staff):
    apply_ldap_settings(settings, monkeypatch, ldap_environment(f"ldap://127.0.0.1:{directory.free_port()}"))
    response = staff.get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "degraded" and body["failing"] == ["directory"]
    assert body["directory"]["ok"] is False and body["directory"]["reachable"] is False
    assert body["directory"]["error"] == "SERVER_DOWN"
    _secrets_absent(response)
    # Anyone else learns the state alone, as for every other backend.
    anonymous = Client().get("/healthz")
    assert anonymous.status_code == 200 and anonymous.json() == {"status": "degraded"}


def test_a_hung_directory_times_out_and_is_asked_once_while_the_answer_is_kept(silent_model_server, settings,
                                                                                 monkeypatch, staff):
    # The port accepts connections and never answers: without a bound the bind would wait forever.
    apply_ldap_settings(settings, monkeypatch,
                        ldap_environment(f"ldap://127.0.0.1:{silent_model_server.port}", DOCMIND_LDAP_TIMEOUT="1"))
    first = staff.get("/healthz").json()["directory"]
    assert first["ok"] is False and first["reachable"] is False and first["error"] == "timeout"
    asked = silent_model_server.accepted
    assert asked == 1
    for _ in range(3):
        assert staff.get("/healthz").json()["directory"]["error"] == "timeout"
    assert silent_model_server.accepted == asked  # a polling monitor does not become a stream of binds


def test_a_changed_setting_is_probed_afresh_and_the_kept_answer_expires(slapd, settings, monkeypatch, staff):
    from sso import directory_probe

    apply_ldap_settings(settings, monkeypatch, ldap_environment(f"ldap://127.0.0.1:{directory.free_port()}"))
    assert staff.get("/healthz").json()["directory"]["reachable"] is False
    apply_ldap_settings(settings, monkeypatch, ldap_environment(slapd.uri))
    assert staff.get("/healthz").json()["directory"]["ok"] is True
    slapd.pause()
    try:
        monkeypatch.setattr(directory_probe, "PROBE_TTL_SECONDS", 0.0)
        monkeypatch.setattr(directory_probe, "PROBE_TIMEOUT_SECONDS", 1.0)
        assert staff.get("/healthz").json()["directory"]["error"] == "timeout"
    finally:
        slapd.resume()


def test_without_a_directory_health_says_it_is_off(staff, settings):
    settings.DOCMIND_LDAP = None
    body = staff.get("/healthz").json()
    assert body["directory"] == {"enabled": False} and "directory" not in body["failing"]

