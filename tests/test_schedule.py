"""How `make test` hands tests to the xdist workers (tests/schedule.py): browser tests together, the rest one by one."""
from __future__ import annotations

from tests.schedule import pytest_xdist_make_scheduler


class Config:
    """What the scheduler reads of pytest's config: --dist and the two workers of `-n 2`."""

    def __init__(self, dist: str) -> None:
        self.values = {"dist": dist, "tx": ["2*popen"], "loadscopereorder": True}

    def getvalue(self, name: str):
        return self.values[name]

    getoption = getvalue


def test_browser_tests_are_one_unit_and_every_other_test_a_unit_of_its_own():
    scheduler = pytest_xdist_make_scheduler(Config("loadgroup"), None)
    scopes = {scheduler._split_scope(nodeid) for nodeid in (
        "tests/browser/test_chat_page.py::test_a", "tests/browser/test_kb_picker.py::test_b[1]")}
    assert scopes == {"tests/browser/"}
    assert scheduler._split_scope("tests/kb/test_x.py::test_a") == "tests/kb/test_x.py::test_a"
    assert scheduler._split_scope("tests/kb/test_x.py::test_b") == "tests/kb/test_x.py::test_b"


def test_other_distribution_modes_keep_xdist_own_scheduler():
    assert pytest_xdist_make_scheduler(Config("load"), None) is None
