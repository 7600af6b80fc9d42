"""Loaded with -p: which tests a run against MariaDB and Redis repeats, and the check that keeps that choice honest.

A test reaches those services through the test database or a Django cache, and through nothing else: the browser
tests' live server drops DATABASE_URL and REDIS_URL, Milvus is the embedded one in both runs, and a test that
wants Redis for itself starts its own server (tests/conftest.py `own_redis`). So `DOCMIND_TEST_SCOPE=services`
keeps the tests that use the test database or carry the `services` mark and leaves out the rest, which behave the
same whatever DATABASE_URL and REDIS_URL name and have already run with the embedded defaults. CI runs the
embedded suite whole and the MariaDB + Redis one with this scope.

pytest-django already refuses database access to a test that did not ask for it. The cache has no such guard, so
this plugin adds one to every run: a test outside the scope that touches a Django cache fails, naming the mark it
needs, instead of silently never meeting Redis.
"""
from __future__ import annotations

import os
import threading

import pytest

SCOPE_VARIABLE = "DOCMIND_TEST_SCOPE"
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                               "client", "admin_client", "live_server"})


def uses_services(item: pytest.Item) -> bool:
    """Whether the test may reach the database or a cache: it asks for the database or is marked `services`."""
    if item.get_closest_marker("django_db") or item.get_closest_marker("services"):
        return True
    return bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    scope = os.environ.get(SCOPE_VARIABLE, "")
    if not scope:
        return
    if scope != "services":
        raise pytest.UsageError(f"{SCOPE_VARIABLE} is 'services' or unset, not {scope!r}")
    kept = [item for item in items if uses_services(item)]
    left_out = [item for item in items if not uses_services(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(autouse=True)
def a_test_outside_the_services_scope_touches_no_cache(request):
    """Fail a test that `DOCMIND_TEST_SCOPE=services` would leave out but that reads or writes a Django cache.

    Only the test's own thread is watched: a thread an earlier test left running may touch a cache at any time,
    and a test whose cache use happens on threads it starts is not caught (it still runs in the embedded suite).
    The patch is made by hand, not with `monkeypatch`: an autouse fixture that asked for `monkeypatch` would set it
    up before the database fixtures, and so undo a test's own patches only after the database rollback they may
    break."""
    if uses_services(request.node):
        yield
        return
    from django.core.cache import CacheHandler

    touched: list[str] = []
    own_thread = threading.current_thread()
    getitem = CacheHandler.__getitem__

    def watched(handler, alias):
        if threading.current_thread() is own_thread:
            touched.append(alias)
        return getitem(handler, alias)

    CacheHandler.__getitem__ = watched
    try:
        yield
    finally:
        CacheHandler.__getitem__ = getitem
    if touched:
        pytest.fail(f"this test uses the cache ({', '.join(sorted(set(touched)))}) but neither the database nor the "
                    "`services` mark, so the MariaDB + Redis run would leave it out: mark it "
                    "`@pytest.mark.services`", pytrace=False)
