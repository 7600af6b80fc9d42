"""`DocSearch` port of the search tools and `KbDocSearch`, its implementation over the KB retrievers."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from chat.other_language import own_language_gap
from docmind.language import is_chinese
from kb.retrieval.hybrid import HybridSearch
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.types import ScoredChunk


class DocSearch(Protocol):
    """Knowledge-base search for the loop's tools.

    `hybrid` fuses vector search and BM25 (searchDocs); `lexical` is BM25 only (keywordSearch).
    Both return at most `k` chunks, best first, and raise on a backend failure (the loop then
    falls back to one-shot retrieval).
    """

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]: ...

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]: ...


# At most this many chunks of the other language join a search's results when they state what its own language's
# results leave unsaid: a few passages the model reads beside the ones found, not a replacement for them.
OTHER_LANGUAGE_CHUNKS = 2


class KbDocSearch:
    """searchDocs runs the retrieval path's HybridSearch; keywordSearch runs BM25 alone."""

    def __init__(self, *, hybrid: HybridSearch, searcher: ChunkSearcher) -> None:
        self._hybrid = hybrid
        self._searcher = searcher

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        """The best `k` chunks for `query`. As in the one-shot search (`chat.pipeline.gathering`), results in the
        query's own language that name its topic without what it asks (`chat.other_language`) make it search the
        other language too; up to OTHER_LANGUAGE_CHUNKS of that language's best chunks then take the last places,
        when they state it all."""
        found = list(self._hybrid.run(query=query, domains=domains or None).chunks[:k])
        gap = own_language_gap(query, found)
        if gap is None or k <= OTHER_LANGUAGE_CHUNKS:
            return found
        seen = {c.chunk_id for c in found}
        zh = is_chinese(query)
        other = [c for c in self._hybrid.run(query=query, domains=domains or None, across=True).chunks
                 if c.chunk_id not in seen and is_chinese(c.searchable_text) != zh]
        if not other or not gap.closed_by(query, other):
            return found
        extra = other[:OTHER_LANGUAGE_CHUNKS]
        return [*found[:k - len(extra)], *extra]

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        hits = self._searcher.lexical_search(query, k=k, domains=domains or None)
        return [c.with_score("bm25", c.score) for c in hits]
