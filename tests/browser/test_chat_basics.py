"""Chat page basics in headless Chromium: scroll, over-long paste, copy, regenerate, feedback, edit, the reader."""
from __future__ import annotations

import re

import pytest

from tests.browser.chromium import require_chromium
from tests.browser.live_server import LiveServer
from tests.chat.chat_helpers import BEARS, BEARS_TITLE, HANDBOOK, HANDBOOK_TITLE, QUESTION

pytestmark = pytest.mark.browser

STAFF = {"username": "boss", "password": "boss-pass-123"}
CITED = re.compile(r"\bcited\b")


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("browser-basics"))
    live.prepare(texts=[{"title": HANDBOOK_TITLE, "text": HANDBOOK, "domain": "hr"},
                        {"title": BEARS_TITLE, "text": BEARS, "domain": "science"}], staff=STAFF,
                 template=migrated_data_dir)
    live.start()
    yield live
    live.stop()


def _sign_in(context, server, username: str, password: str, start: str = "/"):
    from playwright.sync_api import expect

    page = context.new_page()
    page.goto(server.url + start)
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("[type=submit]")
    if start == "/":
        page.wait_for_selector("#input")
        expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=10_000)
    return page


def _ask(page, question: str = QUESTION):
    from playwright.sync_api import expect

    expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=10_000)
    answers = page.locator(".msg-assistant")
    before = answers.count()
    page.fill("#input", question)
    page.keyboard.press("Enter")
    expect(answers).to_have_count(before + 1, timeout=10_000)  # the input is enabled before the send, too
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    return answers.last


def test_the_finished_answer_is_in_view_with_its_actions(server, browser):
    from playwright.sync_api import expect

    page = _sign_in(browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 600}), server,
                    server.username, server.password)
    for _ in range(3):  # enough turns to overflow the view
        answer = _ask(page)
    expect(answer.locator(".copy-btn")).to_be_in_viewport()
    # Settles at the bottom (layout after `done` may take a frame or two), and stays there.
    # Polled from here: the page's Content-Security-Policy forbids the eval behind wait_for_function.
    gap_js = ("(() => { const b = document.getElementById('messages');"
              " return b.scrollHeight - b.scrollTop - b.clientHeight; })()")
    for _ in range(30):
        if page.evaluate(gap_js) < 50:
            break
        page.wait_for_timeout(100)
    page.wait_for_timeout(500)
    assert page.evaluate(gap_js) < 50


def test_an_over_long_paste_is_kept_whole_announced_and_not_sent(server, browser):
    from playwright.sync_api import expect

    page = _sign_in(browser.new_context(locale="zh-CN"), server, server.username, server.password)
    limit = int(page.locator("#app").get_attribute("data-max-chars"))
    page.locator("#input").focus()
    page.keyboard.insert_text("长" * (limit + 25))
    expect(page.locator("#length-warning")).to_be_visible()
    expect(page.locator("#length-warning")).to_contain_text("25")
    assert page.evaluate("document.getElementById('input').value.length") == limit + 25
    expect(page.locator("#send")).to_be_disabled()
    page.keyboard.press("Enter")
    assert page.locator(".msg-user").count() == 0


def test_copy_regenerate_and_edit_and_resend(server, browser):
    from playwright.sync_api import expect

    context = browser.new_context(locale="zh-CN", permissions=["clipboard-read", "clipboard-write"])
    page = _sign_in(context, server, server.username, server.password)
    answer = _ask(page)
    answer.locator(".copy-btn").click()
    expect(answer.locator(".copy-btn")).to_have_text("已复制")
    assert "十五天" in page.evaluate("navigator.clipboard.readText()")

    answer.locator(".regenerate-btn").click()
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    # The new answer takes the old one's place, on the page and in the saved conversation.
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator(".msg-user").last).to_contain_text(QUESTION)
    expect(page.locator(".msg-assistant").last.locator(".answer")).to_contain_text("十五天")
    page.reload()
    expect(page.locator(".msg-assistant .answer")).to_contain_text("十五天", timeout=10_000)
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".msg-user")).to_have_count(1)

    # Edit and resend: the question is rewritten where it stands and answered again in place.
    question = page.locator(".msg-user").first
    question.hover()
    question.locator(".edit-btn").click()
    box = question.locator(".edit-input")
    expect(box).to_be_focused()
    assert box.input_value() == QUESTION
    box.fill("星河公司的报销申请要在多少天内提交？")
    box.press("Enter")
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator(".msg-user .bubble")).to_have_text("星河公司的报销申请要在多少天内提交？")
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".msg-assistant .answer")).to_contain_text("三十天")
    page.reload()
    expect(page.locator(".msg-user .bubble")).to_have_text("星河公司的报销申请要在多少天内提交？", timeout=10_000)
    expect(page.locator(".msg-assistant")).to_have_count(1)


def test_feedback_is_saved_and_staff_see_it_in_the_admin(server, browser):
    from playwright.sync_api import expect

    page = _sign_in(browser.new_context(locale="zh-CN"), server, server.username, server.password)
    answer = _ask(page)
    answer.locator(".fb-down").click()
    answer.locator(".feedback-form textarea").fill("没有提到病假")
    answer.locator(".feedback-form button[type=submit]").click()
    expect(answer.locator(".fb-down")).to_have_class("action-btn fb-down chosen")

    page.reload()  # the verdict is stored, not only shown
    page.locator(".conv-link").first.click()
    expect(page.locator(".msg-assistant .fb-down.chosen")).to_have_count(1)

    admin = _sign_in(browser.new_context(locale="zh-CN"), server, STAFF["username"], STAFF["password"],
                     start="/admin/login/?next=/admin/chat/messagefeedback/")
    expect(admin.locator("#result_list")).to_contain_text("没有提到病假")
    admin.locator("#result_list a[href*='/admin/chat/message/']").first.click()
    expect(admin.locator("body")).to_contain_text("RULE_PLANNER")


def test_a_source_card_opens_the_document_at_the_cited_passage(server, browser):
    from playwright.sync_api import expect

    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 700})
    page = _sign_in(context, server, server.username, server.password)
    answer = _ask(page)
    card = answer.locator('.source-card[data-index="1"]')
    expect(card).to_contain_text(HANDBOOK_TITLE)
    snippet = card.locator(".source-snippet").inner_text()
    assert "#" not in snippet  # heading marks are not shown as text
    with context.expect_page() as opened:
        card.locator(".source-title").click()
    reader = opened.value
    reader.wait_for_load_state()
    assert "/documents/" in reader.url and "#cited" in reader.url
    expect(reader.locator("h1")).to_have_text(HANDBOOK_TITLE)
    mark = reader.locator("mark#cited")
    expect(mark).to_be_in_viewport()
    expect(mark).to_contain_text("十五天")


def test_the_page_follows_the_browser_language_and_the_switch_changes_it(server, browser):
    from playwright.sync_api import expect

    page = _sign_in(browser.new_context(locale="en-US"), server, server.username, server.password)
    expect(page.locator("#new-chat")).to_contain_text("New chat")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    answer = _ask(page)
    expect(answer.locator(".copy-btn")).to_have_text("Copy")

    with page.expect_navigation():
        page.locator("#sidebar form[data-lang-switch] select").select_option("zh-hans")
    expect(page.locator("#new-chat")).to_contain_text("新对话")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    answer = _ask(page)
    expect(answer.locator(".copy-btn")).to_have_text("复制")


VIEWER = {"username": "viewer", "password": "viewer-pass-123"}
VIEWER_SETUP = """
from django.contrib.auth import get_user_model
from kb.models import KbAccess, KnowledgeBase
from kb.services import kb_grant
viewer = get_user_model().objects.create_user(username="%(username)s", password="%(password)s")
kb_grant(kb=KnowledgeBase.objects.default(), user=viewer, access=KbAccess.VIEW)
print("viewer ok")
"""


def test_a_view_grant_sees_the_cited_passage_without_a_link_to_the_document(server, browser):
    import subprocess

    from playwright.sync_api import expect

    from tests.browser.live_server import PYTHON

    made = subprocess.run([PYTHON, "manage.py", "shell", "-c", VIEWER_SETUP % VIEWER], cwd=server.root,
                          env=server.env(), capture_output=True, text=True, timeout=300)
    assert "viewer ok" in made.stdout, made.stderr
    page = _sign_in(browser.new_context(locale="zh-CN"), server, VIEWER["username"], VIEWER["password"])
    card = _ask(page).locator('.source-card[data-index="1"]')
    expect(card).to_contain_text(HANDBOOK_TITLE)
    expect(card.locator(".source-snippet")).to_contain_text("十五天")
    expect(card.locator("a")).to_have_count(0)
    expect(card.locator(".source-note")).to_have_text("仅限片段")
    assert "openable" not in (card.get_attribute("class") or "")


def test_the_sources_in_view_are_the_cited_ones_and_the_others_are_folded_below(server, browser):
    from playwright.sync_api import expect

    page = _sign_in(browser.new_context(locale="en-US"), server, server.username, server.password)
    answer = _ask(page)
    shown = answer.locator(".sources > .source-grid > .source-card")
    folded = answer.locator(".sources-more")
    expect(shown).to_have_count(1)
    expect(shown.first).to_have_class(CITED)
    expect(shown.first).to_contain_text(HANDBOOK_TITLE)
    expect(answer.locator(".sources > summary")).to_have_text("Sources · 1")
    # The passage retrieved but not cited is one click away, not in plain sight.
    expect(folded.locator("summary")).to_have_text("Also retrieved, not cited · 1")
    expect(folded.locator(".source-card")).to_contain_text(BEARS_TITLE)
    expect(folded.locator(".source-card")).not_to_be_visible()
    folded.locator("summary").click()
    expect(folded.locator(".source-card")).to_be_visible()
    expect(folded.locator(".source-card")).not_to_have_class(CITED)
    # Reloaded from the saved conversation, the sources are drawn the same way.
    page.reload()
    again = page.locator(".msg-assistant").last
    expect(again.locator(".sources > .source-grid > .source-card")).to_have_count(1)
    expect(again.locator(".sources-more summary")).to_have_text("Also retrieved, not cited · 1")
