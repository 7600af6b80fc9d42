"""Shared set-up of the KB management commands: open the index or explain why it cannot be opened."""
from __future__ import annotations

from django.core.management.base import CommandError

from docmind.indexes.stores import get_lexical_index, get_vector_store
from docmind.indexes.vectorstore import VectorStoreError


def open_index():
    """(vector store, lexical index); a Milvus Lite file held by the running server gives a clear error."""
    try:
        return get_vector_store(), get_lexical_index()
    except VectorStoreError as exc:
        raise CommandError(f"{exc}. Stop the server or upload through the API.") from None
