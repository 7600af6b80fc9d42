"""The chat page's knowledge-base picker in headless Chromium: it offers only the bases the member may read,
narrows the document list, and scopes the answer; an unreadable base never reaches the page."""
from __future__ import annotations

import pytest

from tests.browser.chromium import require_chromium, signed_in_chat
from tests.browser.live_server import LiveServer
from tests.chat.chat_helpers import HANDBOOK, HANDBOOK_TITLE, QUESTION

pytestmark = pytest.mark.browser

READABLE_KB, HIDDEN_KB = "研发手册", "财务机密"
RELEASE_TITLE = "发布流程"
RELEASE = ("# 发布流程\n\n## 上线窗口\n生产环境每周二和周四下午发布，发布前需要两名工程师评审代码。\n\n"
           "## 回滚\n发布后十五分钟内错误率超过百分之一时立即回滚。\n")
SECRET_TITLE = "薪酬方案"
SECRET = "总监的年终奖系数为四点五倍，这份方案的口令是青柠檬。"


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("browser-kbs"))
    live.prepare(kbs=[{"name": READABLE_KB, "reader": "read"}, {"name": HIDDEN_KB, "reader": None}],
                 texts=[{"title": HANDBOOK_TITLE, "text": HANDBOOK, "domain": "hr"},
                        {"title": RELEASE_TITLE, "text": RELEASE, "domain": "engineering", "kb": READABLE_KB},
                        {"title": SECRET_TITLE, "text": SECRET, "domain": "finance", "kb": HIDDEN_KB}],
                 template=migrated_data_dir)
    live.start()
    yield live
    live.stop()



def _ask(page, question: str):
    from playwright.sync_api import expect

    before = page.locator(".msg-assistant").count()
    page.fill("#input", question)
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant")).to_have_count(before + 1, timeout=60_000)
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    return page.locator(".msg-assistant").last


def test_the_picker_offers_only_readable_bases_and_narrows_the_documents(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    offered = page.locator("#kb-picker option").all_inner_texts()
    assert READABLE_KB in offered and HIDDEN_KB not in offered
    documents = page.locator("#doc-picker option")
    assert not any(SECRET_TITLE in text for text in documents.all_inner_texts())

    page.select_option("#kb-picker", label=READABLE_KB)
    expect(documents.filter(has_text=RELEASE_TITLE)).not_to_have_attribute("hidden", "")
    expect(documents.filter(has_text=HANDBOOK_TITLE)).to_have_attribute("hidden", "")


def test_an_answer_is_drawn_only_from_the_chosen_base(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    page.select_option("#kb-picker", label=READABLE_KB)
    answer = _ask(page, "生产环境什么时候发布？")
    expect(answer.locator(".answer")).to_contain_text("周二")
    expect(answer.locator(".source-card.cited").first).to_contain_text(RELEASE_TITLE)

    # The handbook answers this one, but it lives in another base: nothing of it may be cited or quoted.
    answer = _ask(page, QUESTION)
    expect(answer.locator(".answer")).not_to_contain_text("十五天")
    assert not any(HANDBOOK_TITLE in text for text in answer.locator(".source-card").all_inner_texts())


def test_a_base_the_member_cannot_read_never_reaches_the_page(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    answer = _ask(page, "总监的年终奖系数是多少？方案的口令是什么？")
    expect(answer.locator(".answer")).not_to_contain_text("四点五")
    assert "青柠檬" not in page.content() and SECRET_TITLE not in page.content()
