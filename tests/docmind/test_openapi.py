"""The published OpenAPI schema: complete, warning-free, behind sign-in, with a docs page that needs no CDN."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from chat.serializers import ChatRequestSerializer
from docmind.openapi import chat_request_schema


@pytest.mark.django_db
def test_the_schema_builds_without_warnings(tmp_path):
    out = tmp_path / "schema.yml"
    # --fail-on-warn turns any warning or error of the generator into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out), stderr=StringIO())
    text = out.read_text()
    for path in ("/api/auth/token/", "/api/kb/documents/", "/api/kb/retrieve/", "/api/chat/",
                 "/api/conversations/{id}/", "/api/memories/"):
        assert f"  {path}:" in text


def test_the_chat_request_schema_follows_the_serializer_the_view_validates_with():
    schema = chat_request_schema()
    assert set(schema["properties"]) == set(ChatRequestSerializer().fields)
    assert schema["required"] == ["message"]
    assert schema["properties"]["conversation_id"] == {"type": "integer", "nullable": True}


@pytest.mark.django_db
def test_anonymous_callers_get_no_schema():
    response = APIClient().get("/api/schema/")
    assert response.status_code in (401, 403)


@pytest.mark.django_db
def test_a_signed_in_member_reads_the_schema_and_the_docs_page(member_client):
    schema = member_client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    assert "/api/kb/retrieve/" in schema.json()["paths"]
    docs = member_client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    # The Swagger UI assets are served from the sidecar package's static files, never from a CDN.
    assert "drf_spectacular_sidecar/swagger-ui-dist" in html
    assert "cdn.jsdelivr.net" not in html
