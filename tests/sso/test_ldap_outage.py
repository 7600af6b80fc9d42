"""A directory that is down or hangs: directory sign-in says so within the timeout; local sign-in is untouched."""
from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.isolation import client_address
from tests.sso import slapd as directory
from tests.sso.conftest import PEOPLE, apply_ldap_settings, ldap_environment

pytestmark = pytest.mark.django_db



def _browser() -> Client:
    return Client(REMOTE_ADDR=client_address(), HTTP_ACCEPT_LANGUAGE="en")


@pytest.fixture
def directory_down(settings, monkeypatch):
    # Nothing listens on a port just freed: every connection is refused at once.
    apply_ldap_settings(settings, monkeypatch, ldap_environment(f"ldap://127.0.0.1:{directory.free_port()}"))


@pytest.fixture
def directory_hung(slapd, settings, monkeypatch):
    # A stopped slapd: the kernel still accepts the connection, but nothing ever answers.
    apply_ldap_settings(settings, monkeypatch, ldap_environment(slapd.uri, DOCMIND_LDAP_TIMEOUT="1"))
    slapd.pause()
    yield slapd
    slapd.resume()


@pytest.fixture(params=["directory_down", "directory_hung"])
def unavailable(request):
    return request.getfixturevalue(request.param)


def test_the_login_page_says_the_directory_is_unavailable(unavailable, seeded):
    response = _browser().post("/login/", {"username": "dana", "password": PEOPLE["dana"].password})
    assert response.status_code == 200
    assert "directory is unavailable" in response.content.decode()
    assert "Wrong username or password" not in response.content.decode()


def test_the_admin_login_says_the_directory_is_unavailable(unavailable, seeded):
    response = _browser().post(
        "/admin/login/", {"username": "dana", "password": PEOPLE["dana"].password, "next": "/admin/"})
    assert response.status_code == 200
    assert "directory is unavailable" in response.content.decode()


def test_the_token_endpoint_answers_503_with_a_code(unavailable, seeded):
    response = APIClient(REMOTE_ADDR=client_address()).post(
        "/api/auth/token/", {"username": "dana", "password": PEOPLE["dana"].password}, format="json")
    assert response.status_code == 503
    assert response.json()["code"] == "directory_unavailable"


def test_local_sign_in_still_works(unavailable, member):
    client = _browser()
    assert client.post("/login/", {"username": "alice", "password": "pw-alice"}).status_code == 302
    token = APIClient(REMOTE_ADDR=client_address()).post(
        "/api/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert token.status_code == 200


def test_a_wrong_local_password_is_still_just_wrong(unavailable, member):
    response = _browser().post("/login/", {"username": "alice", "password": "nope"})
    assert "Wrong username or password" in response.content.decode()
    assert "directory is unavailable" not in response.content.decode()
