"""The admin's upload of zip archives and folders: the same services as the API, every refusal reported."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb.access import kb_default
from kb.models import Document, DocumentStatus
from tests.kb.zips import make_zip

# The messages are asserted in English: the default language is Chinese (zh-hans has its own test).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

UPLOAD_URL = "/admin/kb/document/upload/"


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_a_zip_dropped_in_the_admin_becomes_its_documents_and_its_refusals_are_named(client, admin_user, kb_index):
    client.force_login(admin_user)
    archive = make_zip({"政策/报销.md": "# 报销\n经理审批。".encode(), "tool.exe": b"MZ"})
    response = client.post(UPLOAD_URL, {"files": [SimpleUploadedFile("policies.zip", archive)], "domain": "team"},
                           follow=True)
    assert list(Document.objects.values_list("title", "domain")) == [("政策/报销", "team")]
    messages = _messages(response)
    assert any("Accepted 1 file(s)" in m for m in messages)
    assert any(m.startswith("“policies.zip: tool.exe” was not accepted: unsupported file type") for m in messages)


def test_a_corrupt_zip_is_reported_and_the_other_files_still_upload(client, admin_user, kb_index):
    client.force_login(admin_user)
    files = [SimpleUploadedFile("broken.zip", b"PK\x03\x04 not a zip"), SimpleUploadedFile("a.txt", "正文。".encode())]
    response = client.post(UPLOAD_URL, {"files": files, "domain": "team"}, follow=True)
    assert list(Document.objects.values_list("title", flat=True)) == ["a"]
    refusal = "“broken.zip” was not accepted: the file is not a readable zip"
    assert any(m.startswith(refusal) for m in _messages(response))


def test_a_failed_document_dropped_again_is_reported_as_accepted_and_a_stored_one_as_already_uploaded(
        client, admin_user, kb_index):
    client.force_login(admin_user)
    texts = {"failed.txt": "报销：经理审批。".encode(), "stored.txt": "年假：十五天。".encode()}
    client.post(UPLOAD_URL, {"files": [SimpleUploadedFile(n, t) for n, t in texts.items()], "domain": "team"})
    Document.objects.filter(title="failed").update(status=DocumentStatus.FAILED, error="parse failed")

    response = client.post(UPLOAD_URL, {"files": [SimpleUploadedFile(n, t) for n, t in texts.items()],
                                        "domain": "team"}, follow=True)

    assert Document.objects.get(title="failed").status == DocumentStatus.PENDING
    messages = _messages(response)
    assert "Accepted 1 file(s) for indexing: failed." in " ".join(messages)
    assert "Already uploaded, not stored again: stored." in messages


def test_a_folders_files_keep_their_paths_in_the_titles(client, admin_user, kb_index):
    client.force_login(admin_user)
    files = [SimpleUploadedFile("leave.md", "# 年假\n十五天。".encode()),
             SimpleUploadedFile("a.txt", "正文。".encode())]
    client.post(UPLOAD_URL, {"files": files, "domain": "team", "paths": json.dumps(["hr/假期/leave.md", "a.txt"])})
    assert sorted(Document.objects.values_list("title", flat=True)) == ["a", "hr/假期/leave"]


def test_unreadable_folder_paths_ask_again_and_store_nothing(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = client.post(UPLOAD_URL, {"files": [SimpleUploadedFile("a.txt", b"text")], "domain": "team",
                                        "paths": "{not json"})
    assert response.status_code == 200 and response.context["upload_form"].errors["paths"]
    assert not Document.objects.exists()


def test_the_upload_zone_offers_a_folder_and_names_the_archive_bounds(client, admin_user, kb_index, settings):
    settings.MAX_ARCHIVE_ENTRIES = 321
    client.force_login(admin_user)
    page = client.get(UPLOAD_URL).content.decode()
    assert 'id="dm-upload-folder" webkitdirectory' in page and 'id="dm-upload-paths"' in page
    assert "at most 321 entries" in page


def test_an_upload_leads_to_its_own_progress_view_with_counts_per_status(client, admin_user, kb_index):
    client.force_login(admin_user)
    Document.objects.create(title="older", checksum="c" * 64, kb=kb_default(), file_type="txt")
    files = [SimpleUploadedFile(f"note-{i}.txt", f"第{i}条：说明。".encode()) for i in range(12)]

    response = client.post(UPLOAD_URL, {"files": files, "domain": "team"})

    assert response.status_code == 302 and "?upload=" in response["Location"]
    page = client.get(response["Location"])
    listed = {document.title for document in page.context["cl"].result_list}
    assert listed == {f"note-{i}" for i in range(12)}  # not the older document
    Document.objects.filter(title="note-0").update(status=DocumentStatus.FAILED, error="parse failed")
    Document.objects.filter(title__in=["note-1", "note-2"]).update(status=DocumentStatus.READY)
    token = response["Location"].split("upload=")[1]
    progress = client.get("/admin/kb/document/progress/", {"ids": "", "upload": token}).json()
    assert progress["upload"] == {"total": 12, "pending": 9, "processing": 0, "ready": 2, "failed": 1}
    # the success message names ten titles and counts the rest
    assert any("and 2 more" in m for m in _messages(page))


def test_an_upload_token_of_another_session_shows_nothing_of_it(client, admin_user, kb_index, django_user_model):
    client.force_login(admin_user)
    response = client.post(UPLOAD_URL, {"files": [SimpleUploadedFile("a.txt", "正文。".encode())], "domain": "team"})
    token = response["Location"].split("upload=")[1]
    other = django_user_model.objects.create_superuser("other-admin", "o@example.com", "pass-12345-word")
    client.force_login(other)  # a new session

    page = client.get(f"/admin/kb/document/?upload={token}")

    assert list(page.context["cl"].result_list) == []
    assert page.context["upload_summary"] is None
    assert "upload" not in client.get("/admin/kb/document/progress/", {"ids": "", "upload": token}).json()


def test_under_the_chinese_admin_a_refusal_says_why_in_chinese(client, admin_user, kb_index):
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    client.force_login(admin_user)
    files = [SimpleUploadedFile("notes.rtf", b"{\\rtf1}"), SimpleUploadedFile("blank.txt", b""),
             SimpleUploadedFile("broken.zip", b"PK\x03\x04 not a zip")]
    messages = _messages(client.post(UPLOAD_URL, {"files": files, "domain": "team"}, follow=True))
    assert "“notes.rtf”未被接收：不支持 .rtf 类型的文件；支持的类型：.txt" in " ".join(messages)
    assert "“blank.txt”未被接收：文件为空" in messages
    assert "“broken.zip”未被接收：该文件不是可读取的 zip 压缩包" in messages
