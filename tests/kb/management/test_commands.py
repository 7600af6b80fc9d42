"""ingest and kb_reconcile commands."""
import pytest
from django.core.management import CommandError, call_command

from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus

pytestmark = pytest.mark.django_db


def test_ingest_a_folder_recursively_and_wait_until_ready(kb_index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DOCMIND_INGEST_ROOTS", str(tmp_path))
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# 标题\n知识库支持 Markdown 文档。", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("子目录中的文本文件也会被导入。", encoding="utf-8")
    (tmp_path / "sub" / "skip.bin").write_bytes(b"\x00\x01")
    call_command("ingest", str(tmp_path), "--domain", "docs")
    out = capsys.readouterr().out
    assert "created 2, ready 2, duplicates 0, failed 0" in out
    assert set(Document.objects.values_list("status", flat=True)) == {DocumentStatus.READY}


def test_ingest_refuses_paths_outside_the_allowed_roots(kb_index, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCMIND_INGEST_ROOTS", str(tmp_path / "allowed"))
    with pytest.raises(CommandError, match="outside the allowed roots"):
        call_command("ingest", "/etc/hostname")
    assert not Document.objects.exists()


def test_reconcile_finds_and_repairs_a_missing_and_an_orphan_vector(
        kb_index, empty_indexes, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DOCMIND_INGEST_ROOTS", str(tmp_path))
    (tmp_path / "a.txt").write_text("对账命令会找出缺失的向量并重新生成。", encoding="utf-8")
    call_command("ingest", str(tmp_path))
    child = Chunk.objects.filter(level=ChunkLevel.CHILD).first()
    store = get_vector_store()
    vector = store.fetch([child.pk])[child.pk]
    store.delete_ids([child.pk])
    store.upsert(ids=[987654], vectors=vector.reshape(1, -1), document_ids=[42], domains=["general"], kb_ids=[1])
    store.flush()
    capsys.readouterr()
    call_command("kb_reconcile")
    report = capsys.readouterr().out
    assert "without vectors: 1" in report and "vectors without chunks: 1" in report
    call_command("kb_reconcile", "--repair")
    assert child.pk in store.fetch([child.pk]) and store.fetch([987654]) == {}
    call_command("kb_reconcile")
    assert "without vectors: 0" in capsys.readouterr().out


def test_reconcile_flags_and_repairs_chunks_and_vectors_of_failed_documents(
        kb_index, empty_indexes, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DOCMIND_INGEST_ROOTS", str(tmp_path))
    (tmp_path / "a.txt").write_text("失败文档的分块和向量不应留在索引里。对账命令会找出并清理它们。", encoding="utf-8")
    (tmp_path / "b.txt").write_text("正常文档的分块和向量保持不变。", encoding="utf-8")
    call_command("ingest", str(tmp_path))
    failed = Document.objects.get(title="a")
    kept = Document.objects.get(title="b")
    failed_children = list(Chunk.objects.filter(document=failed, level=ChunkLevel.CHILD).values_list("id", flat=True))
    kept_children = list(Chunk.objects.filter(document=kept, level=ChunkLevel.CHILD).values_list("id", flat=True))
    chunks = Chunk.objects.filter(document=failed).count()
    # A document failed without its leftovers removed (a crash between the two, or an older version).
    Document.objects.filter(pk=failed.pk).update(status=DocumentStatus.FAILED)
    capsys.readouterr()

    call_command("kb_reconcile")
    report = capsys.readouterr().out
    n = len(failed_children)
    assert f"chunks of failed documents: {chunks} (vectors: {n}, BM25 entries: {n})" in report
    assert "run with --repair" in report

    call_command("kb_reconcile", "--repair")
    store = get_vector_store()
    assert not Chunk.objects.filter(document=failed).exists()
    assert store.fetch(failed_children) == {}
    assert set(store.fetch(kept_children)) == set(kept_children)
    lexical_ids = get_lexical_index().all_ids()
    assert not set(failed_children) & lexical_ids
    assert set(kept_children) <= lexical_ids
    capsys.readouterr()
    call_command("kb_reconcile")
    assert "chunks of failed documents: 0 (vectors: 0, BM25 entries: 0)" in capsys.readouterr().out
