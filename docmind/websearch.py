"""Web search behind the `WebSearch` protocol; `SearxngWebSearch` calls a SearXNG JSON endpoint."""
from __future__ import annotations

import hashlib
from typing import Any, Protocol

import httpx2

from docmind.evidence import ScoredChunk, Source


class WebSearch(Protocol):
    """Searches the web; returns chunks with source WEB, best first. Raises `WebSearchError` on failure or timeout."""

    def search(self, query: str, *, k: int) -> list[ScoredChunk]: ...


class WebSearchError(Exception):
    """The provider failed, timed out or answered something that is not a result list."""


class SearxngWebSearch:
    """`GET {url}?q=…&format=json`; the key (if any) goes in a bearer header, never in the URL."""

    def __init__(self, *, url: str, api_key: str | None = None, timeout: float = 8.0,
                 transport: httpx2.BaseTransport | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError("url must be http(s)")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.url = url
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx2.Client(timeout=timeout, headers=headers, transport=transport)

    def __repr__(self) -> str:  # never show the key
        return f"SearxngWebSearch(url={self.url!r})"

    def search(self, query: str, *, k: int) -> list[ScoredChunk]:
        if k <= 0:
            raise ValueError("k must be positive")
        if not query.strip():
            return []
        try:
            response = self._client.get(self.url, params={"q": query, "format": "json"})
            response.raise_for_status()
            payload = response.json()
        except httpx2.TimeoutException as exc:
            raise WebSearchError(f"web search timed out: {exc}") from None
        except (httpx2.HTTPError, ValueError) as exc:
            raise WebSearchError(f"web search failed: {exc}") from None
        results = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(results, list):
            raise WebSearchError("web search answered without a result list")
        return _to_chunks(results, k)


def _to_chunks(results: list[Any], k: int) -> list[ScoredChunk]:
    chunks: list[ScoredChunk] = []
    for item in results:
        if not isinstance(item, dict):
            continue
        url = str(item.get("url") or "")
        snippet = str(item.get("content") or "").strip()
        title = str(item.get("title") or url)
        if not url or not (snippet or title):
            continue
        # SearXNG scores are engine-dependent; rank order is what we trust, so score by rank.
        rank = len(chunks)
        chunk = ScoredChunk(chunk_id="web-" + hashlib.sha1(url.encode()).hexdigest()[:16],
                            content=snippet or title, score=1.0 / (1 + rank), source=Source.WEB,
                            document_title=title, url=url)
        chunks.append(chunk.with_score("web", chunk.score))
        if len(chunks) >= k:
            break
    return chunks
