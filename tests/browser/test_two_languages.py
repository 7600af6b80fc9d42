"""One signed-in session over the main pages in Chinese, then in English after the switch: each page is wholly
in its language, times follow the browser's zone, and no console or server error occurs on the way."""
from __future__ import annotations

import pytest

from tests.browser.chromium import require_chromium
from tests.browser.live_server import LiveServer
from tests.chat.chat_helpers import HANDBOOK, HANDBOOK_TITLE, QUESTION
from tests.test_chinese_pages import english_in

pytestmark = pytest.mark.browser

STAFF = {"username": "curator", "password": "curator-pass-123"}
ZONE = "America/New_York"


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("two-languages"))
    live.prepare(texts=[{"title": HANDBOOK_TITLE, "text": HANDBOOK, "domain": "hr"}], staff=STAFF,
                 template=migrated_data_dir)
    live.start()
    yield live
    live.stop()


def _contrast(page, selector: str, background: str) -> float:
    """WCAG contrast of an element's text colour against `background` (rgb of the area it sits on)."""
    colour = page.locator(selector).evaluate("node => getComputedStyle(node).color")

    def luminance(rgb: str) -> float:
        channels = [int(v) / 255 for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(colour), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_main_pages_in_chinese_then_in_english(server, browser):
    from playwright.sync_api import expect

    context = browser.new_context(locale="zh-CN", timezone_id=ZONE, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    console_errors: list[str] = []
    server_errors: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    page.on("response", lambda r: server_errors.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    from config_admin.registry import KEYS

    # Names the fixture chose and identifiers (configuration categories, the default domain) kept as they are.
    data = {STAFF["username"], server.username, "Default", "hr", "general", "txt", "admin", "kb", "editor", "member"}
    data |= {key.category for key in KEYS} | {choice for key in KEYS for choice in key.choices or ()}

    page.goto(server.url + "/")
    page.fill("input[name=username]", STAFF["username"])
    page.fill("input[name=password]", STAFF["password"])
    page.click("[type=submit]")
    for language, sign in (("zh-hans", "新对话"), ("en", "New chat")):
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator("#new-chat")).to_contain_text(sign)
        expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=10_000)
        page.fill("#input", QUESTION)
        page.keyboard.press("Enter")
        answer = page.locator(".msg-assistant").last
        expect(answer.locator(".copy-btn")).to_be_visible(timeout=60_000)
        expect(answer.locator(".answer")).to_contain_text("十五天")
        reader = answer.locator(".source-card .source-title").first.get_attribute("href")
        # The retrieval trace is a diagnostic view of the pipeline: its values are stage and signal names.
        pages = {"chat": page.locator("html").evaluate(
            "n => { const c = n.cloneNode(true); c.querySelectorAll('.trace-body').forEach((t) => t.remove());"
            " return c.outerHTML; }")}

        page.goto(server.url + "/memories/")
        # The language switch reads on the dark header (#14192b) as well as the page's other text does.
        assert _contrast(page, ".mem-head .lang-switch select", "rgb(20, 25, 43)") >= 4.5
        pages["memories"] = page.content()
        page.goto(server.url + reader)
        expect(page.locator("h1.reader-title")).to_have_text(HANDBOOK_TITLE)
        pages["reader"] = page.content()
        for path in ("/admin/", "/admin/kb/knowledgebase/add/", "/admin/kb/document/",
                     "/admin/config_admin/sysaiconfig/"):
            page.goto(server.url + path)
            pages[path] = page.content()
        # The admin runs in the browser's zone (its cookie), so its date widgets see no offset to warn about.
        server_offset = int(page.locator("body").get_attribute("data-admin-utc-offset"))
        assert server_offset == page.evaluate("-new Date().getTimezoneOffset() * 60")

        if language == "zh-hans":
            assert {name: english_in(html, data) for name, html in pages.items()} == dict.fromkeys(pages, [])
            page.goto(server.url + "/")
            with page.expect_navigation():
                page.locator("#sidebar form[data-lang-switch] select").select_option("en")
        else:
            # The documents and answers are Chinese; the pages around them are English.
            assert all('<html lang="en"' in html for html in pages.values())
            assert "新对话" not in pages["chat"] and "我的记忆" not in pages["memories"]
            page.goto(server.url + "/")

    assert console_errors == [], "\n".join(console_errors)
    assert server_errors == []
