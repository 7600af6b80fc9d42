"""Where a cited knowledge-base passage may send its reader: `reader_url` on each source card and citation.

The reader shows a document's original (every section, the page image), so the link is given only for a
document whose base the asker may read. An asker who may only ask the base (a `view` grant, an ask-only API
key) gets the card as it is — the cited snippet and its place — with `reader_url` null, never a link that
answers 404 and never a page that shows more than the snippet. The link is worked out for the asker each time
a card is sent (a turn, a replayed cached answer, a conversation read back), never stored: cached answers and
saved conversations are shared by askers of different levels or outlive a grant change.

The same answer decides how much evidence text the asker receives wherever evidence leaves the server (the
chat's `retrieval` event and its saved trace, `POST /api/kb/retrieve/`, the MCP searches): the text as it is
where the asker may read the original, else only the snippet a source card shows (`ScoredChunk.snippet`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from docmind.evidence import SNIPPET_CHARS, ScoredChunk, Source
from kb.access import readable_kb_ids
from kb.selectors import documents_in

READER_URL = "reader_url"
# A saved evidence card's snippet, kept beside its longer text for an asker who may later hold only a view grant.
SNIPPET = "snippet"


def reader_url(*, document_id: int, chunk_id: Any = None, location: Mapping[str, Any] | None = None,
               revision: Any = None) -> str:
    """The reader at the cited passage: its page (a PDF's), its chunk highlighted, the revision it quoted."""
    params: list[tuple[str, str]] = []
    if isinstance(location, Mapping) and isinstance(location.get("page"), int):
        params.append(("page", str(location["page"])))
    if _digits(chunk_id):
        params.append(("chunk", str(chunk_id)))
        if _digits(revision):
            params.append(("rev", str(revision)))
    query = f"?{urlencode(params)}" if params else ""
    return f"{reverse('kb-document-reader', args=[int(document_id)])}{query}#cited"


def _digits(value: Any) -> bool:
    return not isinstance(value, bool) and str(value if value is not None else "").isdigit()


def _kb_document_id(card: Mapping[str, Any]) -> int | None:
    if card.get("source", "KB") != "KB" or not _digits(card.get("document_id")):
        return None
    return int(card["document_id"])


class CitationLinks:
    """For one asker (one chat turn, one request): which cited documents it may open in the reader, and so how
    much of their evidence text it receives.

    The readable bases are read once; each document is looked up once, however many cards name it.
    """

    def __init__(self, user: Any) -> None:
        self._user = user
        self._readable_kb_ids: frozenset[int] | None = None
        self._checked: set[int] = set()
        self._openable: set[int] = set()

    def prefetch(self, cards: Iterable[Mapping[str, Any]]) -> None:
        """Look up every document `cards` name in one query (a conversation's messages read back together)."""
        ids = (_kb_document_id(card) for card in cards if isinstance(card, Mapping))
        self._look_up({d for d in ids if d is not None})

    def apply(self, cards: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        """Copies of `cards` (source cards or citations), each with its `reader_url` for this asker: the reader
        at the passage for a readable KB document, else None (web evidence keeps its own `url`)."""
        cards = [card for card in cards or () if isinstance(card, Mapping)]
        self.prefetch(cards)
        linked = []
        for card in cards:
            document_id = _kb_document_id(card)
            url = None
            if document_id is not None and document_id in self._openable:
                url = reader_url(document_id=document_id, chunk_id=card.get("chunk_id"),
                                 location=card.get("location"), revision=card.get("revision"))
            linked.append({**card, READER_URL: url})
        return linked

    def opens(self, document_id: Any) -> bool:
        """Whether this asker may read the original of KB document `document_id` (its base at `read` or more)."""
        if not _digits(document_id):
            return False
        self._look_up({int(document_id)})
        return int(document_id) in self._openable

    def prefetch_evidence(self, chunks: Iterable[ScoredChunk]) -> None:
        """Look up the documents of every KB chunk in `chunks` in one query."""
        self._look_up({int(c.document_id) for c in chunks if c.source == Source.KB and _digits(c.document_id)})

    def quote(self, chunk: ScoredChunk, *, chars: int | None = None) -> str:
        """The text of `chunk` this asker receives: its content (cut to `chars` when given) for web evidence and
        for a document the asker may read, else only its snippet."""
        if chunk.source == Source.KB and not self.opens(chunk.document_id):
            return chunk.snippet()
        return chunk.content if chars is None else chunk.content[:chars]

    def quote_saved(self, cards: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        """Copies of saved evidence cards with the text this asker receives now: as saved where it may read the
        original, else the snippet saved with the card (a card saved without one: its text cut to a snippet's
        length). The saved snippet is dropped either way: it is the shorter copy of text the card already holds."""
        cards = [card for card in cards or () if isinstance(card, Mapping)]
        self.prefetch(cards)
        quoted = []
        for card in cards:
            document_id = _kb_document_id(card)
            out = {k: v for k, v in card.items() if k != SNIPPET}
            if card.get("source", "KB") == "KB" and (document_id is None or document_id not in self._openable):
                snippet = card.get(SNIPPET)
                out["content"] = (snippet if isinstance(snippet, str) else str(card.get("content") or ""))[
                    :SNIPPET_CHARS]
            quoted.append(out)
        return quoted

    def _look_up(self, document_ids: set[int]) -> None:
        unknown = document_ids - self._checked
        if not unknown:
            return
        if self._readable_kb_ids is None:
            self._readable_kb_ids = readable_kb_ids(self._user)
        if self._readable_kb_ids:
            self._openable |= documents_in(document_ids=unknown, kb_ids=self._readable_kb_ids)
        self._checked |= unknown
