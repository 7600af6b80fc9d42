"""IngestionConveyor: documents flow through prepare → embed → vectors with the next one prepared early."""
import itertools
import threading

import pytest

from docmind.backends import get_embedder
from docmind.indexes.stores import get_vector_store
from kb.ingestion.conveyor import SEAL_SECONDS, IngestionConveyor
from kb.ingestion.parsers import ParseError
from kb.ingestion.pipeline import STORED, DocumentGone
from kb.ingestion.worker import build_ingester
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus
from kb.services import document_claim, document_ingest_text

pytestmark = pytest.mark.django_db

TEXT = "向量检索把文本变成向量。BM25 按词频打分。两者融合效果更好。"


def _claimed(count: int, repeat: int = 4) -> list[Document]:
    documents = []
    for i in range(count):
        document, _ = document_ingest_text(title=f"d{i}", text=f"第{i}篇。" + TEXT * repeat, domain="general")
        assert document_claim(document_id=document.pk)
        documents.append(document)
    return documents


def _conveyor(ingester, results):
    return IngestionConveyor(ingester=ingester,
                             on_done=lambda done: results.extend(("done", d.pk, n) for d, n in done),
                             on_failed=lambda d, exc: results.append(("failed", d.pk, exc)))


def test_every_document_gets_its_vectors_and_finishes_in_order(kb_index):
    documents = _claimed(3)
    results = []
    assert _conveyor(build_ingester(), results).run(iter(documents)) == 3
    assert [(kind, pk) for kind, pk, _ in results] == [("done", d.pk) for d in documents]
    for document in documents:
        children = Chunk.objects.filter(document=document, level=ChunkLevel.CHILD)
        assert children.count() == dict((pk, n) for _, pk, n in results)[document.pk] > 0
        assert not children.filter(vector_id__isnull=True).exists()
        assert get_vector_store().fetch(list(children.values_list("id", flat=True))).keys() == set(
            children.values_list("id", flat=True))


def test_the_next_document_is_prepared_while_the_current_one_embeds(kb_index):
    first, second = _claimed(2)
    ingester = build_ingester()
    second_prepared = threading.Event()
    overlapped = []
    prepare, embed = ingester.prepare, get_embedder().embed_passages

    def recording_prepare(*, document):
        prepared = prepare(document=document)
        if document.pk == second.pk:
            second_prepared.set()
        return prepared

    def waiting_embed(texts):
        if any("第0篇" in t for t in texts):  # the first document's (only) batch
            overlapped.append(second_prepared.wait(20))
        return embed(texts)

    ingester.prepare = recording_prepare
    ingester.embedder = type("E", (), {"embed_passages": staticmethod(waiting_embed)})()
    results = []
    _conveyor(ingester, results).run(iter([first, second]))
    assert overlapped == [True]
    assert [kind for kind, _, _ in results] == ["done", "done"]


def test_a_failing_document_does_not_stop_the_others(kb_index):
    documents = _claimed(3)
    ingester = build_ingester()
    prepare = ingester.prepare

    def failing_prepare(*, document):
        if document.pk == documents[1].pk:
            raise ParseError("broken file")
        return prepare(document=document)

    ingester.prepare = failing_prepare
    results = []
    _conveyor(ingester, results).run(iter(documents))
    # the failure is reported when it happens (while preparing ahead), the others finish in order
    assert sorted((pk, kind) for kind, pk, _ in results) == [(documents[0].pk, "done"), (documents[1].pk, "failed"),
                                                             (documents[2].pk, "done")]


def test_chunks_deleted_during_embedding_leave_no_vectors_behind(kb_index):
    (document,) = _claimed(1)
    ingester = build_ingester()

    def delete_after_chunking(pks, progress):
        if progress == STORED:  # as a delete (or a re-queue) landing while the vectors are computed
            Chunk.objects.filter(document_id__in=pks).delete()

    ingester.on_progress = delete_after_chunking
    results = []
    _conveyor(ingester, results).run(iter([document]))
    assert [(kind, type(exc)) for kind, _, exc in results] == [("failed", DocumentGone)]
    assert get_vector_store().search(get_embedder().embed_query("向量检索"), k=5, document_ids=[document.pk],
                                     kb_ids=[document.kb_id]) == []


def test_the_worker_finishes_documents_ready(kb_index):
    from kb.ingestion.worker import process_pending_documents

    for i in range(3):
        document_ingest_text(title=f"w{i}", text=f"第{i}篇。" + TEXT * 3, domain="general")
    assert process_pending_documents() == 3
    assert set(Document.objects.values_list("status", flat=True)) == {DocumentStatus.READY}


class _Embedder:
    """The real embedder, recording each batch; the first batch waits for `gate` (as a busy embedder would)."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.real, self.gate, self.batches = get_embedder(), gate, []

    def embed_passages(self, texts):
        if self.gate is not None and not self.batches:
            self.gate.wait(20)
        self.batches.append(list(texts))
        return self.real.embed_passages(texts)


def test_short_documents_share_embedding_batches_and_index_writes(kb_index):
    documents = _claimed(8, repeat=1)
    ingester = build_ingester()
    all_prepared = threading.Event()
    prepared, indexed = [], []
    prepare, index_lexical = ingester.prepare, ingester.index_lexical

    def recording_prepare(*, document):
        result = prepare(document=document)
        prepared.append(document.pk)
        if len(prepared) == len(documents):
            all_prepared.set()
        return result

    def recording_index(batch):
        indexed.append([p.document.pk for p in batch])
        return index_lexical(batch)

    ingester.prepare, ingester.index_lexical = recording_prepare, recording_index
    ingester.embedder = _Embedder(gate=all_prepared)
    results = []
    _conveyor(ingester, results).run(iter(documents))

    assert [(kind, pk) for kind, pk, _ in results] == [("done", d.pk) for d in documents]
    # The first document went alone (the embedder was idle); the other seven, prepared while it embedded,
    # went together: one BM25 write and one embedding batch for all of them.
    assert indexed == [[documents[0].pk], [d.pk for d in documents[1:]]]
    assert len(ingester.embedder.batches) == 2
    assert all(any(f"第{i}篇" in text for text in ingester.embedder.batches[1]) for i in range(1, 8))
    for document in documents:
        children = Chunk.objects.filter(document=document, level=ChunkLevel.CHILD)
        assert not children.filter(vector_id__isnull=True).exists()


def test_a_document_queued_while_the_run_is_busy_joins_the_run(kb_index):
    first, second = _claimed(2)

    def queue():
        yield first
        yield None  # the queue was empty when asked; the second upload arrives while the first embeds
        yield second

    results = []
    ingester = build_ingester()
    ingester.embedder = _Embedder()
    assert _conveyor(ingester, results).run(queue()) == 2
    assert [(kind, pk) for kind, pk, _ in results] == [("done", first.pk), ("done", second.pk)]


def test_a_failed_embedding_batch_fails_the_documents_in_it_and_only_those(kb_index):
    documents = _claimed(4)
    ingester = build_ingester()
    real = get_embedder()
    failed_texts: list[str] = []

    def embed(texts):
        if any("第1篇" in t for t in texts):
            failed_texts.extend(texts)
            raise RuntimeError("embedding service down")
        return real.embed_passages(texts)

    ingester.embedder = type("E", (), {"embed_passages": staticmethod(embed)})()
    results = []
    _conveyor(ingester, results).run(iter(documents))
    outcome = {pk: kind for kind, pk, _ in results}
    in_failed_batch = {d.pk for i, d in enumerate(documents) if any(f"第{i}篇" in t for t in failed_texts)}
    assert len(results) == len(documents) and documents[1].pk in in_failed_batch
    assert outcome == {d.pk: "failed" if d.pk in in_failed_batch else "done" for d in documents}
    assert "done" in outcome.values()


def _sealing_recorded(ingester, results, *, fail: bool = False):
    """Record each seal of the ingester's stores in `results`, after the documents finished before it."""
    def flush():
        results.append(("sealed", None, None))
        if fail:
            raise RuntimeError("milvus flush failed")

    ingester.flush = flush


def test_a_run_seals_its_index_writes_once_when_it_ends_not_once_per_batch(kb_index):
    documents = _claimed(4)
    ingester = build_ingester()
    ingester.batch_size = 2  # several embedding batches, each finishing documents
    ingester.embedder = _Embedder()
    results = []
    _sealing_recorded(ingester, results)
    _conveyor(ingester, results).run(iter(documents))

    assert len(ingester.embedder.batches) > 2
    assert [kind for kind, _, _ in results] == ["done"] * 4 + ["sealed"]


def test_a_long_run_seals_what_it_wrote_every_seal_seconds(kb_index):
    documents = _claimed(4)
    ingester = build_ingester()
    ingester.batch_size = 2
    now = [0.0]

    class SlowEmbedder(_Embedder):
        def embed_passages(self, texts):
            now[0] += SEAL_SECONDS  # each batch takes the whole interval
            return super().embed_passages(texts)

    ingester.embedder = SlowEmbedder()
    results = []
    _sealing_recorded(ingester, results)
    IngestionConveyor(ingester=ingester,
                      on_done=lambda done: results.extend(("done", d.pk, n) for d, n in done),
                      on_failed=lambda d, exc: results.append(("failed", d.pk, exc)), clock=lambda: now[0]
                      ).run(iter(documents))

    kinds = [kind for kind, _, _ in results]
    assert kinds.count("done") == 4
    # Sealed before finishing the documents of each batch after the first interval, never twice in a row.
    assert kinds.count("sealed") >= len(ingester.embedder.batches) - 1 > 1
    assert ("sealed", "sealed") not in itertools.pairwise(kinds)


def test_a_failed_seal_fails_no_document(kb_index):
    documents = _claimed(2)
    ingester = build_ingester()
    results = []
    _sealing_recorded(ingester, results, fail=True)
    _conveyor(ingester, results).run(iter(documents))

    assert [(kind, pk) for kind, pk, _ in results if kind != "sealed"] == [("done", d.pk) for d in documents]
    for document in documents:
        children = list(Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).values_list("id", flat=True))
        assert get_vector_store().fetch(children).keys() == set(children)


def test_the_conveyor_gives_way_between_its_steps(kb_index, monkeypatch):
    import kb.ingestion.conveyor as conveyor

    calls = []
    monkeypatch.setattr(conveyor, "give_way", lambda: calls.append(1) or 0.0)
    results = []
    _conveyor(build_ingester(), results).run(iter(_claimed(2)))
    assert [kind for kind, _, _ in results] == ["done", "done"]
    assert len(calls) >= 4  # two documents taken, their batch submitted and stored, at least


def test_bm25_writes_are_split_so_a_question_waits_for_one_small_write(kb_index, monkeypatch):
    import kb.ingestion.conveyor as conveyor

    monkeypatch.setattr(conveyor, "LEXICAL_STEP_CHILDREN", 1)  # a document with more children still goes alone
    ingester = build_ingester()
    writes = []
    index_lexical = ingester.index_lexical
    monkeypatch.setattr(ingester, "index_lexical",
                        lambda prepared: writes.append(len(prepared)) or index_lexical(prepared))
    results = []
    _conveyor(ingester, results).run(iter(_claimed(3)))
    assert [kind for kind, _, _ in results] == ["done"] * 3
    assert writes == [1, 1, 1]
