"""GET /metrics: Prometheus text for staff (token or session), 401 anonymous, 403 for members."""
from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from docmind.telemetry import metrics

pytestmark = pytest.mark.django_db


def test_anonymous_callers_are_refused_with_401(client):
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_a_bad_token_is_refused():
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api.get("/metrics").status_code == 401


def test_members_are_forbidden(member_client):
    assert member_client.get("/metrics").status_code == 403


def test_staff_read_prometheus_text_with_a_token(admin_user):
    from kb.models import Document

    Document.objects.create(title="queued", file_type="txt", checksum="x" * 64)
    metrics.observe_turn(path="RULE_PLANNER", outcome="complete", timings_ms={"total": 120.0, "retrieval": 30.0})
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user).key}")
    response = api.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert 'docmind_chat_turn_seconds_bucket{le="0.25",path="RULE_PLANNER"}' in body
    assert 'docmind_chat_stage_seconds_count{stage="retrieval"}' in body
    assert 'docmind_ingestion_queue_depth{status="pending"} 1.0' in body
    assert "docmind_http_requests_total" in body


def test_staff_read_metrics_with_a_session(client, kb_editor):
    client.force_login(kb_editor)
    assert client.get("/metrics").status_code == 200


# Not serialized_rollback: restoring content types after an earlier flush collides (fixtures seed what is needed).
@pytest.mark.django_db(transaction=True)
def test_ingestion_throughput_and_cache_lookups_are_counted(member):
    import threading

    from django.core.cache import cache
    from prometheus_client import REGISTRY

    from chat.pipeline import ChatPipeline
    from tests.chat.chat_helpers import QUESTION, ingest_tiny_kb

    def sample(name: str, labels: dict) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    ready, hits = sample("docmind_ingestion_documents_total", {"outcome": "ready"}), \
        sample("docmind_answer_cache_lookups_total", {"result": "hit"})
    ingest_tiny_kb()
    assert sample("docmind_ingestion_documents_total", {"outcome": "ready"}) - ready == 2
    cache.clear()
    for _ in range(2):
        list(ChatPipeline().run(user=member, message=QUESTION, cancel=threading.Event()))
    assert sample("docmind_answer_cache_lookups_total", {"result": "hit"}) - hits == 1
    assert sample("docmind_chat_turn_seconds_count", {"path": "CACHE"}) >= 1


def _staff_api(admin_user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user).key}")
    return api


@pytest.mark.parametrize("accept", ["application/openmetrics-text",
                                    "application/openmetrics-text; version=1.0.0; charset=utf-8"])
def test_a_scraper_asking_for_openmetrics_alone_gets_openmetrics(admin_user, accept):
    metrics.HTTP_REQUESTS.labels(method="GET", status="2xx").inc()
    response = _staff_api(admin_user).get("/metrics", HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert "Accept" in response["Vary"]
    body = response.content.decode()
    assert body.rstrip().endswith("# EOF")
    assert "docmind_http_requests_total" in body


def test_prometheus_text_is_still_served_to_a_text_scraper(admin_user):
    response = _staff_api(admin_user).get("/metrics", HTTP_ACCEPT="text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")


def test_no_created_series_double_the_scrape(admin_user):
    metrics.HTTP_REQUESTS.labels(method="GET", status="2xx").inc()
    api = _staff_api(admin_user)
    for accept in ("text/plain", "application/openmetrics-text"):
        body = api.get("/metrics", HTTP_ACCEPT=accept).content.decode()
        assert "docmind_http_requests_total" in body
        assert "_created" not in body, accept
