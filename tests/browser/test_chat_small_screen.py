"""The chat page on a 390 px phone: the header fits, feedback icons need no emoji font, "no evidence" is said once."""
from __future__ import annotations

import re

import pytest

from tests.browser.chromium import require_chromium, signed_in_chat
from tests.browser.live_server import LiveServer

pytestmark = pytest.mark.browser

LONG_KB = "人力资源与行政管理制度汇编（二〇二六年修订版，含差旅、报销、考勤与门禁）"
EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("chat-small-screen"))
    # No documents: every answer finds no evidence.
    live.prepare(kbs=[{"name": LONG_KB, "reader": "read"}], template=migrated_data_dir)
    live.start()
    yield live
    live.stop()


def test_the_header_fits_a_phone_and_an_answer_without_evidence_says_so_once(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_viewport_size({"width": 390, "height": 800})
    page.select_option("#kb-picker", label=LONG_KB)

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for selector in ("#open-sidebar", "#chat-title", "#kb-picker", "#doc-picker", "#conn"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, selector

    page.fill("#input", "出差住宿标准是多少？")
    page.keyboard.press("Enter")
    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".answer-actions .fb-up")).to_be_visible(timeout=60_000)
    badges = answer.locator(".badge").all_inner_texts()
    assert len([b for b in badges if "证据" in b or "evidence" in b.lower()]) == 1, badges

    for button in (answer.locator(".fb-up"), answer.locator(".fb-down")):
        assert button.locator("svg path").count() == 1
        assert not EMOJI.search(button.inner_text())
        assert button.get_attribute("aria-label")
    assert errors == []


def test_a_conversation_can_be_deleted_by_touch_and_by_keyboard(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    page.fill("#input", "年假有几天？")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant .answer-actions .fb-up").last).to_be_visible(timeout=60_000)
    page.goto(server.url + "/")  # a new chat: the saved conversation is listed, not active, no pointer over it
    delete = page.locator(".conv-item .conv-delete").first
    expect(delete).to_be_attached(timeout=10_000)
    assert delete.evaluate("el => getComputedStyle(el).opacity") == "0"  # a mouse's hover shows it
    delete.focus()
    assert page.evaluate("document.activeElement.classList.contains('conv-delete')")
    assert delete.evaluate("el => getComputedStyle(el).opacity") == "1"

    phone = browser.new_context(locale="zh-CN", has_touch=True, is_mobile=True, viewport={"width": 390, "height": 800})
    touch = phone.new_page()
    touch.goto(server.url + "/")
    touch.fill("input[name=username]", server.username)
    touch.fill("input[name=password]", server.password)
    touch.click("button[type=submit]")
    touch.wait_for_selector("#input")
    shown = touch.locator(".conv-item .conv-delete").first
    expect(shown).to_be_attached(timeout=10_000)
    assert shown.evaluate("el => getComputedStyle(el).opacity") == "1"  # no hover on a touch screen
