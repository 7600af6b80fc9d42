"""A fresh headless Chromium per test (each test's pages, cookies and storage are its own)."""
from __future__ import annotations

import pytest

from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
