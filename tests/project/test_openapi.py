"""The published OpenAPI schema: complete, warning-free, behind sign-in, with a docs page that needs no CDN."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from chat.event_schema import PAYLOADS
from chat.events import EVENT_TYPES
from chat.serializers import ChatRequestSerializer
from project.openapi import chat_request_schema


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


@pytest.fixture
def published(member_client) -> dict:
    return member_client.get("/api/schema/?format=json").json()


def _responses(schema: dict, path: str, method: str) -> dict:
    return schema["paths"][path][method]["responses"]


@pytest.mark.django_db
def test_every_error_answer_is_the_shared_error_shape(published):
    error = published["components"]["schemas"]["Error"]
    assert error["required"] == ["error"] and set(error["properties"]) == {"error", "code", "fields"}
    for path, operations in published["paths"].items():
        for method, operation in operations.items():
            for code, response in operation["responses"].items():
                if int(code) >= 400:
                    schema = response["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/Error"}, (method, path, code)


@pytest.mark.django_db
def test_the_errors_an_operation_can_answer_are_documented(published):
    for path, operations in published["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            if "{id}" in path:
                assert "404" in codes, (method, path)
            if path != "/api/auth/token/":
                assert "401" in codes, (method, path)
            if "requestBody" in operation:
                assert {"400", "413"} <= codes, (method, path)
    assert "409" in _responses(published, "/api/kbs/{id}/", "delete")
    assert "429" in _responses(published, "/api/auth/token/", "post")
    assert "503" in _responses(published, "/api/chat/", "post")


@pytest.mark.django_db
def test_the_schema_says_what_the_views_answer(published):
    schemas = published["components"]["schemas"]
    assert schemas["KnowledgeBase"]["properties"]["owner"]["nullable"] is True
    assert schemas["Grant"]["properties"]["user"]["nullable"] is True
    assert schemas["Grant"]["properties"]["group"]["nullable"] is True
    assert schemas["RetrievedChunk"]["properties"]["chunk_id"]["type"] == "string"
    forget_all = _responses(published, "/api/memories/forget-all/", "post")["200"]
    assert forget_all["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ForgetAllResult"}


def _component(schemas: dict, ref: str) -> dict:
    return schemas[ref.removeprefix("#/components/schemas/")]


@pytest.mark.django_db
def test_the_chat_stream_publishes_every_event_of_the_contract(published):
    schemas = published["components"]["schemas"]
    stream = _responses(published, "/api/chat/", "post")["200"]["content"]["text/event-stream"]
    assert stream["schema"] == {"$ref": "#/components/schemas/ChatServerSentEvent"}
    sse = {item["properties"]["event"]["enum"][0]: item["properties"]["data"]
           for item in schemas["ChatServerSentEvent"]["oneOf"]}
    mapping = schemas["ChatEvent"]["discriminator"]["mapping"]
    assert set(sse) == set(mapping) == set(EVENT_TYPES)
    for kind, ref in mapping.items():
        frame = _component(schemas, ref)
        assert frame["properties"]["type"]["enum"] == [kind]
        data_ref = frame["properties"]["data"]["$ref"]
        assert sse[kind]["x-contentSchema"] == {"$ref": data_ref}  # SSE's data line is the frame's data
        data = _component(schemas, data_ref)
        assert set(data["properties"]) == set(PAYLOADS[kind].model_fields), kind
        assert all(part.get("description") for part in data["properties"].values()), kind
    # Optional on the wire is left out of `required`; null where the wire sends null is `nullable` (OpenAPI 3.0).
    assert schemas["ErrorData"]["required"] == ["code", "message"]
    assert schemas["DoneData"]["properties"]["usage"]["nullable"] is True
    assert "curated" not in schemas["StartData"]["required"]
