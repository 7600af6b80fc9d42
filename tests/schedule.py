"""Loaded with -p: how `make test` (`--dist loadgroup`) hands tests to the pytest-xdist workers.

One test at a time, in collection order (pytest-randomly's shuffle, then the database order of tests/conftest.py),
except the browser tests (tests/browser/), which go to one worker together: each browser module builds a live
server (a migrated copy of the app in a subprocess, seconds of CPU) in a module-scoped fixture, and split over
the workers every worker would build every module's server.

xdist's own loadgroup reads `xdist_group` marks from a suffix its workers add to each test's node id, which
pytest 9 no longer takes (the node id is not an attribute to set any more), so the group is named here by path.
The browser tests' unit is the largest, so xdist hands it out first; it may run before the database tests of
its worker only because browser tests do not use the test database (tests/conftest.py checks that).
"""
from __future__ import annotations

BROWSER_TESTS = "tests/browser/"


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class BrowserTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return BROWSER_TESTS if nodeid.startswith(BROWSER_TESTS) else nodeid

    return BrowserTestsTogether(config, log)
