"""Shared fixtures: users in each role and authenticated API clients."""
from __future__ import annotations

import fcntl
import os

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from config_admin.registry import seed_rows
from docmind.roles import ADMIN, KB_EDITOR, MEMBER, ensure_roles, user_set_role


def pytest_configure(config) -> None:
    # Django's default hasher is slow on purpose (over a million PBKDF2 rounds, ~0.5 s a password here), and the
    # fixtures below create a user or more per test. Hashing strength is not under test; the browser tests' server
    # runs in its own process with the real hashers.
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items) -> None:
    """Among the transactional tests (pytest-django puts them after the others), those with serialized rollback
    run first. The flush after any other transactional test fires post_migrate, which recreates content types
    and permissions; a serialized-rollback test run after that fails to load its rows back over them. The order
    is otherwise kept (pytest-randomly's, pytest-django's groups).

    xdist workers keep it too: `make test` runs `--dist loadgroup` (tests/schedule.py), where each test is a work
    unit of its own, handed out in this order, except the browser tests, which go to one worker together and may
    run there before the database tests; that is harmless only for tests that do not use the test database,
    which is checked here."""
    def serialized_first(item) -> int:
        marker = item.get_closest_marker("django_db")
        transactional = marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
                                                or (marker.args and marker.args[0]))
        transactional = transactional or {"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ()))
        if not transactional:
            return 0 if marker is not None or "db" in getattr(item, "fixturenames", ()) else 3
        return 1 if marker is not None and marker.kwargs.get("serialized_rollback") else 2

    items.sort(key=serialized_first)
    from tests.schedule import BROWSER_TESTS

    grouped_with_db = [item.nodeid for item in items
                       if item.nodeid.startswith(BROWSER_TESTS) and serialized_first(item) != 3]
    if grouped_with_db:
        raise pytest.UsageError("a browser test runs out of the database tests' order, so it must not use the "
                                f"test database: {', '.join(grouped_with_db)}")


def require_services() -> bool:
    """In CI a service named by an URL variable must be reached: a skip there would hide a failure."""
    return os.environ.get("DOCMIND_REQUIRE_SERVICES", "") == "1"


def skip_unless_required(reason: str, *, variable: str) -> None:
    """Skip, or fail where `variable` is 1 (CI sets it, see tests/envplugin.py): there the skip would hide
    that the machine cannot run what the test checks."""
    if os.environ.get(variable, "") == "1":
        pytest.fail(f"{reason}, but {variable}=1")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def each_test_starts_in_the_default_language():
    """A request through LocaleMiddleware leaves its language active on the thread; without this reset a test's
    messages would be in whatever language the previous test on that worker happened to ask for."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def english(settings):
    """Messages in English: asked of a service directly, and of a request that names no language (the project's
    default is Chinese)."""
    from django.utils import translation

    settings.LANGUAGE_CODE = "en"
    with translation.override("en"):
        yield


@pytest.fixture(autouse=True)
def content_types_exist(request):
    """A transactional test starts with the content types present and the in-process cache of them fresh.

    The flush after a serialized-rollback test leaves the content-type table empty (the next such test loads
    its own rows back), and the cache keeps ids of rows flushed away; a later transactional test that writes a
    row the audit trail follows would then insert an entry pointing at no content type."""
    marker = request.node.get_closest_marker("django_db")
    marked = marker is not None and bool(marker.kwargs.get("transaction") or (marker.args and marker.args[0]))
    transactional = marked or "transactional_db" in request.fixturenames
    if transactional:
        request.getfixturevalue("transactional_db")
        from django.contrib.contenttypes.models import ContentType

        ContentType.objects.clear_cache()
        if not ContentType.objects.exists():
            from django.core.management.sql import emit_post_migrate_signal

            emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    yield


@pytest.fixture(autouse=True)
def memory_extraction_ends_with_its_test():
    """A turn's memory extraction runs on a worker after `done`; one still queued when its test ends would call
    that test's (stopped) fake model during a later test and change what that test counts (model errors)."""
    yield
    from memory.turn import _extract_pool

    _extract_pool.submit(lambda: None).result(timeout=60)  # one worker, first in first out


@pytest.fixture(scope="session")
def migrated_data_dir(tmp_path_factory, worker_id):
    """A data dir migrated once per run, which each live server (tests/browser/live_server.py) copies instead of
    running the migrations again in a process of its own. The xdist workers of one run share it: the first to
    need it migrates under a file lock, the others wait and copy (the run's temp dir is theirs alone)."""
    from tests.browser.live_server import migrated_template

    if worker_id == "master":
        return migrated_template(tmp_path_factory.mktemp("migrated-data-dir"))
    shared = tmp_path_factory.getbasetemp().parent / "migrated-data-dir"
    with open(shared.with_name("migrated-data-dir.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared.with_name("migrated-data-dir.done")
        if not done.exists():
            shared.mkdir(exist_ok=True)
            migrated_template(shared)
            done.touch()
    return shared


@pytest.fixture
def seeded(db) -> None:
    """Rows that migrations create: a transactional test's flush removes them for later tests."""
    seed_rows(apps)
    ensure_roles()


def _make_user(django_user_model, username: str, role: str):
    seed_rows(apps)
    ensure_roles()
    user = django_user_model.objects.create_user(username=username, password="pw-" + username)
    user_set_role(user=user, role=role)
    return user


@pytest.fixture
def member(django_user_model):
    return _make_user(django_user_model, "alice", MEMBER)


@pytest.fixture
def other_member(django_user_model):
    return _make_user(django_user_model, "bob", MEMBER)


@pytest.fixture
def kb_editor(django_user_model):
    return _make_user(django_user_model, "eddie", KB_EDITOR)


@pytest.fixture
def admin_user(django_user_model):
    return _make_user(django_user_model, "root-admin", ADMIN)


def _client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def member_client(member) -> APIClient:
    return _client_for(member)


@pytest.fixture
def editor_client(kb_editor) -> APIClient:
    return _client_for(kb_editor)


@pytest.fixture
def admin_client_api(admin_user) -> APIClient:
    return _client_for(admin_user)


@pytest.fixture
def own_redis(settings):
    """A redis-server this test starts and may stop, wired in as the cache and channel layer.

    Not the shared Redis of REDIS_URL: stopping that one would break every other test.
    """
    import logging

    from channels.layers import channel_layers

    from docmind import env
    from memory.backends import get_memory_cache
    from tests.redis_server import RedisServer

    try:
        server = RedisServer().start()
    except FileNotFoundError:
        if require_services():
            pytest.fail("redis-server is not installed, but DOCMIND_REQUIRE_SERVICES=1")
        pytest.skip("redis-server is not installed")
    settings.CACHES = env.cache_config(server.url)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [server.url], "prefix": "docmind"}}}
    for log_filter in logging.getLogger("docmind.cache").filters:
        getattr(log_filter, "reset", lambda: None)()
    # The memory cache holds a client of the Redis it was built with: built during this test, it would keep
    # this server's client, stopped below, for every later test of the process.
    get_memory_cache.cache_clear()
    try:
        yield server
    finally:
        channel_layers.backends.clear()
        get_memory_cache.cache_clear()
        server.cleanup()
_SPAN_EXPORTER = None


@pytest.fixture
def spans():
    """Spans finished during the test, in an in-memory exporter (the global provider is set once per run)."""
    global _SPAN_EXPORTER
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if _SPAN_EXPORTER is None:
        _SPAN_EXPORTER = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_SPAN_EXPORTER))
        trace.set_tracer_provider(provider)
    _SPAN_EXPORTER.clear()
    yield _SPAN_EXPORTER
    _SPAN_EXPORTER.clear()
