"""TLS deployment settings from the environment, the Content-Security-Policy, and `check --deploy`."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from docmind import env

ROOT = Path(__file__).resolve().parents[2]

# The production variables README documents under "Behind HTTPS".
PRODUCTION = {
    "DJANGO_ALLOWED_HOSTS": "docmind.example.com",
    "DJANGO_SECURE_SSL_REDIRECT": "1",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "DJANGO_SECURE_HSTS_PRELOAD": "1",
    "DJANGO_SECURE_COOKIES": "1",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://docmind.example.com",
}


def _check_deploy(tmp_path, extra: dict[str, str]) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environment.update(DOCMIND_DATA_DIR=str(tmp_path), DJANGO_SECRET_KEY=secrets.token_urlsafe(50), **extra)
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_the_documented_production_variables(tmp_path):
    done = _check_deploy(tmp_path, PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_warns_without_them(tmp_path):
    done = _check_deploy(tmp_path, {"DJANGO_ALLOWED_HOSTS": "docmind.example.com"})
    assert done.returncode != 0 and "security.W008" in done.stderr + done.stdout


@pytest.mark.parametrize("name,value", [("DJANGO_SECURE_PROXY_SSL_HEADER", "https"),
                                        ("DJANGO_SECURE_PROXY_SSL_HEADER", "X Forwarded: https"),
                                        ("DJANGO_CSRF_TRUSTED_ORIGINS", "docmind.example.com"),
                                        ("DJANGO_CSRF_TRUSTED_ORIGINS", "https://a.example.com/path")])
def test_malformed_tls_variables_name_themselves(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(env.EnvError, match=name):
        env.proxy_ssl_header() if name.endswith("HEADER") else env.origins(name)


def test_the_proxy_header_becomes_django_s_meta_name(monkeypatch):
    monkeypatch.setenv("DJANGO_SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto: https")
    assert env.proxy_ssl_header() == ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.fixture
def behind_tls_proxy(settings):
    settings.ALLOWED_HOSTS = ["docmind.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.CSRF_TRUSTED_ORIGINS = ["https://docmind.example.com"]


@pytest.mark.django_db
def test_login_works_behind_a_tls_proxy_with_secure_cookies(behind_tls_proxy, member):
    client = Client(enforce_csrf_checks=True, HTTP_HOST="docmind.example.com")
    proxied = {"HTTP_X_FORWARDED_PROTO": "https"}
    plain = client.get(reverse("login"))
    assert plain.status_code == 301 and plain["Location"].startswith("https://docmind.example.com/")
    page = client.get(reverse("login"), **proxied)
    assert page.status_code == 200 and page["Strict-Transport-Security"].startswith("max-age=31536000")
    csrf = page.cookies["csrftoken"]
    assert csrf["secure"]
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice",
                                              "csrfmiddlewaretoken": csrf.value},
                           HTTP_ORIGIN="https://docmind.example.com", **proxied)
    assert response.status_code == 302, response.content[:300]
    assert response.cookies["sessionid"]["secure"]
    assert client.get("/api/me/", **proxied).json()["username"] == "alice"


@pytest.mark.django_db
def test_a_post_from_another_origin_is_refused_behind_the_proxy(behind_tls_proxy, member):
    client = Client(enforce_csrf_checks=True, HTTP_HOST="docmind.example.com")
    proxied = {"HTTP_X_FORWARDED_PROTO": "https"}
    csrf = client.get(reverse("login"), **proxied).cookies["csrftoken"].value
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice",
                                              "csrfmiddlewaretoken": csrf},
                           HTTP_ORIGIN="https://evil.example.net", **proxied)
    assert response.status_code == 403


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy(client, member):
    header = client.get(reverse("login"))["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in header.split(";"))
    assert directives["default-src"] == "'self'" and directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and "unsafe-inline" not in header
    client.force_login(member)
    assert client.get("/")["Content-Security-Policy"] == header


def test_the_readme_documents_every_production_variable():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Behind HTTPS", 1)[1].split("\n## ", 1)[0]
    assert [name for name in PRODUCTION if f"{name}=" not in section] == []
