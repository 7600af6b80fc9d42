"""manage.py eval_retrieval FILE.json: recall@1/@5, MRR, answer-in-evidence@5, latency, vs a BM25 baseline."""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import jieba
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config_admin.conf import ai_config
from config_admin.registry import spec
from docmind import backends
from docmind.bilingual import get_lexicon
from docmind.database import unapplied_migrations
from docmind.rerank import IdentityReranker, LocalReranker
from kb.access import kb_default
from kb.ingestion.worker import process_pending_documents
from kb.retrieval.compose import query_translator, retrieval_params
from kb.retrieval.evaluation import Outcome, Paragraph, Question, load_squad, score
from kb.retrieval.pipeline import OneShotRetriever
from kb.search import get_searcher
from kb.services import document_ingest_text


class Command(BaseCommand):
    help = "Evaluate retrieval on a SQuAD-format file (one document per paragraph, every question asked)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--limit", type=int, default=None, help="ask only the first N questions")
        parser.add_argument("--top-k", type=int, default=None, help="evidence chunks per question")
        parser.add_argument("--domain", default="eval", help="knowledge domain of the evaluation documents")
        parser.add_argument("--reranker", choices=("configured", "local", "identity"), default="configured",
                            help="compare the default reranker with plain RRF order (identity)")
        parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                            help="override an AI config value for this run only (e.g. retrieval.bm25_weight=1.5)")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file")
        if options["limit"] is not None and options["limit"] <= 0:
            raise CommandError("--limit must be positive")
        if options["top_k"] is not None and not 1 <= options["top_k"] <= 50:
            raise CommandError("--top-k must be between 1 and 50")
        # Checked before anything is ingested: the baseline is an evaluation-only package.
        if importlib.util.find_spec("rank_bm25") is None:
            raise CommandError("the BM25 baseline needs the evaluation packages: pip install -r requirements-bench.txt")
        if unapplied_migrations():
            raise CommandError("the database is not migrated: run `manage.py migrate` with the same settings first")
        paragraphs, questions = load_squad(path)
        questions = questions[: options["limit"]] if options["limit"] else questions
        doc_ids = self._ingest(paragraphs, options["domain"])
        retriever = self._retriever(options)

        get_lexicon()  # loaded before the first question, as a server's start-up does, so no latency includes it
        self.stdout.write(f"asking {len(questions)} questions over {len(set(doc_ids))} documents "
                          f"(top_k {retriever.params.top_k}, reranker {options['reranker']})")
        outcomes = [self._ask(retriever, q.text, options["domain"]) for q in questions]
        pipeline = score("pipeline", questions, lambda q: doc_ids[q.paragraph], outcomes)
        baseline = score("bm25", questions, lambda q: q.paragraph, _bm25_baseline(paragraphs, questions))
        self.stdout.write(pipeline.row())
        self.stdout.write(baseline.row())

    def _ingest(self, paragraphs: list[Paragraph], domain: str) -> list[int]:
        """One document per paragraph; a paragraph already ingested (same checksum) is reused."""
        ids: list[int] = []
        created = 0
        for para in paragraphs:
            document, was_created = document_ingest_text(title=para.title, text=para.text, domain=domain)
            ids.append(document.id)
            created += was_created
        if created:
            self.stdout.write(f"ingesting {created} new documents…")
            start = time.perf_counter()
            process_pending_documents()
            self.stdout.write(f"ingested in {time.perf_counter() - start:.1f} s")
        return ids

    @staticmethod
    def _retriever(options: dict[str, Any]):
        values = dict(ai_config.snapshot())
        for item in options["set"]:
            key, _, raw = item.partition("=")
            try:
                values[key] = spec(key).parse(raw)
            except Exception as exc:
                raise CommandError(f"--set {item}: {exc}") from exc
        params = retrieval_params(values, top_k=options["top_k"])
        reranker = {"configured": backends.get_reranker, "local": LocalReranker, "identity": IdentityReranker}[
            options["reranker"]]()

        # The evaluation documents go to the default knowledge base: search exactly that one.
        return OneShotRetriever(searcher=get_searcher().scoped([kb_default().pk]), embedder=backends.get_embedder(),
                                reranker=reranker, params=params, translator=query_translator())

    @staticmethod
    def _ask(retriever: Any, question: str, domain: str) -> Outcome:
        start = time.perf_counter()
        evidence = retriever.run(query=question, domains=[domain])
        elapsed = (time.perf_counter() - start) * 1000
        return Outcome(ranked_docs=[c.document_id for c in evidence.chunks],
                       evidence=[c.content for c in evidence.chunks], latency_ms=elapsed)


def _bm25_baseline(paragraphs: list[Paragraph], questions: list[Question]) -> list[Outcome]:
    """Plain rank-bm25 over jieba tokens of whole paragraphs, ranking paragraphs (= documents)."""
    # optional: rank-bm25 is an evaluation-only pin (requirements-bench.txt); handle() checks for it first
    from rank_bm25 import BM25Okapi

    def tokens(text: str) -> list[str]:
        return [t for t in jieba.lcut(text.lower()) if t.strip()]

    bm25 = BM25Okapi([tokens(p.text) for p in paragraphs])
    outcomes = []
    for question in questions:
        start = time.perf_counter()
        scores = bm25.get_scores(tokens(question.text))
        ranked = sorted(range(len(paragraphs)), key=lambda i: -scores[i])[:5]
        elapsed = (time.perf_counter() - start) * 1000
        outcomes.append(Outcome(ranked_docs=ranked, evidence=[paragraphs[i].text for i in ranked], latency_ms=elapsed))
    return outcomes
