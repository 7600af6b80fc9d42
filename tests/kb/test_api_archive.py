"""POST /api/kb/documents/archive/: one document per file of a zip, refusals listed, bad archives a 400."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb import services
from kb.archives import unsupported_type
from kb.ingestion.parsers import SUPPORTED_TYPES
from kb.models import Document, DocumentStatus
from tests.kb.zips import make_zip, with_raw_name

# Their refusals are asserted in English.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

URL = "/api/kb/documents/archive/"


def post_zip(client, archive: bytes, name="docs.zip", **extra):
    return client.post(URL, {"file": SimpleUploadedFile(name, archive), **extra}, format="multipart")


def test_a_mixed_archive_queues_its_documents_and_lists_each_refusal(editor_client, kb_index):
    archive = make_zip({"hr/假期/年假.md": "# 年假\n员工每年十五天年假。".encode(),
                        "faq.txt": "报销：经理审批。".encode(), "copy.txt": "报销：经理审批。".encode(),
                        "tool.exe": b"MZ", "blank.txt": b"",
                        "../escape.txt": b"outside", "inner.zip": make_zip({"a.txt": b"a"})})
    response = post_zip(editor_client, archive, domain="hr")
    assert response.status_code == 202
    body = response.json()
    accepted = {item["path"]: item["document"] for item in body["accepted"]}
    assert set(accepted) == {"hr/假期/年假.md", "faq.txt"}
    assert accepted["hr/假期/年假.md"]["title"] == "hr/假期/年假"
    assert {d["status"] for d in accepted.values()} == {"pending"} and accepted["faq.txt"]["domain"] == "hr"
    refused = {item["path"]: item for item in body["refused"]}
    assert {path: item["code"] for path, item in refused.items()} == {
        "copy.txt": "duplicate", "tool.exe": "unsupported", "blank.txt": "empty", "../escape.txt": "unsafe_path",
        "inner.zip": "nested_archive"}
    assert refused["copy.txt"]["document"] == accepted["faq.txt"]["id"]
    assert "unsupported file type .exe" in refused["tool.exe"]["reason"]
    # The types are listed as a single file's refusal lists them.
    assert refused["tool.exe"]["reason"] == unsupported_type("exe", SUPPORTED_TYPES)
    assert Document.objects.count() == 2


def test_a_failed_document_uploaded_again_in_an_archive_is_listed_as_queued(editor_client, kb_index):
    archive = make_zip({"broken.txt": "报销：经理审批。".encode(), "ready.txt": "年假：十五天。".encode()})
    first = post_zip(editor_client, archive).json()
    ids = {item["path"]: item["document"]["id"] for item in first["accepted"]}
    Document.objects.filter(pk=ids["broken.txt"]).update(status=DocumentStatus.FAILED, error="parse failed")
    Document.objects.filter(pk=ids["ready.txt"]).update(status=DocumentStatus.READY)

    body = post_zip(editor_client, archive).json()

    assert [(item["path"], item["document"]["id"], item["document"]["status"]) for item in body["accepted"]] == [
        ("broken.txt", ids["broken.txt"], "pending")]
    assert [(item["path"], item["code"], item["document"]) for item in body["refused"]] == [
        ("ready.txt", "duplicate", ids["ready.txt"])]


def test_an_entry_over_the_upload_limit_is_refused_alone(editor_client, kb_index, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    body = post_zip(editor_client, make_zip({"big.txt": b"word " * 300, "small.txt": b"a short text"})).json()
    assert [item["path"] for item in body["accepted"]] == ["small.txt"]
    assert [(item["path"], item["code"]) for item in body["refused"]] == [("big.txt", "too_large")]


def test_gbk_names_from_chinese_windows_become_readable_titles(editor_client, kb_index):
    raw = "报销制度.txt".encode("gbk")
    placeholder = "N" * (len(raw) - 4) + ".txt"
    archive = with_raw_name(make_zip({placeholder: "报销制度正文。".encode()}), placeholder, raw)
    body = post_zip(editor_client, archive).json()
    assert [item["document"]["title"] for item in body["accepted"]] == ["报销制度"]


@pytest.mark.parametrize(("limits", "archive", "message", "code"), [
    ({"MAX_ARCHIVE_ENTRIES": 2}, make_zip({"a.txt": b"a", "b.txt": b"b", "c.txt": b"c"}), "3 entries",
     "too_many_entries"),
    ({"MAX_ARCHIVE_UNPACKED_BYTES": 50_000}, make_zip({"a.txt": b"0" * 30_000, "b.txt": b"1" * 30_000}),
     "unpacks to", "too_large"),
    ({"MAX_UPLOAD_BYTES": 100}, make_zip({"a.txt": b"some text " * 40}, ), "the archive is", "too_large"),
    ({}, b"PK\x03\x04 this is not really a zip", "not a readable zip", "unreadable"),
])
def test_an_archive_past_a_bound_or_corrupt_is_a_400_and_stores_nothing(editor_client, kb_index, settings,
                                                                          tmp_path, limits, archive, message, code):
    for name, value in limits.items():
        setattr(settings, name, value)
    response = post_zip(editor_client, archive)
    assert response.status_code == 400
    assert message in response.json()["error"] and response.json()["code"] == code
    assert not Document.objects.exists()
    assert not any(path.is_file() for path in (tmp_path / "media").rglob("*"))


def test_a_damaged_entry_after_good_ones_stores_nothing(editor_client, kb_index):
    archive = bytearray(make_zip({"a.txt": b"first document " * 20, "b.txt": b"second document " * 20}))
    second = archive.find(b"PK\x03\x04", 4)
    archive[second + 30 + len("b.txt") + 5] ^= 0xFF
    response = post_zip(editor_client, bytes(archive))
    assert response.status_code == 400 and "damaged" in response.json()["error"]
    assert response.json()["code"] == "damaged"
    assert not Document.objects.exists()


def test_uploading_an_archive_needs_edit_access_to_the_base(member_client, editor_client, kb_editor, kb_index):
    archive = make_zip({"a.txt": b"some text"})
    assert post_zip(member_client, archive).status_code == 403
    hidden = services.kb_create(name="hidden")
    assert post_zip(editor_client, archive, kb=hidden.pk).status_code == 404
    assert not Document.objects.exists()


def test_a_client_asking_for_chinese_reads_each_refusal_in_chinese_under_the_same_code(editor_client, kb_index):
    archive = make_zip({"tool.exe": b"MZ", "blank.txt": b"", "inner.zip": make_zip({"a.txt": b"a"}),
                        "a.txt": "报销：经理审批。".encode(), "copy.txt": "报销：经理审批。".encode()})
    response = editor_client.post(URL, {"file": SimpleUploadedFile("docs.zip", archive)}, format="multipart",
                                  HTTP_ACCEPT_LANGUAGE="zh-hans")
    refused = {item["path"]: (item["code"], item["reason"]) for item in response.json()["refused"]}
    assert refused["copy.txt"] == ("duplicate", "相同内容已以“a”存入本知识库")
    assert refused["tool.exe"][0] == "unsupported" and refused["tool.exe"][1].startswith("不支持 .exe 类型的文件")
    assert refused["blank.txt"] == ("empty", "文件为空")
    assert refused["inner.zip"] == ("nested_archive", "压缩包内嵌套的压缩包，请单独上传")


def test_a_request_without_a_file_is_told_so_in_its_language(editor_client):
    chinese = editor_client.post(URL, {}, format="multipart", HTTP_ACCEPT_LANGUAGE="zh-hans")
    english = editor_client.post(URL, {}, format="multipart", HTTP_ACCEPT_LANGUAGE="en")
    assert chinese.status_code == english.status_code == 400
    assert "请提供文件" in str(chinese.json()) and "a file is required" in str(english.json())
