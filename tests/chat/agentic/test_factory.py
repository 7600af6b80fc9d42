"""build_orchestrator over the real KB (Milvus Lite, BM25, local reranker) with the offline planner."""
from __future__ import annotations

import pytest

from chat.agentic.factory import build_orchestrator
from chat.agentic.tools import offered_tools
from config_admin.conf import ai_config
from kb.ingestion.worker import process_pending_documents
from kb.services import document_ingest_text
from tests.isolation import fresh_default_kb

# Tool calls run on pool threads with their own connections: the data must be committed.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def kb(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    fresh_default_kb()  # no earlier test's rows in the shared Milvus file: they are in other bases
    with django_capture_on_commit_callbacks(execute=True):
        document_ingest_text(title="北京", text="北京是中华人民共和国的首都，常住人口约2189万人。", domain="city")
        document_ingest_text(title="上海", text="上海是中国的经济中心，常住人口约2487万人。", domain="city")
    process_pending_documents()


def test_the_offline_loop_answers_a_comparison_from_both_documents(kb):
    from kb.access import kb_default

    loop = build_orchestrator(snapshot=ai_config.snapshot(), chat_model=None, kb_ids=frozenset({kb_default().pk}))
    assert "available_knowledge_domains" in loop.system_prompt() and "city" in loop.system_prompt()
    assert loop.tools == offered_tools(web_enabled=False, sandbox_enabled=False)
    result = loop.run(question="北京和上海的常住人口分别是多少？")
    assert len(result.tool_calls) == 2 and result.planner == "offline"
    assert {"北京", "上海"} <= {c.document_title for c in result.evidence.chunks}


def test_the_loop_of_a_reader_of_no_knowledge_base_finds_nothing_and_shows_no_map(kb):
    loop = build_orchestrator(snapshot=ai_config.snapshot(), chat_model=None, kb_ids=frozenset())
    assert "北京" not in loop.system_prompt() and "city" not in loop.system_prompt()
    assert loop.docs.hybrid("北京 常住人口", k=5) == [] == loop.docs.lexical("北京 常住人口", k=5)
