"""Where a cited knowledge-base passage may send its reader: `reader_url` on each source card and citation.

The reader shows a document's original (every section, the page image), so the link is given only for a
document whose base the asker may read. An asker who may only ask the base (a `view` grant, an ask-only API
key) gets the card as it is — the cited snippet and its place — with `reader_url` null, never a link that
answers 404 and never a page that shows more than the snippet. The link is worked out for the asker each time
a card is sent (a turn, a replayed cached answer, a conversation read back), never stored: cached answers and
saved conversations are shared by askers of different levels or outlive a grant change.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

READER_URL = "reader_url"


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
    """For one asker (one chat turn, one request): which cited documents it may open in the reader.

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

    def _look_up(self, document_ids: set[int]) -> None:
        from kb.access import readable_kb_ids
        from kb.selectors import documents_in

        unknown = document_ids - self._checked
        if not unknown:
            return
        if self._readable_kb_ids is None:
            self._readable_kb_ids = readable_kb_ids(self._user)
        if self._readable_kb_ids:
            self._openable |= documents_in(document_ids=unknown, kb_ids=self._readable_kb_ids)
        self._checked |= unknown
