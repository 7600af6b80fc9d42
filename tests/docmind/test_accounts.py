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


@pytest.mark.parametrize(("accept", "message"), [("en", "Wrong username or password."),
                                                 ("zh-CN", "用户名或密码不正确。")])
def test_wrong_credentials_get_401_with_a_message_in_the_clients_language(member, accept, message):
    response = APIClient().post("/api/auth/token/", {"username": "alice", "password": "nope"}, format="json",
                                HTTP_ACCEPT_LANGUAGE=accept)
    assert response.status_code == 401
    assert response.json()["error"] == message


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
