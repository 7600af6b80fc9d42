"""`KnowledgeDomainService`: writes document profiles and re-aggregates one domain's knowledge_domain row."""
from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence

from config_admin.conf import ai_config
from docmind import backends
from docmind.foreground import give_way
from kb.domains.aggregator import DocSummary, DomainAggregator
from kb.domains.markup import clean_phrase
from kb.domains.profiler import DocumentProfiler
from kb.domains.records import document_profiles_save, knowledge_domain_refresh, knowledge_domain_texts_save
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeDomain

log = logging.getLogger(__name__)
# Documents profiled together at most (their texts read in one query, their profiles written in one transaction).
PROFILE_BATCH = 32

# Enough of a document for the profiler to see its headings and main topics.
PROFILE_INPUT_CHARS = 6000


class KnowledgeDomainService:
    """Profile at upload, aggregate on change, generate missing rows at start-up (so the planner's map is complete)."""

    def __init__(self, *, profiler: DocumentProfiler, aggregator: DomainAggregator) -> None:
        self.profiler = profiler
        self.aggregator = aggregator

    def profile_document(self, document: Document) -> None:
        """Write `covers` and `when_to_retrieve` into the document's metadata (other keys kept)."""
        self.profile_documents([document])

    def profile_documents(self, documents: Sequence[Document]) -> list[Document]:
        """Profile each document, reading their texts in one query and writing their profiles in one transaction
        (a folder's short pages finish many at a time); returns those whose profile failed, logged, the others
        written. A question being answered goes first between two documents: a batch is tens of documents, each
        milliseconds of tokenising (or a model call)."""
        texts = document_texts([document.pk for document in documents])
        profiles: dict[int, dict[str, object]] = {}
        failed = []
        for number, document in enumerate(documents):
            if number:
                give_way()
            try:
                profile = self.profiler.run(title=document.title, text=texts.get(document.pk, ""))
            except Exception:
                log.exception("knowledge map: profiling document %s failed", document.pk)
                failed.append(document)
                continue
            profiles[document.pk] = {**profile.as_metadata(), "profile_source": profile.source}
        stored = document_profiles_save(profiles)
        for document in documents:
            if document.pk in stored:
                document.metadata = stored[document.pk]
        return failed

    def _profile_in_batches(self, documents: Iterable[Document]) -> None:
        """profile_documents over many documents, PROFILE_BATCH at a time (a read and a write each)."""
        for batch in itertools.batched(documents, PROFILE_BATCH):
            self.profile_documents(batch)

    def on_document_ingested(self, document: Document) -> None:
        # Profiling is an enhancement: a failure here must never fail the document's ingestion.
        try:
            self.profile_document(document)
            self.on_document_change(document.domain, kb_id=document.kb_id)
        except Exception:
            log.exception("knowledge map update failed for document %s", document.pk)

    def on_document_change(self, domain_id: str, *, kb_id: int) -> KnowledgeDomain | None:
        """Re-aggregate this domain of one knowledge base only; an admin-written description is never
        overwritten. Only that base's documents feed it, so its text never describes another base.
        None when the domain is gone with its last document."""
        docs = list(Document.objects.filter(kb_id=kb_id, domain=domain_id, status=DocumentStatus.READY)
                    .order_by("title").values_list("title", "metadata"))
        summaries = [DocSummary(title=title, covers=tuple(str(c) for c in (meta or {}).get("covers") or ()),
                                when_to_retrieve=str((meta or {}).get("when_to_retrieve") or ""))
                     for title, meta in docs]
        summary = self.aggregator.run(domain_id=domain_id, docs=summaries)
        # The recount owns the row's document_count (and creates missing rows); this owns the texts.
        row = knowledge_domain_refresh(kb_id=kb_id, domain_id=domain_id)
        if row is None:
            return None
        # Blank, or in the offline template's "<domain>：tags" shape, means "not written by an admin": only
        # then is a generated description filled in. An admin's text is kept, only stripped of markup.
        description = (row.description or "").strip()
        if not description or description.startswith(f"{domain_id}："):
            description = summary.description or None
        else:
            description = clean_phrase(description)[:256] or None
        knowledge_domain_texts_save(domain=row, when_to_retrieve=summary.when_to_retrieve, description=description)
        return row

    def regenerate(self, domain_id: str, *, kb_id: int) -> KnowledgeDomain | None:
        """Admin action: re-profile the domain's documents, then re-aggregate it."""
        self._profile_in_batches(Document.objects.filter(kb_id=kb_id, domain=domain_id, status=DocumentStatus.READY))
        return self.on_document_change(domain_id, kb_id=kb_id)

    def load_index(self) -> list[str]:
        """Start-up: domains with documents but no row (or an empty one) are generated; returns them."""
        have = set(KnowledgeDomain.objects.exclude(when_to_retrieve__isnull=True).exclude(when_to_retrieve="")
                   .values_list("kb_id", "domain_id"))
        wanted = set(Document.objects.filter(status=DocumentStatus.READY).values_list("kb_id", "domain"))
        missing = sorted(wanted - have)
        for kb_id, domain_id in missing:
            unprofiled = Document.objects.filter(kb_id=kb_id, domain=domain_id, status=DocumentStatus.READY,
                                                 metadata__covers__isnull=True)
            self._profile_in_batches(unprofiled)
            self.on_document_change(domain_id, kb_id=kb_id)
        return [domain_id for _, domain_id in missing]


def document_texts(document_ids: Sequence[int], limit: int = PROFILE_INPUT_CHARS) -> dict[int, str]:
    """The head of each document: its parent chunks in order (children overlap them), up to `limit` characters."""
    parts: dict[int, list[str]] = {pk: [] for pk in document_ids}
    sizes = dict.fromkeys(document_ids, 0)
    rows = (Chunk.objects.filter(document_id__in=list(document_ids), level=ChunkLevel.PARENT)
            .order_by("document_id", "ordinal").values_list("document_id", "content"))
    for document_id, content in rows.iterator(chunk_size=200):
        if sizes[document_id] < limit:
            parts[document_id].append(content)
            sizes[document_id] += len(content)
    return {pk: "\n".join(texts)[:limit] for pk, texts in parts.items()}


def build_domain_service() -> KnowledgeDomainService:
    """The service with the small model (or offline stages when there is no model)."""
    model, structured = ai_config.get("llm.small_model"), ai_config.get("llm.structured_outputs")
    chat_model = backends.get_chat_model()
    return KnowledgeDomainService(
        profiler=DocumentProfiler(chat_model=chat_model, model=model, structured_outputs=structured),
        aggregator=DomainAggregator(chat_model=chat_model, model=model, structured_outputs=structured))
