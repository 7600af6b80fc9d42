"""Resumed ingestion: stored chunks are not parsed or cut again, stored vectors are not embedded again."""
from datetime import timedelta

import pytest

from config_admin.conf import ai_config
from docmind.backends import get_embedder
from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.ingestion import worker
from kb.ingestion.chunker import TextChunker
from kb.ingestion.parsers import parse_document
from kb.ingestion.pipeline import DocumentIngester
from kb.models import Chunk, ChunkLevel, DocumentStatus
from kb.services import document_claim, document_ingest_text

pytestmark = pytest.mark.django_db

TEXT = "\n".join(f"第{i}节。向量检索把文本变成向量，BM25 按词频打分，两者融合效果更好。" * 3 for i in range(15))


BATCH = 2
LANDED = 2 * BATCH  # the run dies in its third embedding call


class ProcessKilled(BaseException):
    """Stands for the process dying: nothing after it runs, not even the failure handler."""


class CountingEmbedder:
    """The real embedder, counting passages; optionally the process dies at a given call."""

    def __init__(self, *, die_at_call: int | None = None) -> None:
        self.real = get_embedder()
        self.name, self.dim = self.real.name, self.real.dim
        self.die_at_call = die_at_call
        self.calls = 0
        self.passages = 0

    def embed_query(self, text):
        return self.real.embed_query(text)

    def embed_passages(self, texts):
        self.calls += 1
        if self.calls == self.die_at_call:
            raise ProcessKilled
        self.passages += len(texts)
        return self.real.embed_passages(texts)


class CountingParser:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, data: bytes, file_type: str) -> str:
        self.calls += 1
        return parse_document(data, file_type)


def _ingester(embedder, parser, *, child_chars: int | None = None) -> DocumentIngester:
    # The configured sizes, as the worker uses them.
    snap = ai_config.snapshot()
    chunker = TextChunker(parent_chars=snap["chunk.parent_chars"],
                          child_chars=child_chars or snap["chunk.child_chars"])
    return DocumentIngester(embedder=embedder, vectors=get_vector_store(), lexical=get_lexical_index(),
                            chunker=chunker, parse=parser, batch_size=BATCH)


def _children(document) -> list[int]:
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).order_by("ordinal")
                .values_list("id", flat=True))


def _interrupted_run(document) -> list[int]:
    with pytest.raises(ProcessKilled):
        _ingester(CountingEmbedder(die_at_call=3), CountingParser()).run(document=document)
    return _children(document)


def test_a_rerun_after_an_interruption_embeds_only_the_missing_children(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    children = _interrupted_run(document)
    assert len(children) > LANDED + BATCH
    store = get_vector_store()
    assert set(store.fetch(children)) == set(children[:LANDED])

    embedder, parser = CountingEmbedder(), CountingParser()
    count = _ingester(embedder, parser).run(document=document)

    assert count == len(children)
    assert parser.calls == 0
    assert _children(document) == children
    assert embedder.passages == len(children) - LANDED
    assert set(store.fetch(children)) == set(children)
    assert not Chunk.objects.filter(pk__in=children, vector_id__isnull=True).exists()
    assert set(children) <= get_lexical_index().all_ids()


def test_the_vector_store_not_the_mark_decides_what_is_embedded_again(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    children = _interrupted_run(document)
    store = get_vector_store()
    lost, unmarked = children[0], children[1]
    store.delete_ids([lost])  # marked in the database, but the store never persisted it
    Chunk.objects.filter(pk=unmarked).update(vector_id=None)  # stored, but the run died before marking it

    embedder = CountingEmbedder()
    _ingester(embedder, CountingParser()).run(document=document)

    assert embedder.passages == len(children) - LANDED + 1
    assert set(store.fetch(children)) == set(children)
    assert Chunk.objects.get(pk=unmarked).vector_id == unmarked


def test_changed_chunk_sizes_make_a_rerun_parse_and_chunk_again(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    old = _interrupted_run(document)
    parser = CountingParser()
    _ingester(CountingEmbedder(), parser, child_chars=120).run(document=document)
    assert parser.calls == 1
    assert not set(old) & set(_children(document))
    assert not set(old) & set(get_vector_store().fetch(old))


def test_the_worker_resumes_an_interrupted_job_without_its_file(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    assert document_claim(document_id=document.pk)
    children = _interrupted_run(document)
    # Re-parsing is impossible now, so only a resume from the stored chunks can finish the job.
    document.file.delete(save=False)
    assert worker.recover_interrupted(stale_after=timedelta(0)) == 1
    assert worker.process_pending_documents() == 1
    document.refresh_from_db()
    assert (document.status, document.progress) == (DocumentStatus.READY, 100)
    assert _children(document) == children
    assert set(get_vector_store().fetch(children)) == set(children)
