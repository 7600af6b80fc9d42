"""Brute-force protection: the token endpoint is throttled; the login page, the admin login and the
token endpoint lock a (username, address) out after the configured number of failures."""
from __future__ import annotations

import pytest
from django.core.cache import caches
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from tests.isolation import client_address

pytestmark = pytest.mark.django_db


@pytest.fixture
def limits(settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.LOGIN_LOCKOUT_MINUTES = 3


def test_the_token_endpoint_is_throttled_per_address(member, monkeypatch):
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "auth", "3/minute")
    address = client_address()
    client = APIClient(REMOTE_ADDR=address)
    codes = [client.post("/api/auth/token/", {"username": "nobody", "password": "x"}, format="json").status_code
             for _ in range(4)]
    assert codes == [401, 401, 401, 429]
    right = client.post("/api/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert right.status_code == 429 and "Retry-After" in right
    other = APIClient(REMOTE_ADDR=address.rsplit(".", 1)[0] + ".251")
    assert other.post("/api/auth/token/", {"username": "alice", "password": "pw-alice"},
                      format="json").status_code == 200


def test_the_token_endpoint_locks_out_after_repeated_wrong_passwords(member, limits):
    client = APIClient(REMOTE_ADDR=client_address())
    for _ in range(3):
        client.post("/api/auth/token/", {"username": "alice", "password": "wrong"}, format="json")
    response = client.post("/api/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert response.status_code == 429
    assert response.json()["code"] == "locked_out" and "token" not in response.json()


def test_the_login_page_locks_out_and_the_right_password_no_longer_works(client, member, limits):
    codes = [client.post(reverse("login"), {"username": "alice", "password": "wrong"}).status_code for _ in range(3)]
    assert codes == [200, 200, 429]  # the failure that reaches the limit is already answered as a lockout
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 429
    assert "分钟后再试" in response.content.decode()
    english = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"}, HTTP_ACCEPT_LANGUAGE="en")
    assert english.status_code == 429 and "try again in 3 minutes" in english.content.decode()
    assert client.get("/api/me/").status_code in (401, 403)


def test_the_admin_login_locks_out(client, admin_user, limits):
    url = reverse("admin:login")
    for _ in range(3):
        client.post(url, {"username": "root-admin", "password": "wrong"})
    response = client.post(url, {"username": "root-admin", "password": "pw-root-admin"})
    assert response.status_code == 429
    assert client.get(reverse("admin:index")).status_code == 302  # still not logged in


def test_a_lockout_is_per_address_so_the_user_can_still_log_in_elsewhere(member, limits):
    attacker = APIClient(REMOTE_ADDR=client_address())
    for _ in range(4):
        attacker.post("/api/auth/token/", {"username": "alice", "password": "wrong"}, format="json")
    owner = APIClient(REMOTE_ADDR="192.0.2.10")
    assert owner.post("/api/auth/token/", {"username": "alice", "password": "pw-alice"},
                      format="json").status_code == 200


def test_a_success_before_the_limit_resets_the_count(client, member, limits):
    for _ in range(2):
        client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert client.post(reverse("login"), {"username": "alice", "password": "pw-alice"}).status_code == 302
    client.post(reverse("logout"))
    for _ in range(2):
        client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert client.post(reverse("login"), {"username": "alice", "password": "pw-alice"}).status_code == 302


def test_behind_trusted_proxies_the_forwarded_client_address_is_used(settings, rf):
    from docmind.lockout import client_ip

    request = rf.get("/", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9", REMOTE_ADDR="10.0.0.2")
    settings.TRUSTED_PROXIES = 0
    assert client_ip(request) == "10.0.0.2"
    settings.TRUSTED_PROXIES = 1
    assert client_ip(request) == "203.0.113.9"  # the spoofable left part is ignored


def test_the_token_endpoint_stays_throttled_while_redis_is_down(member, monkeypatch, settings):
    import socket

    from docmind import env

    with socket.socket() as s:  # a port nothing listens on: every Redis call fails at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.CACHES = env.cache_config(f"redis://127.0.0.1:{port}/0")
    caches["throttle_local"].clear()  # the fallback counter lives as long as the worker: start it empty
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "auth", "3/minute")
    client = APIClient(REMOTE_ADDR=client_address())
    codes = [client.post("/api/auth/token/", {"username": "nobody", "password": "x"}, format="json").status_code
             for _ in range(4)]
    assert codes == [401, 401, 401, 429]
