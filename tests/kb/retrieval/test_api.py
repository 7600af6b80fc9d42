"""POST /api/kb/retrieve/: validation, authentication, and the evidence of a real tiny knowledge base."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

URL = "/api/kb/retrieve/"


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "message"), [
    ({"query": ""}, "empty"),
    ({"query": "   \n "}, "empty"),
    ({"query": "问" * 2001}, "limit"),
    ({"query": "q", "top_k": 0}, "between"),
    ({"query": "q", "top_k": -3}, "between"),
    ({"query": "q", "top_k": 51}, "between"),
    ({"query": "q", "top_k": 10**9}, "between"),
    ({"query": "q", "top_k": "five"}, "integer"),
    ({"query": "q", "top_k": 2.5}, "integer"),
    ({"query": "q", "top_k": True}, "integer"),
    ({}, "required"),
])
def test_bad_input_is_a_400_with_a_clear_message(member_client, body, message):
    response = member_client.post(URL, body, format="json")
    assert response.status_code == 400
    assert message in response.json()["error"]


@pytest.mark.django_db
def test_anonymous_callers_are_refused():
    response = APIClient().post(URL, {"query": "hello"}, format="json")
    assert response.status_code in (401, 403)


@pytest.fixture
def tiny_kb(transactional_db):
    # Transactional: the BM25 branch runs in a pool thread with its own connection, which cannot
    # see rows inside the test's open transaction.
    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text

    texts = {
        "珠峰": "珠穆朗玛峰是世界最高峰，海拔8848.86米，位于中国与尼泊尔边境的喜马拉雅山脉。",
        "长江": "长江是中国最长的河流，全长约6300公里，流经青海、西藏、四川、湖北、江苏、上海等地。",
        "咖啡": "咖啡豆经过烘焙后研磨成粉，再用热水萃取，就得到一杯咖啡。浅烘焙的咖啡酸味更明显。",
    }
    docs = {title: document_ingest_text(title=title, text=text, domain="geo")[0] for title, text in texts.items()}
    process_pending_documents()
    return docs


def test_it_returns_graded_evidence_from_the_knowledge_base(member_client, tiny_kb, monkeypatch):
    response = member_client.post(URL, {"query": "珠穆朗玛峰有多高？", "top_k": 2}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    top = body["chunks"][0]
    assert top["document_id"] == tiny_kb["珠峰"].id and "8848" in top["content"]
    assert set(top) >= {"chunk_id", "document_id", "document_title", "domain", "content", "score", "source"}
    assert top["source"] == "KB" and top["domain"] == "geo" and top["document_title"] == "珠峰"
    assert len(body["chunks"]) <= 2
    assert body["grade"]["grade"] in {"HIGH", "AMBIGUOUS", "LOW"}
    assert set(body["grade"]) == {"grade", "rerank_top1", "lex_coverage", "kb_entity_weak", "web_compensation_needed",
                                  "reason"}
    assert {"embed", "vector", "bm25", "rerank", "total"} <= set(body["timings_ms"])
    # One test for both questions: a transactional database is flushed (roles too) after each test.
    unrelated = member_client.post(URL, {"query": "量子纠缠的原理是什么"}, format="json").json()
    assert unrelated["grade"]["grade"] != "HIGH"
    # The API runs the chat turn's retriever: with a web search configured, weak KB evidence is compensated.
    from docmind import backends

    monkeypatch.setattr(backends, "get_web_search", lambda: _OneResultWeb())
    compensated = member_client.post(URL, {"query": "量子纠缠的原理是什么"}, format="json").json()
    web = [c for c in compensated["chunks"] if c["source"] == "WEB"]
    assert [c["url"] for c in web] == ["https://example.org/entanglement"]


class _OneResultWeb:
    def search(self, query, *, k):
        from docmind.evidence import ScoredChunk, Source

        return [ScoredChunk(chunk_id="w1", content="量子纠缠是两个粒子的量子态相互关联的现象。", score=1.0,
                            source=Source.WEB, url="https://example.org/entanglement", document_title="量子纠缠")]


@pytest.mark.django_db
@pytest.mark.parametrize(("kb", "where"), [([1, 0], "kb.1"), ([0], "kb.0"), ([1, "x"], "kb.1")])
def test_a_bad_item_of_the_kb_list_is_a_400_naming_it(member_client, kb, where):
    response = member_client.post(URL, {"query": "q", "kb": kb}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"].startswith(f"{where}: ") and "ErrorDetail" not in body["error"]
    assert "kb" in body["fields"]


def test_each_chunk_says_where_it_is_in_the_original(member_client, transactional_db):
    from django.core.files.base import ContentFile

    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_create, document_ingest_text
    from tests.kb.ingestion.files import two_column_pdf

    document_create(uploaded_file=ContentFile(two_column_pdf(), name="运维手册.pdf"), domain="ops")
    document_ingest_text(title="咖啡", text="咖啡豆经过烘焙后研磨成粉，再用热水萃取。", domain="food")
    process_pending_documents()
    response = member_client.post(URL, {"query": "生产账号的密码多久必须更换？", "top_k": 5}, format="json")
    assert response.status_code == 200, response.content
    chunks = response.json()["chunks"]
    pdf = next(c for c in chunks if "每90天" in c["content"])
    assert pdf["location"]["page"] == 1 and len(pdf["location"]["boxes"][0]) == 4
    assert all("location" in c for c in chunks)
    assert all(c["location"] is None for c in chunks if c["document_title"] == "咖啡")
