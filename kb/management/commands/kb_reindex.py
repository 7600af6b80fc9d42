"""manage.py kb_reindex: rebuild the vectors and BM25 entries, or (--rechunk) re-chunk every document."""
from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from docmind import backends
from docmind.indexes.lexical import MilvusLexicalIndex
from docmind.indexes.vectorstore import MilvusVectorStore, VectorStoreError
from kb.ingestion.reconcile import reindex_all
from kb.ingestion.worker import process_pending_documents
from kb.management.commands._kbcommand import open_index
from kb.models import Document, DocumentStatus
from kb.services import documents_requeue


class Command(BaseCommand):
    help = ("Rebuild all vectors (and the BM25 index) from the stored chunks with the configured embedder; "
            "with --rechunk, re-chunk and re-index every ready document from its stored file.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rechunk", action="store_true",
                            help="re-split every ready document with the current chunker (title and section "
                                 "context, no heading-only chunks), then index it again")

    def handle(self, *args, **options) -> None:
        if options["rechunk"]:
            self._rechunk()
            return

        embedder = backends.get_ingest_embedder()
        try:
            # Built directly, not via get_vector_store(): that one refuses a store made by another embedder.
            store = MilvusVectorStore.for_rebuild(uri=settings.MILVUS_URI, dim=embedder.dim,
                                                  embedder_name=embedder.name)
        except VectorStoreError as exc:
            raise CommandError(f"{exc}. Stop the server or run this where the store can be opened.") from None
        lexical = MilvusLexicalIndex(client=store.client, in_process=store.is_lite,
                                     lite_path=store.uri if store.is_lite else None)
        count = reindex_all(vectors=store, lexical=lexical, embedder=embedder,
                            progress=lambda done, total: self.stdout.write(f"  {done}/{total}"))
        self.stdout.write(f"reindexed {count} child chunks with {embedder.name}")

    def _rechunk(self) -> None:
        open_index()  # fails clearly while a server holds the Milvus Lite file
        queued = documents_requeue()
        processed = process_pending_documents()
        failed = Document.objects.filter(status=DocumentStatus.FAILED).count()
        self.stdout.write(f"re-chunked {processed} of {queued} documents ({failed} failed in total)")
