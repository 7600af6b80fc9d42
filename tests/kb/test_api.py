"""Documents API: 202 upload then ready, permissions, 400s for bad files, 404s."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from docmind.pagination import Pagination
from kb.ingestion.worker import process_pending_documents
from kb.models import Document

# Their refusals are asserted in English.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

URL = "/api/kb/documents/"
TEXT = "报销流程：员工提交发票，经理审批，财务付款。".encode()


def upload(client, name="报销.txt", data=TEXT, **extra):
    return client.post(URL, {"file": SimpleUploadedFile(name, data), **extra}, format="multipart")


def test_upload_answers_202_then_the_document_becomes_ready(editor_client, kb_index):
    response = upload(editor_client, domain="finance")
    assert response.status_code == 202
    body = response.json()
    assert (body["status"], body["domain"], body["title"]) == ("pending", "finance", "报销")
    process_pending_documents()
    detail = editor_client.get(f"{URL}{body['id']}/").json()
    assert detail["status"] == "ready" and detail["progress"] == 100 and detail["chunk_count"] >= 1


def test_the_upload_answer_is_the_document_as_stored(editor_client, kb_index):
    body = upload(editor_client, domain="finance").json()
    assert body == editor_client.get(f"{URL}{body['id']}/").json()
    assert body["chunk_count"] == 0 and body["uploaded_by"]


def test_each_upload_of_a_folder_asks_the_database_a_bounded_number_of_times(editor_client, kb_index,
                                                                              django_assert_max_num_queries):
    upload(editor_client, name="第一篇.txt", domain="finance")  # the domain's row exists from here on
    with django_assert_max_num_queries(12):
        response = upload(editor_client, name="第二篇.txt", data="另一份文件的内容。".encode(), domain="finance")
    assert response.status_code == 202


def test_the_same_file_again_answers_200_with_the_existing_document(editor_client, kb_index):
    first = upload(editor_client).json()
    again = upload(editor_client, name="copy.txt")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"]


def test_members_read_but_cannot_upload(member_client, editor_client, kb_index):
    upload(editor_client)
    assert upload(member_client, name="m.txt", data=b"other text").status_code == 403
    listing = member_client.get(URL)
    assert listing.status_code == 200
    assert listing.json()["count"] == 1


@pytest.mark.parametrize(("name", "data", "message", "code"), [
    ("empty.txt", b"", "empty", "empty"),
    ("tool.exe", b"MZ\x90\x00", "unsupported", "unsupported"),
])
def test_bad_files_get_400_with_a_message_and_a_code(editor_client, kb_index, name, data, message, code):
    response = upload(editor_client, name=name, data=data)
    assert response.status_code == 400
    assert message in response.json()["error"] and response.json()["code"] == code
    assert not Document.objects.exists()


def test_a_missing_file_gets_400(editor_client, kb_index):
    assert editor_client.post(URL, {"domain": "x"}, format="multipart").status_code == 400


def test_list_filters_by_domain_and_status(editor_client, kb_index):
    upload(editor_client, domain="finance")
    upload(editor_client, name="b.txt", data=b"another document text", domain="hr")
    assert editor_client.get(URL, {"domain": "hr"}).json()["count"] == 1
    assert editor_client.get(URL, {"status": "ready"}).json()["count"] == 0
    # An unknown status is a mistake to name, not a filter that quietly matches nothing.
    bogus = editor_client.get(URL, {"status": "bogus"})
    assert bogus.status_code == 400 and "status" in bogus.json()["fields"]


def test_a_list_page_holds_page_size_rows_within_its_bound(editor_client, kb_index, monkeypatch):
    for i in range(3):
        upload(editor_client, name=f"p{i}.txt", data=f"page size document {i}".encode())
    first = editor_client.get(URL, {"page_size": 2}).json()
    assert (first["count"], len(first["results"])) == (3, 2) and "page=2" in first["next"]
    assert len(editor_client.get(first["next"]).json()["results"]) == 1
    monkeypatch.setattr(Pagination, "max_page_size", 2)
    assert len(editor_client.get(URL, {"page_size": 1000}).json()["results"]) == 2  # the bound, not an error
    for bad in ("many", "0", "-1"):
        refused = editor_client.get(URL, {"page_size": bad})
        assert refused.status_code == 400 and "page_size" in refused.json()["fields"]


def test_unknown_ids_get_404(editor_client, kb_index):
    assert editor_client.get(f"{URL}999999/").status_code == 404
    assert editor_client.delete(f"{URL}999999/").status_code == 404


def test_delete_answers_204_and_members_cannot_delete(editor_client, member_client, kb_index):
    document_id = upload(editor_client).json()["id"]
    assert member_client.delete(f"{URL}{document_id}/").status_code == 403
    assert editor_client.delete(f"{URL}{document_id}/").status_code == 204
    assert not Document.objects.exists()


def _ready_document(client) -> int:
    document_id = upload(client).json()["id"]
    process_pending_documents()
    return document_id


def test_an_editor_moves_a_document_to_another_base_and_domain(editor_client, kb_editor, kb_index):
    from kb.services import kb_create

    document_id = _ready_document(editor_client)
    target = kb_create(name="财务库", owner=kb_editor)
    response = editor_client.patch(f"{URL}{document_id}/", {"kb": target.pk, "domain": "finance"}, format="json")
    assert response.status_code == 200
    assert (response.json()["kb"], response.json()["domain"]) == (target.pk, "finance")
    assert Document.objects.filter(pk=document_id, kb=target, domain="finance").exists()


def test_a_move_needs_edit_access_to_both_bases_and_a_target(editor_client, member_client, kb_index):
    from kb.services import kb_create

    document_id = _ready_document(editor_client)
    unreadable = kb_create(name="别人的库")  # no grant: the editor cannot even read it
    assert member_client.patch(f"{URL}{document_id}/", {"domain": "x"}, format="json").status_code == 403
    assert editor_client.patch(f"{URL}{document_id}/", {"kb": unreadable.pk}, format="json").status_code == 404
    assert editor_client.patch(f"{URL}{document_id}/", {}, format="json").status_code == 400
    mine = kb_create(name="我的库", owner=Document.objects.get(pk=document_id).uploaded_by)
    bad_domain = editor_client.patch(f"{URL}{document_id}/", {"kb": mine.pk, "domain": "bad one!"}, format="json")
    assert bad_domain.status_code == 400 and "domain" in bad_domain.json()["error"]
    assert Document.objects.get(pk=document_id).kb_id not in (unreadable.pk, mine.pk)  # a refusal moves nothing


def test_an_editor_who_only_reads_a_base_may_not_move_or_delete_its_documents(editor_client, kb_editor,
                                                                                admin_client_api, kb_index):
    from kb.models import KbAccess
    from kb.services import kb_create, kb_grant

    other = kb_create(name="只读库")
    kb_grant(kb=other, user=kb_editor, access=KbAccess.READ)
    document_id = upload(admin_client_api, kb=other.pk).json()["id"]
    assert editor_client.get(f"{URL}{document_id}/").status_code == 200
    # Each refusal names what was refused.
    moved = editor_client.patch(f"{URL}{document_id}/", {"domain": "x"}, format="json", HTTP_ACCEPT_LANGUAGE="en")
    assert moved.status_code == 403 and moved.json()["error"].startswith("Moving documents")
    deleted = editor_client.delete(f"{URL}{document_id}/", HTTP_ACCEPT_LANGUAGE="en")
    assert deleted.status_code == 403 and deleted.json()["error"].startswith("Deleting from")
    assert Document.objects.filter(pk=document_id, kb=other).exclude(domain="x").exists()
