"""Isolation of tests that share one Milvus Lite file: each gets knowledge bases (and ids) of its own.

Database rows roll back after each test, Milvus rows do not. Every search is scoped by knowledge base,
so a test whose documents go to bases no earlier test used sees only its own vectors and BM25 entries,
without emptying the collections (dropping and recreating them costs seconds a test).
"""
from __future__ import annotations

import uuid

# Ids a test may create after `skip_used_ids` before the next test could reuse one, per table.
_BLOCKS = {"kb.KnowledgeBase": 1_000, "kb.Document": 10_000, "kb.Chunk": 1_000_000}
_used_up_to: dict[str, int] = {}  # per table, the end of the last block handed out in this process


def skip_used_ids() -> None:
    """Make the knowledge bases, documents and chunks created next in this test get ids that no earlier test of
    this process used: Milvus rows carry them (chunk ids are its primary keys; ingestion asks it which chunks
    already have a vector), and they outlive the test.

    SQLite rolls its id counters back with the test's transaction, so ids come round again; MariaDB's
    auto-increment never goes back (a transactional test's flush deletes rows, it does not truncate)."""
    from django.apps import apps
    from django.db import connection

    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for label, block in _BLOCKS.items():
            model = apps.get_model(label)
            table = model._meta.db_table
            highest = model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            floor = max(_used_up_to.get(label, 0), highest)
            _used_up_to[label] = floor + block  # this test's block: the next test starts above it
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s AND seq < %s", [floor, table, floor])
            cursor.execute("SELECT 1 FROM sqlite_sequence WHERE name = %s", [table])
            if cursor.fetchone() is None:
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, floor])


def fresh_default_kb():
    """Make a new, empty knowledge base the default one: same name, description and grants, an id not used
    before in this process. Documents and domains created without naming a base go to it; the former
    default keeps its rows under another name (the database rolls it all back after the test)."""
    from django.db import transaction

    from kb.models import KbGrant, KnowledgeBase

    with transaction.atomic():
        old = KnowledgeBase.objects.default()
        skip_used_ids()
        KnowledgeBase.objects.filter(pk=old.pk).update(is_default=False, name=f"{old.name} ({old.pk})"[:128])
        new = KnowledgeBase.objects.create(name=old.name, description=old.description, is_default=True)
        KbGrant.objects.bulk_create(KbGrant(kb=new, user_id=g.user_id, group_id=g.group_id, access=g.access)
                                    for g in KbGrant.objects.filter(kb=old))
    return new


def client_address() -> str:
    """A client address that no other test of this run is likely to use (one in 16 million): throttle and
    lockout history are kept per address in caches that outlive a test — the in-process fallback counter
    among them, shared by every test of the worker — so a reused address starts already throttled.
    The last byte stays within 1–250 so that a test can name a neighbour (`…251`) in the same /24."""
    value = uuid.uuid4().int
    return f"10.{value % 256}.{value // 256 % 256}.{value // 65536 % 250 + 1}"
