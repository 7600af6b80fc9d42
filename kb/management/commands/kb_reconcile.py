"""manage.py kb_reconcile [--repair]: chunks without vectors, entries without chunks, failed documents' leftovers."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from docmind import backends
from kb.ingestion.reconcile import IndexReconciler
from kb.management.commands._kbcommand import open_index


class Command(BaseCommand):
    help = ("Report (and with --repair fix) chunks without vectors, vectors/BM25 entries without chunks, "
            "and chunks, vectors and BM25 entries of failed documents.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--repair", action="store_true")

    def handle(self, *args, repair: bool, **options) -> None:
        vectors, lexical = open_index()
        reconciler = IndexReconciler(vectors=vectors, lexical=lexical)
        report = reconciler.inspect()
        self.stdout.write(f"child chunks without vectors: {len(report.missing_vectors)}")
        self.stdout.write(f"vectors without chunks: {len(report.orphan_vectors)}")
        self.stdout.write(f"BM25 entries missing: {len(report.missing_lexical)}, "
                          f"without chunks: {len(report.orphan_lexical)}")
        self.stdout.write(f"chunks of failed documents: {len(report.failed_chunks)} "
                          f"(vectors: {len(report.failed_vectors)}, BM25 entries: {len(report.failed_lexical)})")
        self.stdout.write(f"entries in the wrong knowledge base: vectors {len(report.wrong_kb_vectors)}, "
                          f"BM25 {len(report.wrong_kb_lexical)}")
        if report.kb_field_missing:
            # A Milvus partition key cannot be added to an existing collection: the collections are rebuilt.
            self.stdout.write(f"collections without the kb_id field: {', '.join(report.kb_field_missing)}; "
                              "knowledge-base filters cannot run on them: run `python manage.py kb_reindex`")
        if not repair:
            if not report.clean:
                self.stdout.write("run with --repair to fix")
            return

        if report.kb_field_missing:
            self.stdout.write("--repair does not rebuild collections; run `python manage.py kb_reindex` first")
            return
        fixed = reconciler.repair(report, embedder=backends.get_ingest_embedder())
        self.stdout.write(f"repaired: {fixed}")
