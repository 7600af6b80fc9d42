"""IngestionConveyor: DocumentIngester's stages across a stream of documents, so that the embedder never waits."""
from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from kb.ingestion.chunker import retrieval_text
from kb.ingestion.pipeline import DocumentIngester, PreparedDocument
from kb.models import Chunk, Document

log = logging.getLogger(__name__)


@dataclass
class _Job:
    prepared: PreparedDocument
    batches: deque[tuple[list[Chunk], Future]] = field(default_factory=deque)


class IngestionConveyor:
    """Embedding is the slow stage; everything else happens while it runs.

    One thread embeds batches in order (with the local model that thread only waits for the embedding
    process). This thread meanwhile stores the vectors of finished batches, completes finished
    documents, and prepares (parses, chunks, stores, BM25-indexes) the next document once the queued
    batches run low — `lookahead` batches before the current document ends, so that documents are
    taken from the queue only shortly before their turn (several workers share the queue) and a
    prepared document waits seconds, not minutes, with its heartbeat still.

    `documents` yields claimed documents (claiming lazily); `on_done(document, child_count)` and
    `on_failed(document, exc)` finish each one. Returns from `run` when `documents` is exhausted and
    every started document has finished.
    """

    def __init__(self, *, ingester: DocumentIngester, on_done: Callable[[Document, int], None],
                 on_failed: Callable[[Document, Exception], None], lookahead: int = 2) -> None:
        if lookahead <= 0:
            raise ValueError("lookahead must be positive")
        self.ingester, self.on_done, self.on_failed, self.lookahead = ingester, on_done, on_failed, lookahead

    def run(self, documents: Iterator[Document]) -> int:
        """Process documents until the iterator ends; returns how many were taken from it."""
        jobs: deque[_Job] = deque()
        taken = 0
        exhausted = False
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docmind-embed")
        try:
            while True:
                while not exhausted and sum(len(job.batches) for job in jobs) <= self.lookahead:
                    document = next(documents, None)
                    if document is None:
                        exhausted = True
                        break
                    taken += 1
                    job = self._start(document, pool)
                    if job is not None:
                        jobs.append(job)
                if not jobs:
                    return taken
                self._advance(jobs, pool)
        finally:
            for job in jobs:
                self._cancel(job)
            pool.shutdown(wait=True, cancel_futures=True)

    def _start(self, document: Document, pool: ThreadPoolExecutor) -> _Job | None:
        try:
            prepared = self.ingester.prepare(document=document)
        except Exception as exc:
            self.on_failed(document, exc)
            return None
        embed = self.ingester.embedder.embed_passages
        job = _Job(prepared=prepared)
        for batch in prepared.batches(self.ingester.batch_size):
            job.batches.append((batch, pool.submit(embed, [retrieval_text(c.context, c.content) for c in batch])))
        return job

    def _advance(self, jobs: deque[_Job], pool: ThreadPoolExecutor) -> None:
        """One step for the oldest document: store its next batch's vectors, or complete it."""
        job = jobs[0]
        document = job.prepared.document
        try:
            if job.batches:
                batch, future = job.batches.popleft()
                self.ingester.store_vectors(job.prepared, batch, future.result())
                return
            jobs.popleft()
            count = self.ingester.complete(job.prepared)
        except Exception as exc:
            if jobs and jobs[0] is job:
                jobs.popleft()
            self._cancel(job)
            self.on_failed(document, exc)
            return
        self.on_done(document, count)

    @staticmethod
    def _cancel(job: _Job) -> None:
        while job.batches:
            job.batches.popleft()[1].cancel()
