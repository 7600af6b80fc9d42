"""What a command that reads and writes the product's tables checks first."""
from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def unapplied_migrations(alias: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The migrations the database still lacks ("app.name"), in the order `migrate` would apply them; [] when it is
    up to date. A command run against a new data dir would otherwise fail at its first query with "no such table"."""
    executor = MigrationExecutor(connections[alias])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _backwards in plan]
