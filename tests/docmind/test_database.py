"""unapplied_migrations: what a command checks before it touches the product's tables."""
from __future__ import annotations

import pytest
from django.db import connections

from docmind.database import unapplied_migrations


@pytest.mark.django_db
def test_the_migrated_test_database_lacks_nothing():
    assert unapplied_migrations() == []


def test_a_new_database_lacks_every_app_s_first_migration(tmp_path, django_db_blocker):
    alias = "never-migrated"
    connections.settings[alias] = connections.configure_settings({
        "default": connections.settings["default"],
        alias: {"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "new.sqlite3")}})[alias]
    try:
        with django_db_blocker.unblock():
            missing = unapplied_migrations(alias)
    finally:
        connections[alias].close()
        del connections[alias]
        del connections.settings[alias]
    assert "kb.0001_initial" in missing and "chat.0001_initial" in missing
    assert missing.index("contenttypes.0001_initial") < missing.index("auth.0001_initial")
