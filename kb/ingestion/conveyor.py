"""IngestionConveyor: DocumentIngester's stages across a stream of documents, so that the embedder never waits."""
from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from docmind.foreground import give_way
from kb.ingestion.chunker import retrieval_text
from kb.ingestion.pipeline import DocumentGone, DocumentIngester, PreparedDocument
from kb.models import Chunk, Document

log = logging.getLogger(__name__)
# How many embedding batches may be submitted at once: one running, one queued behind it, so that the
# embedder starts on the next the moment it finishes one.
DEPTH = 2
# Longest time written index rows stay unsealed while a run goes on; a run seals once more when it ends. A seal
# (Milvus flush) is not what makes a document searchable: the in-process copies take every write at once, and
# Milvus searches unsealed rows too, only by scanning them. It bounds how many rows Milvus Lite scans in the
# seconds after a restart, before the copies are loaded, and replays from its log: 30 s of ingestion is a few
# hundred rows at the local embedder's speed. Sealing after every batch cost a write of both collections and a
# compaction with an index build in Milvus Lite, CPU taken from the embedder, per 32 children.
SEAL_SECONDS = 30.0
# Children per BM25 write: small enough that a question arriving meanwhile waits a few tens of ms for the write
# in progress (docmind.foreground), large enough that a write's fixed cost is shared.
LEXICAL_STEP_CHILDREN = 8


@dataclass(eq=False)
class _Job:
    prepared: PreparedDocument
    waiting: int  # children whose vectors are not stored yet
    failed: bool = False


@dataclass
class _Batch:
    items: list[tuple[_Job, Chunk]]
    future: Future


class IngestionConveyor:
    """Embedding is the slow stage; everything else happens while it runs, shared by many documents.

    One thread embeds batches in order (with the local model that thread only waits for the embedding
    process). This thread meanwhile prepares documents (parse, chunk, store), stores the vectors of
    finished batches and completes finished documents. Embedding batches are filled across documents
    — a short page has two or three children, far fewer than a batch — and so are the index writes
    around them: the documents whose children go into a batch are BM25-indexed in one write just
    before it is submitted, and a batch's vectors are written in one write, after which every document
    it finished is done. The written rows are sealed at most every `seal_seconds` and when the run
    ends. When the embedder would otherwise wait, whatever is queued goes at once, however few.

    Documents are taken from `documents` only while fewer than `lookahead` batches of children wait
    for the embedder, so that several workers share the queue and a prepared document waits seconds,
    not minutes, with its heartbeat still. `documents` yields claimed documents, or None for "none
    right now" (asked again after the next batch is stored; the run ends when nothing is left to do);
    `on_done([(document, child_count), …])` finishes the documents a step completed, together, and
    `on_failed(document, exc)` each one that failed. A failure fails the
    documents it concerns: a document's preparation only that document, an index write or an embedding
    batch the documents in it.
    """

    def __init__(self, *, ingester: DocumentIngester, on_done: Callable[[list[tuple[Document, int]]], None],
                 on_failed: Callable[[Document, Exception], None], lookahead: int = 2,
                 seal_seconds: float = SEAL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        if lookahead <= 0:
            raise ValueError("lookahead must be positive")
        self.ingester, self.on_done, self.on_failed, self.lookahead = ingester, on_done, on_failed, lookahead
        self.seal_seconds, self._clock = seal_seconds, clock

    def run(self, documents: Iterator[Document | None]) -> int:
        """Process documents until the iterator ends (or has none right now and all work is done); returns how
        many were taken from it."""
        self._taken, self._exhausted, self._dry = 0, False, False
        self._sealed_at, self._unsealed = self._clock(), False
        self._unindexed: list[_Job] = []  # prepared, not yet BM25-indexed
        self._queue: deque[tuple[_Job, Chunk]] = deque()  # children waiting for the embedder
        self._inflight: deque[_Batch] = deque()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docmind-embed")
        try:
            while True:
                give_way()
                if self._inflight and self._inflight[0].future.done():
                    self._store(self._inflight.popleft())
                elif self._can_submit():
                    self._submit(pool)
                elif self._can_take():
                    self._take(documents)
                elif self._inflight:
                    self._store(self._inflight.popleft())  # waits for the embedder
                elif self._unindexed:
                    self._index()  # documents whose children all have vectors already (resumed)
                else:
                    self._seal()
                    return self._taken
        finally:
            for batch in self._inflight:
                batch.future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    # -- the decisions ---------------------------------------------------------------------------------------
    def _can_take(self) -> bool:
        return not (self._exhausted or self._dry) and len(self._queue) < self.lookahead * self.ingester.batch_size

    def _can_submit(self) -> bool:
        if not self._queue or len(self._inflight) >= DEPTH:
            return False
        # A full batch goes; a partial one only when nothing better will come soon: the embedder is idle,
        # or no document is left to fill it.
        return (len(self._queue) >= self.ingester.batch_size or not self._inflight
                or self._exhausted or self._dry)

    # -- the stages -------------------------------------------------------------------------------------------
    def _take(self, documents: Iterator[Document | None]) -> None:
        try:
            document = next(documents)
        except StopIteration:
            self._exhausted = True
            return
        if document is None:
            self._dry = True
            return
        self._taken += 1
        try:
            prepared = self.ingester.prepare(document=document)
        except Exception as exc:
            self.on_failed(document, exc)
            return
        job = _Job(prepared=prepared, waiting=len(prepared.pending))
        self._unindexed.append(job)
        self._queue.extend((job, chunk) for chunk in prepared.pending)

    def _index(self) -> None:
        """BM25 for every document prepared since the last batch, in writes of about LEXICAL_STEP_CHILDREN
        children with a question being answered let through between them (a write tokenises its texts twice,
        here and in Milvus, holding the interpreter lock for a few ms a text); documents that need no vectors
        (an interrupted run stored them all) are done from here."""
        jobs, self._unindexed = self._unindexed, []
        group: list[_Job] = []
        size = 0
        for job, following in zip(jobs, [*jobs[1:], None], strict=True):
            group.append(job)
            size += len(job.prepared.children)
            if following is None or size + len(following.prepared.children) > LEXICAL_STEP_CHILDREN:
                self._index_group(group)
                group, size = [], 0
                if following is not None:
                    give_way()

    def _index_group(self, jobs: list[_Job]) -> None:
        try:
            self._unsealed = True
            self.ingester.index_lexical([job.prepared for job in jobs])
        except Exception as exc:
            for job in jobs:
                self._fail(job, exc)
            return
        finished = [job for job in jobs if job.waiting == 0]
        if finished:
            self._complete(finished)

    def _submit(self, pool: ThreadPoolExecutor) -> None:
        if self._unindexed:
            self._index()
        items: list[tuple[_Job, Chunk]] = []
        while self._queue and len(items) < self.ingester.batch_size:
            job, chunk = self._queue.popleft()
            if not job.failed:
                items.append((job, chunk))
        if items:
            texts = [retrieval_text(chunk.context, chunk.content) for _, chunk in items]
            self._inflight.append(_Batch(items=items, future=pool.submit(self.ingester.embedder.embed_passages, texts)))

    def _store(self, batch: _Batch) -> None:
        self._dry = False  # documents may have been queued meanwhile
        try:
            matrix = batch.future.result()
        except Exception as exc:
            for job in _jobs_of(batch.items):
                self._fail(job, exc)
            return
        keep = [i for i, (job, _) in enumerate(batch.items) if not job.failed]
        if not keep:
            return
        items = [batch.items[i] for i in keep]
        try:
            self._unsealed = True
            gone = self.ingester.store_vector_batch([(job.prepared, chunk) for job, chunk in items], matrix[keep])
        except Exception as exc:
            for job in _jobs_of(items):
                self._fail(job, exc)
            return
        gone_ids = {prepared.document.pk for prepared in gone}
        finished = []
        for job in _jobs_of(items):
            if job.prepared.document.pk in gone_ids:
                self._fail(job, DocumentGone(f"document {job.prepared.document.pk} was deleted during ingestion"))
                continue
            job.waiting -= sum(1 for j, _ in items if j is job)
            if job.waiting == 0:
                finished.append(job)
        if finished:
            self._complete(finished)

    def _complete(self, jobs: list[_Job]) -> None:
        if self._clock() - self._sealed_at >= self.seal_seconds:
            self._seal()
        self.on_done([(job.prepared.document, len(job.prepared.children)) for job in jobs])

    def _seal(self) -> None:
        """Seal what was written since the last seal. A failure fails no document: its rows are written and
        searchable, and stay in Milvus' log for the next seal (or Milvus' own, at its size limit)."""
        if not self._unsealed:
            return
        self._sealed_at, self._unsealed = self._clock(), False
        try:
            self.ingester.flush()
        except Exception:
            log.exception("sealing the written index rows failed; they stay searchable and are sealed later")
            self._unsealed = True

    def _fail(self, job: _Job, exc: Exception) -> None:
        if job.failed:
            return
        job.failed = True
        self.on_failed(job.prepared.document, exc)


def _jobs_of(items: list[tuple[_Job, Chunk]]) -> list[_Job]:
    """The distinct jobs of a batch, in order."""
    return list(dict.fromkeys(job for job, _ in items))
