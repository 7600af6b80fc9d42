"""Rerank providers behind one Reranker protocol: a local score by default, a cross-encoder API when set."""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import httpx2
import numpy as np

from docmind.bilingual import (
    MAX_TRANSLATED_TERMS,
    TRANSLATION_WEIGHT,
    TRANSLATIONS_PER_TERM,
    LazyLexicon,
    Lexicon,
    translate_terms,
    translated_coverage,
)
from docmind.crosslingual import CENTRED_VECTOR_STAGE
from docmind.evidence import ScoredChunk
from docmind.language import is_chinese
from docmind.text import coverage, salient_terms

if TYPE_CHECKING:
    from docmind.env import ServiceEndpoint

log = logging.getLogger(__name__)

# Added to a cross-language query–chunk cosine before it is stretched (see `LocalReranker`).
CROSS_LANGUAGE_SHIFT = 0.07


class RerankError(RuntimeError):
    """The reranker could not score the chunks (service down, malformed answer)."""


class _Refused(RerankError):
    """A 4xx answer: the request itself is wrong, so retrying cannot help."""


class Reranker(Protocol):
    """Scores how well each chunk answers `query`.

    Returns one score in [0, 1] per chunk, in input order (not sorted); an empty input gives [].
    `query_vector` and `chunk_vectors` (stored embeddings by chunk id) are hints a local
    reranker may use and a remote one ignores. Raises RerankError on any failure; never
    returns a partial list.
    """

    name: str

    def rerank(self, query: str, chunks: Sequence[ScoredChunk], *, query_vector: np.ndarray | None = None,
               chunk_vectors: Mapping[str, np.ndarray] | None = None) -> list[float]: ...


class LocalReranker:
    """No cross-encoder ships offline, so: calibrated query–chunk cosine of the stored e5 vectors
    blended with the length/rarity-weighted coverage of the query's salient terms.

    The two fail differently — cosine misses exact names and numbers, coverage misses
    paraphrases — which is why their blend beats either alone and plain RRF order (see
    bench/README.md). e5 cosines crowd into [0.7, 0.95], so cosine is stretched linearly
    from [cos_floor, cos_ceiling] onto [0, 1] to make the grader thresholds meaningful.

    `cross_language_shift` is a property of the embedding model, not of any document set: the median best
    chunk cosine of a question and its answer's document is 0.07 lower when they are in different languages
    (multilingual-e5-small, `bench/cross_language_gap.py`: 0.070 on the development corpus's tune half, the
    fitted value, 0.072 on its check half). Without it a translation reads as weak evidence and abstains.
    """

    name = "local"

    def __init__(self, *, cos_floor: float = 0.78, cos_ceiling: float = 0.92, cosine_weight: float = 0.5,
                 cross_language_shift: float = CROSS_LANGUAGE_SHIFT, lexicon: Lexicon | None = None) -> None:
        """`lexicon`: a chunk in the other language than the question is covered by the question's dictionary
        translation (docmind.bilingual) instead of its own words, which it cannot contain."""
        if not cos_floor < cos_ceiling:
            raise ValueError("cos_floor must be below cos_ceiling")
        if not 0 <= cosine_weight <= 1:
            raise ValueError("cosine_weight must be in [0, 1]")
        self._floor, self._ceiling, self._w = cos_floor, cos_ceiling, cosine_weight
        self._cross_shift = cross_language_shift
        self._lexicon = lexicon

    def rerank(self, query: str, chunks: Sequence[ScoredChunk], *, query_vector: np.ndarray | None = None,
               chunk_vectors: Mapping[str, np.ndarray] | None = None) -> list[float]:
        terms = salient_terms(query, names=[c.document_title for c in chunks])
        vectors = chunk_vectors or {}
        chinese = is_chinese(query)
        translated = None
        scores: list[float] = []
        for chunk in chunks:
            cov = coverage(terms, chunk.searchable_text) if terms else None
            cos = self._cosine(query_vector, vectors.get(chunk.chunk_id))
            if cos is None and cov is None:
                scores.append(0.0)
            elif cos is None:
                scores.append(float(cov))
            elif cov is None:
                scores.append(cos)
            elif is_chinese(chunk.searchable_text) != chinese:
                # Another language than the question's: its words cannot match the question's, so coverage
                # would veto what the multilingual embedding found; it counts only where it does match
                # (codes, numbers, names). The cosine of a translation pair sits below that of a same-language
                # pair saying the same, so it is read on a scale shifted by that gap (`cross_language_shift`).
                cos = self._cosine(query_vector, vectors.get(chunk.chunk_id), shift=self._cross_shift)
                if self._lexicon is not None:
                    if translated is None:  # once per call, and only when a chunk is in the other language
                        translated = translate_terms(query, self._lexicon, per_term=TRANSLATIONS_PER_TERM,
                                                     max_terms=MAX_TRANSLATED_TERMS)
                    # Below a match of the question's own words (TRANSLATION_WEIGHT): a translation matching a
                    # common word ("days") must not lift other-language text over same-language evidence.
                    cov = max(cov, TRANSLATION_WEIGHT * translated_coverage(translated, chunk.searchable_text))
                blended = self._w * cos + (1 - self._w) * cov
                # Found by the centred question vector alone, neither by its words nor by their translation: its
                # cosine says the topic is near, not that it answers, so it is blended like same-language text.
                stages = set(chunk.stage_scores)
                alone = CENTRED_VECTOR_STAGE in stages and stages <= {CENTRED_VECTOR_STAGE, "rrf"}
                scores.append(blended if alone else max(cos, blended))
            else:
                scores.append(self._w * cos + (1 - self._w) * cov)
        return [min(1.0, max(0.0, s)) for s in scores]

    def _cosine(self, query_vector: np.ndarray | None, vector: np.ndarray | None, shift: float = 0.0
                ) -> float | None:
        if query_vector is None or vector is None or np.shape(query_vector) != np.shape(vector):
            return None
        denom = float(np.linalg.norm(query_vector) * np.linalg.norm(vector))
        if not denom or not math.isfinite(denom):
            return None
        raw = float(np.dot(query_vector, vector)) / denom
        if not math.isfinite(raw):
            return None
        return min(1.0, max(0.0, (raw + shift - self._floor) / (self._ceiling - self._floor)))


class IdentityReranker:
    """Keeps the incoming order, scoring by rank (1, then decaying): for when no reranker helps."""

    name = "identity"

    def rerank(self, query: str, chunks: Sequence[ScoredChunk], *, query_vector: np.ndarray | None = None,
               chunk_vectors: Mapping[str, np.ndarray] | None = None) -> list[float]:
        return [1.0 / (1.0 + 0.25 * i) for i in range(len(chunks))]


class HttpReranker:
    """A cross-encoder rerank API: DashScope gte-rerank, or the `/v1/rerank` shape (TEI, Xinference, Jina)."""

    def __init__(self, *, url: str, api_key: str | None, model: str, timeout: float = 5.0, max_retries: int = 1,
                 client: httpx2.Client | None = None) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._url = url
        self._model = model
        self._retries = max(0, max_retries)
        # DashScope's native endpoint wants its own envelope; everything else speaks /v1/rerank.
        self._dashscope = "dashscope" in url and "/services/rerank" in url
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx2.Client(timeout=timeout, headers=headers)
        self.name = f"http/{model}"

    def _payload(self, query: str, documents: list[str]) -> dict[str, Any]:
        if self._dashscope:
            return {"model": self._model, "input": {"query": query, "documents": documents},
                    "parameters": {"top_n": len(documents), "return_documents": False}}
        return {"model": self._model, "query": query, "documents": documents, "return_documents": False}

    @staticmethod
    def _parse(body: Any, count: int) -> list[float]:
        results = body.get("output", {}).get("results") if isinstance(body, dict) and "output" in body else None
        if results is None:
            results = body.get("results") if isinstance(body, dict) else body  # TEI answers a bare list
        if not isinstance(results, list):
            raise RerankError("rerank answer has no results list")
        scores: list[float | None] = [None] * count
        for item in results:
            index = int(item["index"])
            raw = float(item.get("relevance_score", item.get("score")))
            if not 0 <= index < count or not math.isfinite(raw):
                raise RerankError(f"rerank answer has a bad result: {item}")
            # Some servers return logits; squash those into [0, 1] so thresholds keep their meaning.
            scores[index] = raw if 0 <= raw <= 1 else 1 / (1 + math.exp(-raw))
        if any(s is None for s in scores):
            raise RerankError("rerank answer is missing some documents")
        return [float(s) for s in scores if s is not None]

    def rerank(self, query: str, chunks: Sequence[ScoredChunk], *, query_vector: np.ndarray | None = None,
               chunk_vectors: Mapping[str, np.ndarray] | None = None) -> list[float]:
        if not chunks:
            return []
        payload = self._payload(query, [c.searchable_text for c in chunks])
        last: Exception | None = None
        for attempt in range(self._retries + 1):
            try:
                response = self._client.post(self._url, json=payload)
                if response.status_code >= 500 or response.status_code == 429:
                    raise RerankError(f"rerank service answered {response.status_code}")
                if response.status_code >= 400:  # a client error will not heal by retrying
                    raise _Refused(f"rerank service refused the request: {response.status_code} {response.text[:200]}")
                return self._parse(response.json(), len(chunks))
            except (httpx2.HTTPError, RerankError, ValueError, KeyError, TypeError) as exc:
                last = exc
                if isinstance(exc, _Refused):
                    break
                if attempt < self._retries:
                    time.sleep(min(1.0, 0.2 * 2**attempt))
        raise RerankError(f"rerank failed: {last}") from last


def build_reranker(endpoint: ServiceEndpoint) -> Reranker:
    """The configured reranker: the remote API only when its URL is set, else the local score."""
    if endpoint.enabled:
        log.info("rerank: HTTP endpoint, model %s", endpoint.model)
        return HttpReranker(url=endpoint.url or "", api_key=endpoint.api_key, model=endpoint.model)

    return LocalReranker(lexicon=LazyLexicon())
