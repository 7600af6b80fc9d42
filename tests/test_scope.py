"""Which tests the MariaDB + Redis run repeats (tests/scope.py), and the guard that keeps a cache user in it."""
from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = """
from django.conf import settings

settings.configure(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}})
"""

TESTS = """
import pytest
from django.core.cache import caches


def test_pure():
    assert 1 + 1 == 2


def test_reads_the_cache():
    caches["default"].get("anything")


@pytest.mark.services
def test_marked_reads_the_cache():
    caches["default"].get("anything")


@pytest.mark.django_db
def test_with_the_database():
    pass


def test_with_the_database_fixture(db):
    pass
"""


def _run(pytester, monkeypatch, *, scope: str | None):
    pytester.makeconftest(CONFTEST + "\n\n@__import__('pytest').fixture\ndef db():\n    return None\n")
    pytester.makepyfile(test_inner=TESTS)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    if scope is None:
        monkeypatch.delenv("DOCMIND_TEST_SCOPE", raising=False)
    else:
        monkeypatch.setenv("DOCMIND_TEST_SCOPE", scope)
    return pytester.runpytest_subprocess("-p", "tests.scope", "-p", "no:django", "-p", "no:randomly",
                                         "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning",
                                         "-rA")


def test_a_test_that_touches_a_cache_without_the_database_or_the_mark_fails_saying_which_mark(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, scope=None)
    result.assert_outcomes(passed=5, errors=1)  # the test's own body passed; its teardown reports the cache use
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_reads_the_cache*",
                                 "*uses the cache (default)*mark it `@pytest.mark.services`*"])


def test_the_services_scope_keeps_the_database_and_marked_tests_only(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, scope="services")
    result.assert_outcomes(passed=3, deselected=2)
    result.stdout.fnmatch_lines(["*PASSED test_inner.py::test_marked_reads_the_cache*"])
    assert "test_pure" not in result.stdout.str() and "test_reads_the_cache" not in result.stdout.str()


def test_an_unknown_scope_is_refused(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, scope="everything")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*DOCMIND_TEST_SCOPE is 'services' or unset, not 'everything'*"])
