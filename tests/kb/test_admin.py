"""Uploading through the admin add form goes through document_create's validation."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb.models import Document, DocumentStatus

# The messages are asserted in English: the default language is Chinese (zh-hans has its own test).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

ADD_URL = "/admin/kb/document/add/"


def _upload(client, name: str, content: bytes, **fields):
    return client.post(ADD_URL, {"file": SimpleUploadedFile(name, content), "title": "", "domain": "general",
                                 **fields})


def test_an_empty_file_is_refused_with_a_message(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "empty.md", b"")
    assert response.status_code == 200  # the form is shown again with its error
    assert response.context["adminform"].form.errors.as_data()["file"][0].code == "empty"
    assert not Document.objects.exists()


def test_an_unsupported_file_type_is_refused_with_the_services_message(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "tool.exe", b"MZ not a document")
    assert response.status_code == 200
    assert "unsupported file type" in response.content.decode()
    assert not Document.objects.exists()


def test_a_markdown_file_creates_a_pending_document(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "guide.md", "# 指南\n知识库支持 Markdown 文档。".encode(), title="指南")
    assert response.status_code == 302
    document = Document.objects.get()
    assert (document.title, document.domain, document.status) == ("指南", "general", DocumentStatus.PENDING)
    assert document.uploaded_by == admin_user


CHANGELIST = "/admin/kb/document/"
UPLOAD_URL = "/admin/kb/document/upload/"
PROGRESS_URL = "/admin/kb/document/progress/"


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_an_upload_is_announced_as_queued_not_as_added(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = client.post(ADD_URL, {"file": SimpleUploadedFile("guide.md", "# 指南\n正文。".encode()),
                                     "title": "指南", "domain": "general"}, follow=True)
    assert response.redirect_chain[-1][0] == CHANGELIST
    [message] = _messages(response)
    assert "accepted for indexing" in message
    assert "成功" not in message and "successfully" not in message


def test_several_files_upload_at_once_and_a_bad_one_is_reported_by_name(client, admin_user, kb_index):
    client.force_login(admin_user)
    files = [SimpleUploadedFile("a.md", "# 甲\n第一篇。".encode()), SimpleUploadedFile("b.txt", "第二篇。".encode()),
             SimpleUploadedFile("tool.exe", b"MZ"), SimpleUploadedFile("empty.txt", b"")]
    response = client.post(UPLOAD_URL, {"files": files, "domain": "team"}, follow=True)
    assert response.redirect_chain[-1][0].startswith(f"{CHANGELIST}?upload=")  # the upload's own progress view
    assert sorted(Document.objects.values_list("title", "domain", "status")) == [
        ("a", "team", DocumentStatus.PENDING), ("b", "team", DocumentStatus.PENDING)]
    messages = _messages(response)
    assert any("Accepted 2 file(s)" in m for m in messages)
    assert any(m.startswith("“tool.exe” was not accepted: unsupported file type") for m in messages)
    assert any(m.startswith("“empty.txt” was not accepted: the file is empty") for m in messages)
    # as the page shows it: the admin capitalises a message's first letter, and a file's name keeps its case
    assert "“empty.txt” was not accepted" in response.content.decode()


def test_the_upload_page_asks_again_when_no_file_was_chosen(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = client.post(UPLOAD_URL, {"domain": "team"})
    assert response.status_code == 200 and response.context["upload_form"].errors["files"]
    assert not Document.objects.exists()


def test_the_changelist_shows_a_progress_bar_with_the_failure_reason(client, admin_user, kb_index):
    client.force_login(admin_user)
    Document.objects.create(title="坏文件", file_type="pdf", checksum="x", status=DocumentStatus.FAILED, progress=10,
                            error="the PDF has no text layer")
    body = client.get(CHANGELIST).content.decode()
    assert 'data-status="failed"' in body and "the PDF has no text layer" in body
    assert 'id="dm-dropzone"' in body and "admin-progress.js" in body


def test_progress_reports_status_progress_and_error_for_the_asked_documents(client, kb_editor, kb_index):
    client.force_login(kb_editor)
    a = Document.objects.create(title="a", file_type="txt", checksum="a", status=DocumentStatus.PROCESSING,
                                progress=30)
    b = Document.objects.create(title="b", file_type="txt", checksum="b", status=DocumentStatus.FAILED, error="bad")
    Document.objects.create(title="c", file_type="txt", checksum="c")
    data = client.get(PROGRESS_URL, {"ids": f"{a.pk},{b.pk},nonsense"}).json()["documents"]
    assert sorted((d["id"], d["status"], d["progress"], d["error"]) for d in data) == [
        (a.pk, "processing", 30, ""), (b.pk, "failed", 0, "bad")]


def test_progress_is_for_staff_only(client, member, kb_index):
    client.force_login(member)
    response = client.get(PROGRESS_URL, {"ids": "1"})
    assert response.status_code == 302 and "/login/" in response["Location"]


def _act(client, action: str, documents, **extra):
    return client.post(CHANGELIST, {"action": action, "_selected_action": [d.pk for d in documents], **extra},
                       follow=True)


def test_the_retry_action_queues_failed_documents_and_skips_the_rest(client, admin_user, kb_index):
    client.force_login(admin_user)
    failed = Document.objects.create(title="f", file_type="txt", checksum="f", status=DocumentStatus.FAILED,
                                     error="boom", attempts=3)
    ready = Document.objects.create(title="r", file_type="txt", checksum="r", status=DocumentStatus.READY)
    messages = _messages(_act(client, "retry_ingestion", [failed, ready]))
    failed.refresh_from_db()
    ready.refresh_from_db()
    assert (failed.status, failed.error, ready.status) == (DocumentStatus.PENDING, "", DocumentStatus.READY)
    assert any("1 document queued" in m for m in messages) and any("1 skipped" in m for m in messages)


def test_the_reindex_action_queues_ready_documents(client, admin_user, kb_index):
    client.force_login(admin_user)
    ready = Document.objects.create(title="r", file_type="txt", checksum="r", status=DocumentStatus.READY,
                                    progress=100)
    _act(client, "reindex", [ready])
    ready.refresh_from_db()
    assert (ready.status, ready.progress) == (DocumentStatus.PENDING, 0)


def test_the_move_action_needs_a_target_domain_and_moves_documents(client, admin_user, kb_index):
    client.force_login(admin_user)
    doc = Document.objects.create(title="r", file_type="txt", checksum="r", domain="hr", status=DocumentStatus.PENDING)
    assert any("target domain" in m for m in _messages(_act(client, "move_to_domain", [doc], domain="")))
    assert Document.objects.get(pk=doc.pk).domain == "hr"
    messages = _messages(_act(client, "move_to_domain", [doc], domain="travel"))
    assert Document.objects.get(pk=doc.pk).domain == "travel"
    assert any("moved to travel" in m for m in messages)
    assert any("domain must be" in m for m in _messages(_act(client, "move_to_domain", [doc], domain="bad one!")))


def test_the_move_to_base_action_takes_an_editable_base_by_name(client, kb_editor, kb_index):
    from kb.access import kb_default
    from kb.services import kb_create

    client.force_login(kb_editor)
    doc = Document.objects.create(title="r", file_type="txt", checksum="r", kb=kb_default(),
                                  status=DocumentStatus.PENDING)
    mine, others = kb_create(name="我的库", owner=kb_editor), kb_create(name="别人的库")
    assert "我的库" in client.get(CHANGELIST).content.decode()  # suggested next to the action
    assert "别人的库" not in client.get(CHANGELIST).content.decode()
    for name in ("", "别人的库", "不存在"):
        refused = _messages(_act(client, "move_to_kb", [doc], target_kb=name))
        assert any("knowledge base you may edit" in m for m in refused)
        assert Document.objects.get(pk=doc.pk).kb_id == kb_default().pk
    messages = _messages(_act(client, "move_to_kb", [doc], target_kb="我的库"))
    assert Document.objects.get(pk=doc.pk).kb_id == mine.pk and others.pk != mine.pk
    assert any("moved to 我的库" in m for m in messages)


def test_uploading_the_same_file_again_says_so_instead_of_announcing_a_new_document(client, admin_user, kb_index):
    client.force_login(admin_user)
    for _ in range(2):
        response = client.post(ADD_URL, {"file": SimpleUploadedFile("guide.md", "# 指南\n正文。".encode()),
                                         "title": "", "domain": "general"}, follow=True)
    assert Document.objects.count() == 1
    assert "already uploaded" in _messages(response)[0]


def test_the_document_page_shows_the_live_progress_bar(client, admin_user, kb_index):
    client.force_login(admin_user)
    doc = Document.objects.create(title="a", file_type="txt", checksum="a", status=DocumentStatus.PROCESSING,
                                  progress=30)
    body = client.get(f"/admin/kb/document/{doc.pk}/change/").content.decode()
    assert f'data-document-id="{doc.pk}" data-status="processing"' in body and "admin-progress.js" in body


def test_the_upload_message_is_in_chinese_for_a_chinese_browser(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = client.post(ADD_URL, {"file": SimpleUploadedFile("guide.md", "# 指南\n正文。".encode()),
                                     "title": "指南", "domain": "general"}, follow=True,
                           HTTP_ACCEPT_LANGUAGE="zh-CN")
    [message] = _messages(response)
    assert message == "“指南” 已接收，正在建立索引，进度见下方列表。"


def test_the_progress_bar_needs_no_inline_style_which_the_csp_forbids(client, admin_user, kb_index):
    client.force_login(admin_user)
    Document.objects.create(title="b", file_type="txt", checksum="b", status=DocumentStatus.PROCESSING, progress=30)
    response = client.get(CHANGELIST)
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    body = response.content.decode()
    assert '<progress class="dm-bar" max="100" value="30"></progress>' in body
    assert "style=" not in body.split('id="result_list"', 1)[1]


def test_the_document_page_edits_nothing_and_shows_status_and_progress_read_only(client, admin_user, kb_index):
    client.force_login(admin_user)
    doc = Document.objects.create(title="a", file_type="txt", checksum="a", status=DocumentStatus.FAILED,
                                  progress=40, error="the PDF has no text layer")
    url = f"/admin/kb/document/{doc.pk}/change/"
    response = client.get(url)
    assert list(response.context["adminform"].form.fields) == []
    body = response.content.decode()
    assert 'name="status"' not in body and 'name="progress"' not in body and 'name="error"' not in body
    assert 'data-status="failed"' in body and "the PDF has no text layer" in body
    client.post(url, {"status": DocumentStatus.READY, "progress": 100, "error": ""})
    doc.refresh_from_db()
    assert (doc.status, doc.progress, doc.error) == (DocumentStatus.FAILED, 40, "the PDF has no text layer")


def test_a_description_written_in_the_domain_admin_keeps_the_domain_when_it_empties(client, admin_user, kb_index):
    from kb.models import KnowledgeDomain
    from kb.services import document_delete, document_ingest_text

    document, _ = document_ingest_text(title="甲", text="正文。", domain="policy")
    row = KnowledgeDomain.objects.get(domain_id="policy")
    assert row.created_automatically
    client.force_login(admin_user)
    response = client.post(f"/admin/kb/knowledgedomain/{row.pk}/change/",
                           {"domain_id": "policy", "description": "公司制度", "when_to_retrieve": ""})
    assert response.status_code == 302
    document_delete(document=document)
    row.refresh_from_db()
    assert (row.created_automatically, row.description, row.document_count) == (False, "公司制度", 0)
