"""KB test fixtures: a knowledge base of its own per test (the database is rolled back by pytest-django)."""
from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from docmind.backends import get_embedder
from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.search import get_searcher
from tests.isolation import fresh_default_kb


@pytest.fixture
def kb_index(settings, tmp_path, db):
    """Uploads stored under a temp dir, and a searcher scoped to a fresh default knowledge base (where documents
    go when none is named). Other tests' rows stay in the shared Milvus Lite file, but no search scoped to this
    base sees them; a test that reads whole collections (reconcile, re-index) asks for `empty_indexes` too."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return get_searcher().scoped([fresh_default_kb().pk])


@pytest.fixture
def empty_indexes(db):
    """Empty vector and BM25 collections, for a test about every row of them (dropping and recreating
    the collections costs seconds: scope by knowledge base where that is enough)."""
    embedder = get_embedder()
    get_vector_store().reset(embedder_name=embedder.name, dim=embedder.dim)
    get_lexical_index().reset()


def text_file(name: str, text: str, encoding: str = "utf-8") -> ContentFile:
    return ContentFile(text.encode(encoding), name=name)
