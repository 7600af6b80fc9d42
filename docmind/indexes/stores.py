"""The process's stores, built once from settings: the chunk vectors and the BM25 index share one MilvusClient."""
from __future__ import annotations

from django.conf import settings

from docmind.backends import built_once, get_embedder
from docmind.indexes.lexical import MilvusLexicalIndex
from docmind.indexes.vectorstore import MilvusVectorStore, VectorStore


@built_once
def get_vector_store() -> VectorStore:
    embedder = get_embedder()
    return MilvusVectorStore(uri=settings.MILVUS_URI, dim=embedder.dim, embedder_name=embedder.name,
                             in_process=settings.INDEX_IN_PROCESS)


@built_once
def get_lexical_index() -> MilvusLexicalIndex:
    store = get_vector_store()
    # Same MilvusClient as the vectors: a Milvus Lite file is opened once per process.
    return MilvusLexicalIndex(client=store.client, in_process=store.is_lite and settings.INDEX_IN_PROCESS,
                              lite_path=store.uri if store.is_lite else None)


def reset_indexes() -> None:
    """Forget the built stores; the next use opens them again from the current settings.

    The old stores' in-process copies are retired first: a snapshot one of them saved later would
    describe its stale state under a token the new store's Milvus collection accepts."""
    for built in (get_lexical_index, get_vector_store):
        if built.is_built:
            built().retire()
    get_lexical_index.cache_clear()
    get_vector_store.cache_clear()
