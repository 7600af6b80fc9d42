"""Sessions: a user lists and ends their own; an administrator ends all of a user's; the password policy."""
from __future__ import annotations

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from rest_framework.test import APIClient

from sso import config
from sso.models import UserSession

pytestmark = pytest.mark.django_db


def _signed_in(username: str, password: str, agent: str = "test-browser") -> Client:
    client = Client(HTTP_USER_AGENT=agent, HTTP_ACCEPT_LANGUAGE="en")
    assert client.post("/login/", {"username": username, "password": password}).status_code == 302
    return client


def _is_signed_in(client: Client) -> bool:
    return client.get("/api/me/").status_code == 200


def test_a_user_sees_their_sessions_and_which_is_this_one(member, other_member):
    laptop = _signed_in("alice", "pw-alice", "laptop")
    _signed_in("alice", "pw-alice", "phone")
    _signed_in("bob", "pw-bob")
    rows = laptop.get("/api/me/sessions/").json()
    assert sorted(r["user_agent"] for r in rows) == ["laptop", "phone"]
    assert [r["user_agent"] for r in rows if r["current"]] == ["laptop"]
    assert {r["provider"] for r in rows} == {"local"}


def test_a_user_ends_another_of_their_sessions(member):
    laptop = _signed_in("alice", "pw-alice", "laptop")
    phone = _signed_in("alice", "pw-alice", "phone")
    phone_row = next(r for r in laptop.get("/api/me/sessions/").json() if r["user_agent"] == "phone")
    assert laptop.delete(f"/api/me/sessions/{phone_row['id']}/").status_code == 204
    assert not _is_signed_in(phone)
    assert _is_signed_in(laptop)
    assert [r["user_agent"] for r in laptop.get("/api/me/sessions/").json()] == ["laptop"]


def test_a_user_cannot_end_someone_elses_session(member, other_member):
    alice = _signed_in("alice", "pw-alice")
    bob = _signed_in("bob", "pw-bob")
    bob_row = UserSession.objects.get(user=other_member)
    assert alice.delete(f"/api/me/sessions/{bob_row.pk}/").status_code == 404
    assert _is_signed_in(bob)


def test_the_sessions_page_lists_and_ends_sessions(member):
    laptop = _signed_in("alice", "pw-alice", "laptop")
    phone = _signed_in("alice", "pw-alice", "phone")
    page = laptop.get("/account/sessions/").content.decode()
    assert "laptop" in page and "phone" in page and "this browser" in page
    assert "<td>DocMind password</td>" in page and "<td>local</td>" not in page  # how it signed in, in words
    phone_row = UserSession.objects.get(user_agent="phone")
    assert laptop.post(f"/account/sessions/{phone_row.pk}/end/").status_code == 302
    assert not _is_signed_in(phone) and _is_signed_in(laptop)


@pytest.mark.parametrize("path", ["/account/sessions/", "/memories/"])
def test_the_sessions_and_memories_pages_share_one_header(member, path):
    page = _signed_in("alice", "pw-alice").get(path).content.decode()
    header = page[page.index('<header class="mem-head">'):page.index("</header>")]
    assert page.count('<header class="mem-head">') == 1
    assert '<a class="brand" href="/">' in header and '<a class="mem-back" href="/">' in header
    assert "Back to the chat" in header and 'class="lang-switch"' in header


def test_signing_out_forgets_the_session(member):
    client = _signed_in("alice", "pw-alice")
    assert UserSession.objects.filter(user=member).count() == 1
    client.post("/logout/")
    assert not UserSession.objects.filter(user=member).exists()


def test_an_administrator_ends_every_session_and_the_token_of_a_user(member, admin_user):
    laptop, phone = _signed_in("alice", "pw-alice"), _signed_in("alice", "pw-alice")
    token = APIClient().post("/api/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    api = APIClient(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    assert api.get("/api/me/").status_code == 200
    admin = _signed_in("root-admin", "pw-root-admin")
    answer = admin.delete(f"/api/users/{member.pk}/sessions/")
    assert answer.status_code == 200 and answer.json()["ended"] == 2
    assert not _is_signed_in(laptop) and not _is_signed_in(phone)
    assert api.get("/api/me/").status_code == 401
    assert _is_signed_in(admin)


def test_only_an_administrator_ends_another_users_sessions(member, other_member, kb_editor):
    bob = _signed_in("bob", "pw-bob")
    for who, password in (("alice", "pw-alice"), ("eddie", "pw-eddie")):
        assert _signed_in(who, password).delete(f"/api/users/{other_member.pk}/sessions/").status_code == 403
    assert _is_signed_in(bob)


def test_the_admin_action_ends_a_users_sessions(member, admin_user):
    laptop = _signed_in("alice", "pw-alice")
    admin = _signed_in("root-admin", "pw-root-admin")
    response = admin.post("/admin/auth/user/", {"action": "end_sessions", "_selected_action": [member.pk]})
    assert response.status_code == 302
    assert not _is_signed_in(laptop) and _is_signed_in(admin)


def test_sessions_that_expired_are_not_listed(member):
    from django.contrib.sessions.models import Session

    laptop = _signed_in("alice", "pw-alice", "laptop")
    _signed_in("alice", "pw-alice", "phone")
    Session.objects.exclude(session_key=laptop.session.session_key).delete()
    assert [r["user_agent"] for r in laptop.get("/api/me/sessions/").json()] == ["laptop"]
    assert UserSession.objects.filter(user=member).count() == 1


@pytest.mark.parametrize(("options", "password", "accepted"), [
    ({}, "long enough phrase", True),
    ({}, "short7!", False),
    ({"min_length": 14}, "long enough?", False),
    ({"min_length": 14}, "a much longer passphrase", True),
    ({}, "password123", False),  # common
    ({"reject_common": False}, "password123", True),
    ({"reject_numeric": True}, "839201748392", False),
    ({}, "839201748392", True),
])
def test_the_password_policy_follows_its_settings(settings, options, password, accepted):
    kwargs = {"min_length": 8, "reject_common": True, "reject_numeric": False, "reject_similar": False, **options}
    settings.AUTH_PASSWORD_VALIDATORS = config.password_validators(**kwargs)
    try:
        validate_password(password)
    except ValidationError:
        assert not accepted
    else:
        assert accepted


def test_changing_a_local_password_applies_the_policy_and_signs_out_other_sessions(member, settings):
    settings.AUTH_PASSWORD_VALIDATORS = config.password_validators(
        min_length=12, reject_common=True, reject_numeric=False, reject_similar=False)
    laptop, phone = _signed_in("alice", "pw-alice"), _signed_in("alice", "pw-alice")
    weak = laptop.post("/account/password/", {"old_password": "pw-alice", "new_password1": "short-pw",
                                              "new_password2": "short-pw"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    strong = laptop.post("/account/password/", {"old_password": "pw-alice", "new_password1": "a long new passphrase",
                                                "new_password2": "a long new passphrase"})
    assert strong.status_code == 302
    assert _is_signed_in(laptop) and not _is_signed_in(phone)
