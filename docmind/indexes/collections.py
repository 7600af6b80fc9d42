"""Creating a Milvus collection with its indexes, without pymilvus' polling."""
from __future__ import annotations


def create_collection(client, name: str, *, schema, index) -> None:
    """An empty collection with its indexes; the caller loads it.

    `create_collection(index_params=…)` waits for each index by sleeping 0.5 s before every state poll, although a
    new, empty collection has nothing to build: 1.5 s for the chunk collection's three indexes, paid again on
    every reset. The indexes are requested without that wait; loading the collection is what makes it searchable.
    """
    client.create_collection(name, schema=schema)
    client.create_index(name, index, sync=False)
