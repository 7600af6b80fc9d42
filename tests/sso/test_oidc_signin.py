"""OpenID Connect sign-in against a real provider process (django-oauth-toolkit): code flow with PKCE, claims to
users, the groups claim to roles and grants, and sign-out at the provider."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from docmind.roles import ADMIN, KB_EDITOR, MEMBER, has_role
from kb import access
from kb.services import kb_create
from sso import config
from sso.models import ExternalIdentity
from tests.sso.oidc_provider.process import OidcProvider, provider_browser_sign_in

pytestmark = pytest.mark.django_db

CLIENT_ID, CLIENT_SECRET = "docmind-test", "a-client-secret-for-tests"
USERS = [
    {"username": "olga", "password": "pw-olga-idp", "email": "olga@example.test", "given_name": "Olga",
     "family_name": "Ek", "groups": ["DocMind Editors", "Finance"]},
    {"username": "piet", "password": "pw-piet-idp", "email": "root@example.test", "groups": ["DocMind Admins"]},
    {"username": "quinn", "password": "pw-quinn-idp", "groups": []},
]


@pytest.fixture(scope="module")
def provider():
    server = OidcProvider(users=USERS, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                          redirect_uris=["http://testserver/oidc/callback/"],
                          post_logout_redirect_uris=["http://testserver/login/"])
    yield server
    server.stop()


def apply_oidc_settings(settings, monkeypatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    oidc_config = config.oidc_from_env()
    settings.DOCMIND_OIDC = oidc_config
    for name, value in config.oidc_settings(oidc_config).items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "sso.oidc.OidcBackend",
                                        "sso.backends.LocalBackend"]


def oidc_environment(provider: OidcProvider) -> dict[str, str]:
    return {**provider.environment(), "DOCMIND_OIDC_CLIENT_ID": CLIENT_ID, "DOCMIND_OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "DOCMIND_OIDC_GROUP_ROLES": '{"DocMind Admins": "admin", "DocMind Editors": "kb_editor"}',
            "DOCMIND_OIDC_GROUP_KBS": '{"Finance": [{"kb": "Finance", "access": "read"}]}',
            "DOCMIND_OIDC_BUTTON_LABEL": "Sign in with Example SSO"}


@pytest.fixture
def oidc_on(provider, settings, monkeypatch, seeded):
    apply_oidc_settings(settings, monkeypatch, oidc_environment(provider))
    return provider


@pytest.fixture
def bases(seeded):
    return {"Finance": kb_create(name="Finance"), "Secret": kb_create(name="Secret")}


def start(client: Client) -> str:
    response = client.get("/oidc/authenticate/?next=/memories/")
    assert response.status_code == 302
    return response["Location"]


def sign_in(client: Client, provider: OidcProvider, username: str, password: str):
    """The whole flow: DocMind sends the browser to the provider, the provider sends it back with a code."""
    authorize = start(client)
    browser = provider_browser_sign_in(provider, username, password)
    answer = browser.get(authorize, allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text[:500]
    back = urlsplit(answer.headers["Location"])
    assert back.path == "/oidc/callback/" and "code" in parse_qs(back.query)
    return client.get(f"{back.path}?{back.query}"), browser


def test_the_authorization_request_uses_pkce_and_a_nonce(oidc_on):
    query = parse_qs(urlsplit(start(Client())).query)
    assert query["response_type"] == ["code"] and query["client_id"] == [CLIENT_ID]
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) >= 43
    assert query["nonce"] and query["state"]


def test_a_provider_user_signs_in_and_is_created_from_the_claims(oidc_on, bases):
    client = Client()
    response, _browser = sign_in(client, oidc_on, "olga", "pw-olga-idp")
    assert response.status_code == 302 and response["Location"] == "/memories/"
    olga = get_user_model().objects.get(username="olga")
    assert (olga.first_name, olga.last_name, olga.email) == ("Olga", "Ek", "olga@example.test")
    assert not olga.has_usable_password()
    assert ExternalIdentity.objects.get(user=olga, provider="oidc").subject.endswith(" " + _sub_of(olga))
    assert client.get("/api/me/").json()["username"] == "olga"


def _sub_of(user) -> str:
    return ExternalIdentity.objects.get(user=user, provider="oidc").subject.rsplit(" ", 1)[-1]


def test_the_groups_claim_maps_to_roles_and_grants(oidc_on, bases):
    for name, password in (("olga", "pw-olga-idp"), ("piet", "pw-piet-idp"), ("quinn", "pw-quinn-idp")):
        assert sign_in(Client(), oidc_on, name, password)[0].status_code == 302
    users = {u.username: u for u in get_user_model().objects.filter(username__in=["olga", "piet", "quinn"])}
    assert has_role(users["olga"], KB_EDITOR) and not has_role(users["olga"], ADMIN)
    assert has_role(users["piet"], ADMIN) and users["piet"].is_staff
    assert has_role(users["quinn"], MEMBER) and not users["quinn"].is_staff
    assert bases["Finance"].pk in access.readable_kb_ids(users["olga"])
    assert bases["Secret"].pk not in access.readable_kb_ids(users["olga"])
    assert not {bases["Finance"].pk, bases["Secret"].pk} & access.readable_kb_ids(users["quinn"])


def test_the_same_subject_signs_in_as_the_same_user(oidc_on, bases):
    sign_in(Client(), oidc_on, "quinn", "pw-quinn-idp")
    sign_in(Client(), oidc_on, "quinn", "pw-quinn-idp")
    assert get_user_model().objects.filter(username__startswith="quinn").count() == 1


def test_a_provider_account_never_signs_in_as_a_local_account_with_its_name_or_mail(oidc_on, django_user_model):
    local_piet = django_user_model.objects.create_user(username="piet", password="pw-local", is_superuser=True)
    django_user_model.objects.create_user(username="root", email="root@example.test", password="pw-root")
    client = Client()
    assert sign_in(client, oidc_on, "piet", "pw-piet-idp")[0].status_code == 302
    me = client.get("/api/me/").json()
    assert me["username"] == "piet-2" and me["id"] != local_piet.pk
    assert not ExternalIdentity.objects.filter(user=local_piet).exists()


def test_a_replayed_or_forged_callback_signs_nobody_in(oidc_on):
    client = Client()
    start(client)
    assert client.get("/oidc/callback/?code=forged&state=not-issued").status_code == 400
    client2 = Client()
    state = parse_qs(urlsplit(start(client2)).query)["state"][0]
    response = client2.get(f"/oidc/callback/?code=forged-code&state={state}")
    assert response.status_code == 302 and response["Location"] == "/login/?sso=failed"
    assert client2.get("/api/me/").status_code in (401, 403)


def test_sign_out_ends_the_provider_session_too(oidc_on):
    client = Client()
    _response, browser = sign_in(client, oidc_on, "olga", "pw-olga-idp")
    out = client.post("/logout/")
    assert out.status_code == 302
    target = urlsplit(out["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{oidc_on.url}/o/logout/"
    assert parse_qs(target.query)["id_token_hint"]
    assert client.get("/api/me/").status_code in (401, 403)
    back = browser.get(out["Location"], allow_redirects=False, timeout=30)
    assert back.status_code == 302 and back.headers["Location"] == "http://testserver/login/"
    # The provider forgot the person: a new sign-in asks for the password again.
    again = browser.get(start(Client()), allow_redirects=False, timeout=30)
    assert urlsplit(again.headers["Location"]).path == "/accounts/login/"


def test_a_provider_that_is_down_fails_the_sign_in_with_a_message(oidc_on, settings):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    authorize = start(client)
    browser = provider_browser_sign_in(oidc_on, "quinn", "pw-quinn-idp")
    back = urlsplit(browser.get(authorize, allow_redirects=False, timeout=30).headers["Location"])
    from tests.sso.slapd import free_port

    settings.OIDC_OP_TOKEN_ENDPOINT = f"http://127.0.0.1:{free_port()}/o/token/"
    response = client.get(f"{back.path}?{back.query}")
    assert response.status_code == 302 and response["Location"] == "/login/?sso=failed"
    page = client.get(response["Location"]).content.decode()
    assert "did not succeed" in page


def test_the_login_page_offers_the_provider(oidc_on):
    page = Client(HTTP_ACCEPT_LANGUAGE="en").get("/login/").content.decode()
    assert "Sign in with Example SSO" in page and 'href="/oidc/authenticate/' in page


def test_without_a_provider_the_oidc_urls_are_not_found(settings, seeded):
    settings.DOCMIND_OIDC = None
    assert Client().get("/oidc/authenticate/").status_code == 404
    assert Client().get("/oidc/callback/?code=x&state=y").status_code == 404
    assert "/oidc/authenticate/" not in Client().get("/login/").content.decode()
