"""The planner's knowledge map: YAML (domain → description, when to retrieve), from knowledge_domain and documents."""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import yaml

from docmind.tokens import estimate_tokens
from kb.domains.markup import clean_phrase, clean_tags
from kb.models import Document, DocumentStatus, KnowledgeDomain


@dataclass(frozen=True)
class MapDocument:
    title: str
    covers: tuple[str, ...]


@dataclass(frozen=True)
class MapDomain:
    domain_id: str
    description: str
    when_to_retrieve: str
    documents: tuple[MapDocument, ...]


def render_knowledge_map(domains: Sequence[MapDomain], *, max_tokens: int = 1500, max_docs_per_domain: int = 12
                         ) -> str:
    """YAML for the planner prompt; documents are dropped (never domains) until it fits the budget."""
    per_domain = max_docs_per_domain
    while True:
        body = {"available_knowledge_domains": [
            {"domain_id": d.domain_id, "description": d.description or d.domain_id,
             "when_to_retrieve": d.when_to_retrieve or "",
             "documents": [{"title": doc.title, "covers": list(doc.covers)} for doc in d.documents[:per_domain]]}
            for d in domains]}
        text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=1000)
        # A big knowledge base must not crowd the conversation out of the planner's context.
        if estimate_tokens(text) <= max_tokens or per_domain == 0:
            return text
        per_domain //= 2


def load_knowledge_map_domains(*, kb_ids: Collection[int]) -> list[MapDomain]:
    """Selector: the domain rows of the knowledge bases in `kb_ids` plus the titles and covers of their
    ready documents (two queries). Only those bases: the map must not name what the asker cannot read."""
    kb_ids = sorted(int(k) for k in kb_ids)
    docs: dict[tuple[int, str], list[MapDocument]] = {}
    rows = (Document.objects.filter(status=DocumentStatus.READY, kb_id__in=kb_ids)
            .order_by("domain", "kb_id", "title").values_list("kb_id", "domain", "title", "metadata"))
    for kb_id, domain, title, metadata in rows:
        covers = clean_tags((metadata or {}).get("covers") or [])
        docs.setdefault((kb_id, domain), []).append(MapDocument(title=title, covers=covers))
    # Rows written before markup was filtered stay as they are until regenerated; the planner sees them clean.
    out = [MapDomain(domain_id=row.domain_id, description=clean_phrase(row.description),
                     when_to_retrieve=clean_phrase(row.when_to_retrieve),
                     documents=tuple(docs.pop((row.kb_id, row.domain_id), ())))
           for row in KnowledgeDomain.objects.filter(kb_id__in=kb_ids).order_by("domain_id", "kb_id")]
    # Domains with documents but no row yet (start-up will generate them) are still shown.
    out += [MapDomain(domain_id=d, description="", when_to_retrieve="", documents=tuple(v))
            for (_, d), v in sorted(docs.items(), key=lambda item: (item[0][1], item[0][0]))]
    return [d for d in out if d.documents]


def current_knowledge_map(*, kb_ids: Collection[int], max_tokens: int = 1500) -> str:
    """The map of the knowledge bases in `kb_ids` as the planner should see it now (read per turn, so
    every worker process agrees)."""
    return render_knowledge_map(load_knowledge_map_domains(kb_ids=kb_ids), max_tokens=max_tokens)
