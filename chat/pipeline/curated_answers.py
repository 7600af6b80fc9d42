"""An editor's curated answer matching the turn: apart because it answers before any retrieval or model runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chat.pipeline.turn import ChatTurn
from chat.types import QueryClassification
from curation.matcher import CuratedMatcher
from curation.selectors import cited_documents, curated_candidates, qa_pair_served
from docmind import backends


@dataclass(frozen=True)
class CuratedAnswer:
    """A curated pair that answers the turn, with the documents it names that the asker may read."""

    pair_id: int
    question: str
    answer: str
    author: str
    updated_at: str
    similarity: float
    documents: tuple[tuple[int, str], ...] = field(default_factory=tuple)

    def label(self) -> dict[str, Any]:
        return {"id": self.pair_id, "author": self.author, "updated_at": self.updated_at,
                "question": self.question}

    @property
    def sources(self) -> list[dict[str, Any]]:
        return [{"index": i, "chunk_id": None, "document_id": doc_id, "document_title": title, "content": "",
                 "score": 1.0, "source": "KB", "domain": "", "location": None}
                for i, (doc_id, title) in enumerate(self.documents, start=1)]

    def citations(self) -> list[dict[str, Any]]:
        return [{"index": i, "chunk_id": None, "document_id": doc_id, "document_title": title, "source": "KB"}
                for i, (doc_id, title) in enumerate(self.documents, start=1)]

    def as_dict(self) -> dict[str, Any]:
        return {**self.label(), "similarity": round(self.similarity, 4)}


def curated_probe(turn: ChatTurn, classification: QueryClassification) -> CuratedAnswer | None:
    """The curated answer of one of the turn's bases whose question this one repeats or paraphrases.

    Not for a turn about a selected document (the user asked about that document) nor a regenerated one (the
    user asked for another answer than the one given)."""
    if turn.document_id is not None or turn.regenerate or not turn.kb_ids:
        return None
    question = classification.rewritten or turn.question
    embedder = backends.get_embedder()
    candidates = curated_candidates(kb_ids=turn.kb_ids, embedder_name=embedder.name, dim=embedder.dim)
    if not candidates.ids:
        return None
    match = CuratedMatcher().run(question=question, vector=embedder.embed_query(question), candidates=candidates)
    if match is None:
        return None
    pair = qa_pair_served(pair_id=match.pair_id, kb_ids=turn.kb_ids)
    if pair is None:  # deactivated or deleted since the matrix was loaded
        return None
    author = pair.author.get_username() if pair.author is not None else ""
    return CuratedAnswer(pair_id=pair.pk, question=pair.question, answer=pair.answer, author=author,
                         updated_at=pair.updated_at.isoformat(), similarity=match.similarity,
                         documents=tuple(cited_documents(pair=pair, kb_ids=turn.kb_ids)))
