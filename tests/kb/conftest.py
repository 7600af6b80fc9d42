"""KB test fixtures: a clean Milvus Lite index per test (the database is rolled back by pytest-django)."""
from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from docmind.backends import get_embedder
from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.search import get_searcher


@pytest.fixture
def kb_index(settings, tmp_path, db):
    """Empty vector and BM25 collections, uploads stored under a temp dir, and a searcher scoped to the
    default knowledge base (where documents go when none is named)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    store = get_vector_store()
    embedder = get_embedder()
    store.reset(embedder_name=embedder.name, dim=embedder.dim)
    get_lexical_index().reset()
    from kb.access import kb_default

    return get_searcher().scoped([kb_default().pk])


def text_file(name: str, text: str, encoding: str = "utf-8") -> ContentFile:
    return ContentFile(text.encode(encoding), name=name)
