"""Index test fixtures: these tests read and write whole collections, so they start from empty ones."""
from tests.kb.conftest import empty_indexes, kb_index  # noqa: F401 - fixtures, found by pytest under these names
