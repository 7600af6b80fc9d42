"""Headless Chromium for the browser tests: one browser process per test module, a fresh context per page.

Each test's pages, cookies and storage are its own: `new_page` and `new_context` open a browser context (an
incognito-like profile with its own cookies, storage and cache), and every context a test opened is closed when
it ends. Starting Playwright's driver and Chromium costs about a CPU second, which a browser per test paid for
each of its tests.
"""
from __future__ import annotations

import pytest

from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def _chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser(_chromium):
    assert not _chromium.contexts, "a context of an earlier test is still open"
    try:
        yield _chromium
    finally:
        for context in _chromium.contexts:
            context.close()
