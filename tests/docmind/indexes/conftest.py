"""Index test fixtures: the KB's clean Milvus Lite collections, shared with the KB tests."""
from tests.kb.conftest import kb_index  # noqa: F401 - a fixture, found by pytest under this name
