"""The document admin in headless Chromium: drop files, upload them, watch their progress finish without a reload."""
from __future__ import annotations

import pytest

from tests.browser.chromium import require_chromium
from tests.browser.live_server import LiveServer

pytestmark = pytest.mark.browser

STAFF = {"username": "curator", "password": "curator-pass-123"}
FILES = [
    {"name": "差旅制度.md", "type": "text/markdown",
     "text": "# 差旅制度\n员工出差乘坐高铁二等座，交通费凭票报销。\n## 住宿\n住宿标准按城市分级。"},
    {"name": "onboarding.txt", "type": "text/plain",
     "text": "New employees receive a laptop on their first day and meet their mentor in the first week."},
    # Accepted at upload (a .pdf, not empty) but not a PDF inside: ingestion fails and the row must say why.
    {"name": "scan.pdf", "type": "application/pdf", "text": "this is not really a PDF"},
]


def _server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("admin-browser-data"))
    live.prepare(staff=STAFF, template=migrated_data_dir)
    live.start()
    yield live
    live.stop()


# One server per test: each counts the documents on the list page, so neither may see the other's uploads,
# whichever order they run in.
@pytest.fixture
def server(tmp_path_factory, migrated_data_dir):
    yield from _server(tmp_path_factory, migrated_data_dir)


@pytest.fixture
def folder_server(tmp_path_factory, migrated_data_dir):
    yield from _server(tmp_path_factory, migrated_data_dir)


def test_dropped_files_upload_and_their_progress_finishes_without_a_reload(server, browser, tmp_path):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.url + "/admin/login/?next=/admin/kb/document/")
    page.fill("#id_username", STAFF["username"])
    page.fill("#id_password", STAFF["password"])
    page.click("input[type=submit]")
    page.wait_for_selector("#dm-dropzone[data-ready]")  # its script has wired it

    # A real drop event carrying the files, as the browser fires it when files are dragged in.
    page.evaluate("""files => {
        const transfer = new DataTransfer();
        for (const f of files) transfer.items.add(new File([f.text], f.name, {type: f.type}));
        const zone = document.getElementById("dm-dropzone");
        const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
        zone.dispatchEvent(new DragEvent("dragover", init));
        zone.dispatchEvent(new DragEvent("drop", init));
    }""", FILES)
    expect(page.locator("#dm-upload-list li")).to_have_count(3)
    page.fill("#dm-upload-domain", "hr")
    page.click("#dm-upload input[type=submit]")

    expect(page.locator(".messagelist")).to_contain_text("Accepted 3 file(s) for indexing")
    expect(page.locator(".messagelist")).not_to_contain_text("成功")
    rows = page.locator(".dm-ingest")
    expect(rows).to_have_count(3)
    expect(page.locator('.dm-ingest[data-status="pending"]')).to_have_count(3)
    page.evaluate("window.__samePage = true")

    # The server comes back with its ingestion worker on; the open page keeps polling through the restart.
    server.stop()
    server.ingest_worker = True
    server.start()

    expect(page.locator('.dm-ingest[data-status="ready"]')).to_have_count(2, timeout=120_000)
    failed = page.locator('.dm-ingest[data-status="failed"]')
    expect(failed).to_have_count(1, timeout=60_000)
    expect(failed.locator(".dm-error")).not_to_be_empty()
    for index in range(2):
        ready = page.locator('.dm-ingest[data-status="ready"]').nth(index)
        expect(ready.locator(".dm-bar")).to_have_js_property("value", 100)
    assert page.evaluate("window.__samePage") is True  # no reload happened
    page.screenshot(path=str(tmp_path / "admin-documents.png"), full_page=True)
    assert errors == []


def test_a_chosen_folder_uploads_with_its_paths_in_the_titles(folder_server, browser, tmp_path):
    from playwright.sync_api import expect

    folder = tmp_path / "政策"
    (folder / "hr").mkdir(parents=True)
    (folder / "hr" / "年假.md").write_text("# 年假\n员工每年十五天年假，可分次休。", encoding="utf-8")
    (folder / "expenses.txt").write_text("Expenses are approved by the manager, then paid by finance.")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(folder_server.url + "/admin/login/?next=/admin/kb/document/upload/")
    page.fill("#id_username", STAFF["username"])
    page.fill("#id_password", STAFF["password"])
    page.click("input[type=submit]")
    page.wait_for_selector("#dm-dropzone[data-ready]")  # its script has wired the inputs
    page.set_input_files("#dm-upload-folder", str(folder))
    expect(page.locator("#dm-upload-list li")).to_have_count(2)
    expect(page.locator("#dm-upload-list")).to_contain_text("政策/hr/年假.md")
    page.click("#dm-upload input[type=submit]")
    message = page.locator(".messagelist")
    expect(message).to_contain_text("Accepted 2 file(s) for indexing")
    expect(message).to_contain_text("政策/hr/年假")
    expect(message).to_contain_text("政策/expenses")
    assert errors == []
