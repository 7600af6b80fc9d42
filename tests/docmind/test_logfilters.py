"""Logging filters: routine refusals without tracebacks."""
from __future__ import annotations

import logging

import pytest
from django.test import Client


@pytest.mark.django_db
def test_a_refused_page_is_logged_as_one_line_without_a_traceback(member, caplog):
    browser = Client()
    browser.force_login(member)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert browser.get("/eval/").status_code == 403
    refusals = [r for r in caplog.records if r.name == "django.request" and getattr(r, "status_code", None) == 403]
    assert refusals and all(r.exc_info is None for r in refusals)


def test_other_records_keep_their_traceback():
    from docmind.logfilters import RefusalWithoutTraceback

    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "Internal Server Error", (),
                                   sys.exc_info())
    record.status_code = 500
    assert RefusalWithoutTraceback().filter(record) and record.exc_info is not None
