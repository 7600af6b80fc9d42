"""manage.py kb_reindex: drop every vector and BM25 entry and rebuild them with the current embedder."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Rebuild all vectors (and the BM25 index) from the stored chunks with the configured embedder."

    def handle(self, *args, **options) -> None:
        from django.conf import settings

        from docmind.backends import get_ingest_embedder
        from docmind.vectorstore import MilvusVectorStore, VectorStoreError
        from kb.ingestion.reconcile import reindex_all
        from kb.lexical import MilvusLexicalIndex

        embedder = get_ingest_embedder()
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
