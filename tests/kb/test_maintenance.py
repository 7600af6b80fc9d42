"""Retry, re-index and move: what the admin's document actions do, against the real stores."""
import pytest

from docmind.backends import get_embedder
from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.ingestion.worker import process_pending_documents
from kb.maintenance import document_move, document_move_to_kb, document_reindex, document_retry
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeDomain
from kb.services import IngestError, document_ingest_text, document_mark_failed, kb_create

pytestmark = pytest.mark.django_db

TEXT = "# 差旅制度\n员工出差乘坐高铁二等座，交通费凭票报销。出差前须在系统中提交审批。"


def _ready(title: str = "差旅", domain: str = "hr", text: str = TEXT) -> Document:
    document, _ = document_ingest_text(title=title, text=text, domain=domain)
    process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    return document


def _child_ids(document: Document) -> list[int]:
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).values_list("id", flat=True))


def test_retry_queues_a_failed_document_again_and_it_becomes_ready(kb_index, django_capture_on_commit_callbacks):
    document, _ = document_ingest_text(title="差旅", text=TEXT, domain="hr")
    document_mark_failed(document_id=document.pk, reason="embedding service down")
    assert KnowledgeDomain.objects.get(domain_id="hr").document_count == 0
    with django_capture_on_commit_callbacks(execute=True):
        assert document_retry(document=document)
    assert (document.status, document.error, document.attempts) == (DocumentStatus.PENDING, "", 0)
    assert KnowledgeDomain.objects.get(domain_id="hr").document_count == 1
    process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY


def test_retry_leaves_a_document_that_did_not_fail_alone(kb_index):
    document = _ready()
    assert not document_retry(document=document)
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY


def test_reindex_rebuilds_chunks_and_vectors(kb_index):
    document = _ready()
    old_ids = _child_ids(document)
    assert document_reindex(document=document)
    assert document.status == DocumentStatus.PENDING
    assert not document_reindex(document=document)  # already queued
    process_pending_documents()
    document.refresh_from_db()
    new_ids = _child_ids(document)
    assert document.status == DocumentStatus.READY and new_ids and not set(new_ids) & set(old_ids)
    assert get_vector_store().fetch(old_ids) == {}
    assert set(get_vector_store().fetch(new_ids)) == set(new_ids)


def test_move_rewrites_the_index_domain_and_both_domains_entries(kb_index, django_capture_on_commit_callbacks):
    document = _ready()
    _ready(title="熊", domain="science", text="# 棕熊\n棕熊冬眠前会大量进食，秋天体重明显增加。")
    ids = _child_ids(document)
    own = [document.kb_id]  # the shared Milvus file holds other tests' rows too, in other bases
    with django_capture_on_commit_callbacks(execute=True):
        assert document_move(document=document, domain="travel")
    assert document.domain == "travel"
    query = get_embedder().embed_query("出差交通费报销")
    assert not {pk for pk, _ in get_vector_store().search(query, k=5, domains=["hr"], kb_ids=own)} & set(ids)
    assert {pk for pk, _ in get_vector_store().search(query, k=5, domains=["travel"], kb_ids=own)} & set(ids)
    assert not get_lexical_index().search("报销", k=5, domains=["hr"], kb_ids=own)
    assert {pk for pk, _ in get_lexical_index().search("报销", k=5, domains=["travel"], kb_ids=own)} & set(ids)
    travel = KnowledgeDomain.objects.get(domain_id="travel")
    assert not KnowledgeDomain.objects.filter(domain_id="hr").exists()  # the domain its only document left
    assert travel.document_count == 1 and "差旅" in travel.when_to_retrieve


def test_moving_to_the_same_domain_changes_nothing(kb_index):
    document = _ready()
    assert not document_move(document=document, domain="hr")


def test_a_document_being_processed_or_a_bad_domain_cannot_be_moved(kb_index):
    document, _ = document_ingest_text(title="差旅", text=TEXT, domain="hr")
    with pytest.raises(IngestError, match="domain"):
        document_move(document=document, domain="bad domain!")
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PROCESSING)
    with pytest.raises(IngestError, match="being indexed"):
        document_move(document=document, domain="travel")
    assert Document.objects.get(pk=document.pk).domain == "hr"


def test_a_moved_document_stays_findable_by_its_section_heading(kb_index, django_capture_on_commit_callbacks):
    document = _ready(text="# 差旅制度\n## 交通\n员工出差乘坐高铁二等座，费用凭票报销。")
    ids = _child_ids(document)
    own = [document.kb_id]  # the shared Milvus file holds other tests' rows too, in other bases
    assert {pk for pk, _ in get_lexical_index().search("差旅制度", k=5, domains=["hr"], kb_ids=own)} & set(ids)
    with django_capture_on_commit_callbacks(execute=True):
        document_move(document=document, domain="travel")
    # The heading is in the chunk's context line, not its text: the move must index both, as ingestion did.
    assert {pk for pk, _ in get_lexical_index().search("差旅制度", k=5, domains=["travel"], kb_ids=own)} & set(ids)


def test_moving_to_another_knowledge_base_moves_its_search_and_its_map(kb_index, django_capture_on_commit_callbacks):
    from kb.search import get_searcher

    document = _ready()
    source, target = document.kb_id, kb_create(name="差旅知识库")
    with django_capture_on_commit_callbacks(execute=True):
        assert document_move_to_kb(document=document, kb=target)
    assert document.kb_id == target.pk
    found_in = {kb_id: {c.document_id for c in get_searcher().scoped({kb_id}).lexical_search("报销", k=5)}
                for kb_id in (source, target.pk)}
    assert found_in == {source: set(), target.pk: {document.pk}}
    query = get_embedder().embed_query("出差交通费报销")
    assert not {pk for pk, _ in get_vector_store().search(query, k=5, kb_ids=[source])} & set(_child_ids(document))
    counts = dict(KnowledgeDomain.objects.filter(domain_id="hr").values_list("kb_id", "document_count"))
    assert counts.get(source, 0) == 0 and counts[target.pk] == 1


def test_moving_to_the_same_base_changes_nothing_and_a_busy_document_cannot_move(kb_index):
    document = _ready()
    assert not document_move_to_kb(document=document, kb=document.kb)
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PROCESSING)
    with pytest.raises(IngestError, match="being indexed"):
        document_move_to_kb(document=document, kb=kb_create(name="别处"))
    assert Document.objects.get(pk=document.pk).kb_id == document.kb_id
