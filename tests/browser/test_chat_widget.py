"""The chat widget in headless Chromium: one script tag on a listed intranet page opens a chat that answers
from the key's base with its sources, with no DocMind sign-in; the same tag on another origin gets no chat."""
from __future__ import annotations

import functools
import http.server

import pytest

from tests.browser.chromium import require_chromium
from tests.browser.live_server import LiveServer, free_port
from tests.chat.chat_helpers import HANDBOOK, HANDBOOK_TITLE, QUESTION
from tests.fakes.serving import serve_in_thread

pytestmark = pytest.mark.browser

WIDGET_KB = "帮助台"
ISSUE = """
import os
from apikeys.services import key_create
from django.contrib.auth import get_user_model
from kb.models import KnowledgeBase
boss = get_user_model().objects.get(username="boss")
issued = key_create(creator=boss, name="Helpdesk", kb_ids=[KnowledgeBase.objects.get(name=os.environ["WIDGET_KB"]).pk],
                    scope="ask", allowed_origins=[os.environ["WIDGET_ORIGIN"]])
print("KEY=" + issued.secret)
"""


class _Site:
    """An intranet page on its own origin (loopback, another port) carrying the widget's script tag."""

    def __init__(self, root, docmind_url: str, key: str, port: int) -> None:
        (root / "index.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>Intranet</title></head><body>"
            "<h1>Intranet</h1>"
            f"<script src='{docmind_url}/static/apikeys/widget.js' data-key='{key}' async></script>"
            "</body></html>", encoding="utf-8")
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        serve_in_thread(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sites(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("browser-widget"))
    live.prepare(staff={"username": "boss", "password": "boss-pass-123"}, kbs=[{"name": WIDGET_KB, "reader": None}],
                 texts=[{"title": HANDBOOK_TITLE, "text": HANDBOOK, "domain": "hr", "kb": WIDGET_KB}],
                 template=migrated_data_dir)
    listed_port = free_port()
    # The key is issued for a base the set-up makes, in the same shell, before the server starts.
    out = live.apply(then=ISSUE, env={"WIDGET_KB": WIDGET_KB, "WIDGET_ORIGIN": f"http://127.0.0.1:{listed_port}"})
    keys = [line[4:] for line in out.splitlines() if line.startswith("KEY=")]
    assert keys, f"issuing the key failed:\n{out}"
    key = keys[0]
    live.start()
    listed = _Site(tmp_path_factory.mktemp("intranet"), live.url, key, listed_port)
    other = _Site(tmp_path_factory.mktemp("elsewhere"), live.url, key, free_port())
    yield {"listed": listed, "other": other}
    listed.close()
    other.close()
    live.stop()


def test_the_widget_answers_on_a_listed_page_with_sources_and_no_sign_in(sites, browser):
    from playwright.sync_api import expect

    page = browser.new_page(locale="zh-CN")
    with page.expect_response(lambda r: "/widget/frame/" in r.url) as served:
        page.goto(sites["listed"].url + "/")
    assert served.value.status == 200
    page.click(".docmind-widget-button")
    frame = page.frame_locator("iframe.docmind-widget-frame")
    frame.locator("input[name=message]").fill(QUESTION)
    frame.locator("input[name=message]").press("Enter")
    answer = frame.locator(".widget-log li.a").last
    expect(answer.locator(".sources li").first).to_contain_text(HANDBOOK_TITLE, timeout=60_000)
    assert "15" in answer.inner_text() or "十五" in answer.inner_text()


def test_the_widget_shows_no_chat_on_another_origin(sites, browser):
    page = browser.new_page(locale="zh-CN")
    with page.expect_response(lambda r: "/widget/frame/" in r.url) as served:
        page.goto(sites["other"].url + "/")
    assert served.value.status == 403
    page.click(".docmind-widget-button")
    assert page.frame_locator("iframe.docmind-widget-frame").locator(".widget-form").count() == 0
