"""Token login for API clients, the browser login page, and logout."""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_token_for_right_credentials_authenticates_the_api(member):
    client = APIClient()
    response = client.post("/api/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token " + response.json()["token"])
    me = client.get("/api/me/").json()
    assert me["username"] == "alice" and me["roles"] == ["member"]


def test_wrong_credentials_get_401_with_a_message(member):
    response = APIClient().post("/api/auth/token/", {"username": "alice", "password": "nope"}, format="json")
    assert response.status_code == 401
    assert "wrong username or password" in response.json()["error"]


def test_malformed_token_request_gets_400(member):
    response = APIClient().post("/api/auth/token/", {"username": "alice"}, format="json")
    assert response.status_code == 400


def test_api_without_credentials_is_refused():
    assert APIClient().get("/api/me/").status_code in (401, 403)


def test_login_page_renders_and_logs_in(client, member):
    assert client.get(reverse("login")).status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    assert response.status_code == 302
    assert client.get("/api/me/").json()["username"] == "alice"


def test_logout_ends_the_session(client, member):
    client.force_login(member)
    assert client.post(reverse("logout")).status_code == 302
    assert client.get("/api/me/").status_code in (401, 403)
