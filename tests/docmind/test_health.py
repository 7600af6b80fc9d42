"""/healthz reports each backend and answers 503 when the database is down."""
from unittest import mock

import pytest

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_cache_vector_store_and_llm_mode(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["cache"]["ok"]
    assert body["vector_store"]["ok"] is True
    assert body["llm"] == {"mode": "offline", "answers": "extractive"}


def test_healthz_is_503_when_the_database_is_unreachable(client):
    from django.db import OperationalError

    with mock.patch("docmind.health.connection.cursor", side_effect=OperationalError("down")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"]["ok"] is False
