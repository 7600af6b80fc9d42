"""Debian's Chromium, driven by Playwright: the one browser this machine can run (Playwright's own download needs
the internet)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def require_chromium() -> None:
    """Skip without the browser, or fail where the run says browser tests must run (CI)."""
    if Path(CHROMIUM).exists():
        return
    message = f"{CHROMIUM} is missing: install the Debian package `chromium` (apt-get install -y chromium)"
    if os.environ.get("DOCMIND_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)
