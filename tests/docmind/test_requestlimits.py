"""Request bodies are bounded before anything parses them: 413 JSON when too large, 400 JSON when too deep."""
from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from docmind.requestlimits import MAX_JSON_DEPTH, json_depth, too_deep

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("raw", "depth"), [
    ("", 0), ("1", 0), ("[]", 1), ('{"a": [1, {"b": []}]}', 4),
    ('["[[[[[[", "\\"[[["]', 1),  # brackets inside strings (escaped quotes too) are text
    (DEEP, 100_000), ("[" * 50, 50),  # unbalanced text is measured, not parsed
])
def test_it_measures_the_nesting_without_parsing(raw, depth):
    assert json_depth(raw) == depth


def _token_client(user) -> Client:
    token = Token.objects.create(user=user)
    return Client(headers={"Authorization": f"Token {token.key}"}, raise_request_exception=False)


@pytest.mark.parametrize("path", ["/api/chat/", "/api/kb/retrieve/", "/api/memories/"])
def test_a_deeply_nested_body_is_a_json_400_on_authenticated_endpoints(db, member, path):
    response = _token_client(member).post(path, DEEP, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "body_too_deep"


def test_a_deeply_nested_body_is_a_json_400_on_the_token_endpoint(db):
    response = Client(raise_request_exception=False).post("/api/auth/token/", DEEP,
                                                          content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "body_too_deep"


def test_a_body_within_the_depth_limit_still_reaches_the_view(db, member):
    deep_enough = json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1))
    nested = {"query": "payments", "top_k": 3, "extra": deep_enough}
    response = _token_client(member).post("/api/kb/retrieve/", json.dumps(nested), content_type="application/json")
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/api/kb/retrieve/", "/api/chat/", "/api/memories/", "/api/auth/token/"])
def test_a_body_over_the_limit_is_a_json_413(db, member, path):
    body = json.dumps({"query": "x" * (6 * 1024 * 1024), "top_k": 3, "message": "m", "content": "c"})
    response = _token_client(member).post(path, body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "body_too_large"


def test_a_form_body_over_the_limit_is_a_json_413(db):
    response = Client(raise_request_exception=False).post(
        "/api/auth/token/", "username=" + "x" * (6 * 1024 * 1024), content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"


@pytest.mark.parametrize(("raw", "deep"), [
    ("[" * (MAX_JSON_DEPTH + 1), True), ("[" * MAX_JSON_DEPTH, False),
    ("[]" * 1000, False), ('"' + "[" * 1000 + '"', False),
])
def test_too_deep_counts_only_structure(raw, deep):
    assert too_deep(raw) is deep
