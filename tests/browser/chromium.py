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


def signed_in_chat(browser, server):
    """A Chinese-locale page of the chat, signed in as the live server's member, its WebSocket open."""
    from playwright.sync_api import expect

    page = browser.new_page(locale="zh-CN", viewport={"width": 1280, "height": 860})
    page.goto(server.url + "/")
    page.fill("input[name=username]", server.username)
    page.fill("input[name=password]", server.password)
    page.click("button[type=submit]")
    page.wait_for_selector("#input")
    expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=10_000)
    return page
