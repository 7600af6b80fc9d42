"""`bootstrap`: the first-run administrator, announced at the address the server really listens on."""
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_it_prints_the_login_url_with_the_port_make_run_serves_on(monkeypatch, seeded):
    monkeypatch.setenv("PORT", "8765")
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("DOCMIND_ADMIN_PASSWORD", "a-long-password")
    out = StringIO()
    call_command("bootstrap", "--no-demo", stdout=out)
    assert "http://0.0.0.0:8765/login/" in out.getvalue()
    assert "a-long-password" not in out.getvalue()


@pytest.mark.django_db
def test_it_defaults_to_the_makefile_address_and_names_an_existing_admin(monkeypatch, seeded, django_user_model):
    monkeypatch.delenv("PORT", raising=False)
    monkeypatch.delenv("HOST", raising=False)
    django_user_model.objects.create_superuser(username="boss", password="pw", email="")
    out = StringIO()
    call_command("bootstrap", "--no-demo", stdout=out)
    assert "http://127.0.0.1:8000/login/ as boss" in out.getvalue()
