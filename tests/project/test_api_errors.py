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


@pytest.mark.django_db
def test_a_missing_object_and_a_refused_change_answer_in_the_requests_language(member_client):
    missing = member_client.get("/api/kb/documents/987654/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert missing.status_code == 404 and missing.json()["error"] == "未找到。"
    assert "matches the given query" not in member_client.get("/api/conversations/987654/").json()["error"]
    refused = member_client.post("/api/kb/documents/", {}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert refused.status_code == 403
    assert refused.json()["error"] == "只有管理员和知识库编辑者可以修改文档。"
    english = member_client.post("/api/kb/documents/", {}, HTTP_ACCEPT_LANGUAGE="en")
    assert english.json()["error"] == "Only administrators and knowledge-base editors may change documents."


@pytest.mark.django_db
def test_a_missing_page_is_explained_in_the_readers_language_with_a_way_back(member):
    browser = Client()
    browser.force_login(member)
    response = browser.get("/documents/987654/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "该页面不存在，或你无权查看。" in html and 'href="/"' in html
    assert "The requested resource was not found" not in html
