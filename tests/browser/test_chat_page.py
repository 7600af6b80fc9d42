"""The chat page in headless Chromium: sign in, ask, watch the streamed answer, click [1], see the source lit up."""
from __future__ import annotations

import re

import pytest

from tests.browser.chromium import require_chromium, signed_in_chat
from tests.browser.live_server import LiveServer
from tests.chat.chat_helpers import BEARS, BEARS_TITLE, HANDBOOK, HANDBOOK_TITLE, QUESTION

pytestmark = pytest.mark.browser

STAFF = {"username": "boss", "password": "boss-pass-123"}
# Markup inside a document must reach the page as text, never as live HTML.
HOSTILE = ("紫色长颈鹿的口令是蓝莓<img src=x onerror=\"window.__pwned=1\">。"
           "<script>window.__pwned=2</script>紫色长颈鹿住在实验室的三号房间。")
MANUAL_TITLE = "支付失败排查手册"
# Sections that number themselves, so that "第二类" has one right answer.
MANUAL = ("# 支付失败排查手册\n\n## 适用范围\n本手册用于排查支付超时、扣款无回调、重复扣款等问题。\n\n"
          "## 一、支付超时\n支付请求默认超时时间为 30 秒，超时后网关在 5 分钟后发起主动查询。\n\n"
          "## 二、扣款无回调\n若回调失败，渠道最多重试 8 次。排查时先在回调日志中按订单号搜索，确认是否收到通知。\n\n"
          "## 三、重复扣款\n同一订单号出现两笔成功流水时，系统会在 T+1 日发起原路退款。\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("browser-data"))
    live.prepare(texts=[{"title": HANDBOOK_TITLE, "text": HANDBOOK, "domain": "hr"},
                        {"title": BEARS_TITLE, "text": BEARS, "domain": "science"},
                        {"title": "<b>安全</b>测试", "text": HOSTILE, "domain": "security"},
                        {"title": MANUAL_TITLE, "text": MANUAL, "domain": "payment"}], staff=STAFF,
                 template=migrated_data_dir)
    live.start()
    yield live
    live.stop()



def test_ask_see_the_streamed_answer_and_jump_to_the_source(server, browser, tmp_path):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None)

    page.fill("#input", QUESTION)
    page.keyboard.press("Enter")
    answer = page.locator(".msg-assistant .answer").last
    expect(answer).to_contain_text("十五天", timeout=60_000)
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)  # done: the input is back
    expect(page.locator(".badge-extractive")).to_be_visible()
    _assert_trust_and_trace_shown(page)

    answer.locator('a.cite[data-index="1"]').first.click()
    card = page.locator('.msg-assistant .source-card[data-index="1"]').last
    expect(card).to_have_class(re.compile(r"\bcited\b.*\bhighlight\b"))
    expect(card).to_contain_text(HANDBOOK_TITLE)
    expect(page.locator(".conv-item.active")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
    page.reload()  # the conversation reopened from its saved answer shows the same
    expect(page.locator(".msg-assistant .answer").last).to_contain_text("十五天", timeout=30_000)
    _assert_trust_and_trace_shown(page, saved=True)
    # the signed-in name is shown whole beside the account links, not cut to its first letter
    assert page.locator(".user-name").evaluate("n => n.scrollWidth <= n.clientWidth")
    assert errors == []


def _assert_trust_and_trace_shown(page, *, saved: bool = False) -> None:
    """The confidence badge and the trace's grade row, read from the event payloads or the saved log (which also
    holds the evidence verdict)."""
    from playwright.sync_api import expect

    badge = page.locator(".msg-assistant .confidence").last
    expect(badge).to_contain_text(re.compile(r"\d+%"))
    trace = page.locator(".msg-assistant .trace-body").last.text_content()
    assert re.search(r"rerank \d\.\d{3}", trace) and "NaN" not in trace, trace
    # The saved log holds the evidence verdict unless the answer came from the answer cache; the verdict names the
    # evidence's estimate apart from the answer's, which is the badge's figure.
    if saved and re.search(r"证据判断|Evidence verdict", trace):
        shown = re.search(r"<?\d+%", badge.text_content()).group(0)
        assert re.search(rf"(?:evidence|证据) <?\d+% · (?:answer|回答) {re.escape(shown)}", trace), (shown, trace)


def test_markup_in_documents_and_questions_never_runs(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    page.fill("#input", "紫色长颈鹿的口令是什么？<img src=y onerror=window.__pwned=3>")
    page.keyboard.press("Enter")
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    expect(page.locator(".msg-assistant .answer").last).to_contain_text("蓝莓")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#messages img, #messages script, #messages b").count() == 0
    expect(page.locator(".source-card").filter(has_text="<b>安全</b>测试").first).to_be_visible()


def test_a_group_of_citations_links_each_of_its_sources(server, browser):
    page = signed_in_chat(browser, server)
    rendered = page.evaluate("""() => {
        const box = document.createElement("div");
        window.DocMindMarkdown.render(box, "甲[1, 2]乙[3、4]丙[5]丁[2024年]", (n) => {
            const a = document.createElement("a");
            a.className = "cite";
            a.dataset.index = String(n);
            a.textContent = "[" + n + "]";
            return a;
        });
        return {links: [...box.querySelectorAll("a.cite")].map((a) => a.dataset.index), text: box.textContent};
    }""")

    assert rendered["links"] == ["1", "2", "3", "4", "5"]
    assert rendered["text"] == "甲[1][2]乙[3][4]丙[5]丁[2024年]"


def test_my_memories_page_lists_edits_and_forgets(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: dialog.accept())
    page.fill("#input", "记住我更喜欢简洁的回答")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant .answer").last).to_contain_text("我记住了", timeout=60_000)

    page.click("text=我的记忆")
    rows = page.locator("#mem-rows tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("我更喜欢简洁的回答")
    expect(rows.first).to_contain_text("偏好")

    page.fill("#mem-add-content", "我在上海工作<img src=x onerror=window.__pwned=9>")
    page.select_option("#mem-add-type", "profile")
    page.click("#mem-add button[type=submit]")
    expect(rows).to_have_count(2)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#mem-rows img").count() == 0

    row_id = rows.filter(has_text="我在上海工作").get_attribute("data-id")
    row = page.locator(f'#mem-rows tr[data-id="{row_id}"]')
    row.locator("button.edit").click()
    row.locator("textarea").fill("我在杭州工作")
    row.locator("button.save").click()
    expect(page.locator("#mem-rows")).to_contain_text("我在杭州工作")

    rows.filter(has_text="我在杭州工作").locator("button.forget").click()
    expect(rows).to_have_count(1)
    page.click("#mem-forget-all")
    expect(page.locator("#mem-empty")).to_be_visible()
    assert errors == []


def test_the_admin_and_the_api_docs_work_under_the_content_security_policy(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 860})
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text)
            if "Content Security Policy" in msg.text else None)
    page.goto(server.url + "/admin/")
    page.fill("input[name=username]", STAFF["username"])
    page.fill("input[name=password]", STAFF["password"])
    page.click("input[type=submit]")
    page.goto(server.url + "/admin/config_admin/sysaiconfig/?category=agentic")
    expect(page.locator("#result_list")).to_contain_text("sandbox.enabled")
    # The navigation sidebar's toggle is wired by the admin's own script: it runs.
    page.click("#toggle-nav-sidebar")
    expect(page.locator("#main")).not_to_have_class("main shifted")
    page.get_by_role("link", name="sandbox.enabled").click()
    expect(page.locator(".field-allowed")).to_contain_text("the sandbox runner is available")
    expect(page.locator("#changes-group")).to_be_visible()  # the history inline
    page.goto(server.url + "/api/docs/")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=20_000)
    assert violations == []


def test_a_follow_up_with_an_ordinal_is_answered_from_the_right_document(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    page.fill("#input", "支付失败排查手册里列了哪几类问题？")
    page.keyboard.press("Enter")
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    page.fill("#input", "第二类呢？")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant")).to_have_count(2, timeout=60_000)
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    second = page.locator(".msg-assistant").last
    expect(second.locator(".answer")).to_contain_text("回调", timeout=10_000)
    expect(second.locator(".badge", has_text="已结合上文")).to_be_visible()
    cited = second.locator(".source-card.cited")
    expect(cited.first).to_contain_text(MANUAL_TITLE)
    # The section is named once on a card, above its text (not quoted in the answer).
    expect(cited.locator(".source-context", has_text="二、扣款无回调").first).to_be_visible()
    assert all(MANUAL_TITLE in text for text in cited.all_inner_texts())


def test_an_editor_adds_an_answer_to_an_evaluation_set_and_a_member_sees_no_such_button(server, browser):
    from playwright.sync_api import expect

    page = browser.new_page(locale="zh-CN", viewport={"width": 1280, "height": 860})
    page.goto(server.url + "/")
    page.fill("input[name=username]", STAFF["username"])
    page.fill("input[name=password]", STAFF["password"])
    page.click("button[type=submit]")
    expect(page.locator("#conn")).to_have_attribute("data-state", "open", timeout=10_000)
    page.fill("#input", QUESTION)
    page.keyboard.press("Enter")
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    answer = page.locator(".msg-assistant").last
    # The list of sets is held back: a submit before it arrives is still the form's own, not a page reload.
    held = []
    page.route("**/api/eval/sets/", lambda route: held.append(route))
    answer.locator(".eval-btn").click()
    form = answer.locator(".eval-form")
    form.locator("input").fill("十五天")
    form.locator("button[type=submit]").click()
    expect(form.locator(".eval-result")).to_contain_text("已添加到", timeout=10_000)
    expect(form.locator(".eval-result")).not_to_have_class("eval-result bad")
    for route in held:
        route.continue_()

    member = signed_in_chat(browser, server)
    member.fill("#input", QUESTION)
    member.keyboard.press("Enter")
    expect(member.locator("#input")).to_be_enabled(timeout=60_000)
    expect(member.locator(".msg-assistant .fb-up").last).to_be_visible()
    expect(member.locator(".eval-btn")).to_have_count(0)


def test_a_cited_card_shows_the_sentence_the_answer_quotes_marked_also_after_a_reload(server, browser):
    from playwright.sync_api import expect

    page = signed_in_chat(browser, server)
    page.fill("#input", "星河公司的报销申请要在多久内提交？")
    page.keyboard.press("Enter")
    expect(page.locator("#input")).to_be_enabled(timeout=60_000)
    sentence = "公司的报销申请需要在费用发生后三十天内提交，超过期限不予报销。"
    expect(page.locator(".msg-assistant .answer").last).to_contain_text("三十天", timeout=30_000)
    for attempt in ("answered", "reloaded"):
        card = page.locator(".msg-assistant").last.locator(".source-card.cited").first
        expect(card.locator(".source-snippet mark.quoted")).to_have_text(sentence)
        # shown from just before the sentence, not from the passage's opening two sentences earlier
        assert card.locator(".source-snippet").inner_text().startswith("…"), attempt
        if attempt == "answered":
            page.reload()
            expect(page.locator(".msg-assistant .answer").last).to_contain_text("三十天", timeout=30_000)
