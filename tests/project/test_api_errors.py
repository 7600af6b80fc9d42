"""Every answer under /api/ that is an error is JSON, never an HTML page or a Python repr."""
from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/kbs/abc/", "/api/kb/documents/abc/", "/api/messages/abc/feedback/",
                                  "/api/no-such-thing/", "/api/conversations/1/nope/"])
def test_an_unmatched_api_path_is_a_json_404(member_client, path):
    response = member_client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_found"


@pytest.mark.django_db
def test_a_page_outside_the_api_keeps_its_html_404(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_get_on_the_chat_stream_is_a_json_405_naming_post(member_client):
    response = member_client.get("/api/chat/")
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert response["Content-Type"] == "application/json" and response.json()["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_a_browser_asking_for_html_still_gets_json_errors(member_client):
    response = member_client.get("/api/kbs/987654/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


@pytest.mark.django_db
def test_signed_out_the_schema_is_a_json_401_and_the_docs_page_sends_to_login():
    schema = APIClient().get("/api/schema/")
    assert schema.status_code in (401, 403) and schema["Content-Type"] == "application/json"
    assert "error" in schema.json()
    docs = Client().get("/api/docs/")
    assert docs.status_code == 302 and docs["Location"].startswith("/login/?next=/api/docs/")


@pytest.mark.django_db
def test_an_unreadable_body_is_a_json_400(member_client):
    response = member_client.generic("POST", "/api/memories/", b"{not json", content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "ErrorDetail" not in response.json()["error"]
