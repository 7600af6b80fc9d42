"""manage.py kb_reindex: every child chunk gets its vector back and search still finds it."""
import pytest
from django.core.management import call_command

from docmind.backends import get_embedder
from docmind.indexes.vectorstore import MilvusVectorStore
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel
from kb.services import document_ingest_text

pytestmark = pytest.mark.django_db

LEAVE = "员工每年享有十五天带薪年假，年假需提前一周申请。"
CODE = "部署服务前先运行数据库迁移，再重启应用进程。"


@pytest.fixture
def ingested(kb_index):
    leave, _ = document_ingest_text(title="年假制度", text=LEAVE, domain="general")
    code, _ = document_ingest_text(title="部署手册", text=CODE, domain="general")
    assert process_pending_documents() == 2
    return leave, code


def _children():
    return Chunk.objects.filter(level=ChunkLevel.CHILD)


def test_reindex_gives_every_child_chunk_a_vector_again(ingested, settings, capsys):
    call_command("kb_reindex")
    count = _children().count()
    assert count >= 2
    assert not _children().filter(vector_id__isnull=True).exists()
    assert f"reindexed {count} child chunks" in capsys.readouterr().out
    embedder = get_embedder()
    store = MilvusVectorStore(uri=settings.MILVUS_URI, dim=embedder.dim, embedder_name=embedder.name)
    ids = list(_children().values_list("pk", flat=True))
    assert set(store.fetch(ids)) == set(ids)


def test_vector_search_finds_the_right_chunk_after_reindex(ingested, settings):
    leave, _ = ingested
    call_command("kb_reindex")
    embedder = get_embedder()
    store = MilvusVectorStore(uri=settings.MILVUS_URI, dim=embedder.dim, embedder_name=embedder.name)
    hits = store.search(embedder.embed_query("年假有几天"), k=1)
    assert hits
    assert Chunk.objects.get(pk=hits[0][0]).document_id == leave.pk


def test_reconcile_reports_nothing_missing_after_reindex(ingested, capsys):
    call_command("kb_reindex")
    capsys.readouterr()
    call_command("kb_reconcile")
    out = capsys.readouterr().out
    assert "child chunks without vectors: 0" in out
    assert "vectors without chunks: 0" in out
    assert "BM25 entries missing: 0, without chunks: 0" in out
    assert "--repair" not in out


def test_rechunk_gives_old_chunks_their_context_and_drops_heading_only_ones(kb_index, capsys):
    from kb.models import Document, DocumentStatus

    manual, _ = document_ingest_text(title="支付手册", text="# 支付手册\n\n## 超时\n支付请求默认超时时间为 30 秒。")
    assert process_pending_documents() == 1
    # Data written by the chunker before this one: a heading-only child and no context.
    parent = Chunk.objects.filter(document=manual, level=ChunkLevel.PARENT).first()
    Chunk.objects.create(document=manual, parent=parent, level=ChunkLevel.CHILD, ordinal=99, content="# 支付手册",
                         char_start=0, char_end=7)
    Chunk.objects.filter(document=manual).update(context="")

    call_command("kb_reindex", "--rechunk")

    children = list(Chunk.objects.filter(document=manual, level=ChunkLevel.CHILD))
    assert [c.content for c in children] == ["支付请求默认超时时间为 30 秒。"]
    assert children[0].context == "支付手册 › 超时" and children[0].vector_id == children[0].pk
    assert Document.objects.get(pk=manual.pk).status == DocumentStatus.READY
    assert "re-chunked 1 of 1 documents" in capsys.readouterr().out
