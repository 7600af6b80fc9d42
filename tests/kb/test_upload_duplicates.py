"""Uploading a file that is already stored: found only where the uploader can read, so an upload tells
nothing about a base the uploader cannot read."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb import services
from kb.models import Document, KbAccess

pytestmark = pytest.mark.django_db

URL = "/api/kb/documents/"
TEXT = "董事会纪要：第三季度裁员名单已确定。".encode()


def upload(client, kb, name="纪要.txt"):
    return client.post(URL, {"file": SimpleUploadedFile(name, TEXT), "kb": kb.pk}, format="multipart")


@pytest.fixture
def bases(kb_editor, kb_index):
    board = services.kb_create(name="Board")  # the editor has no grant on it
    services.document_ingest_text(title="纪要", text=TEXT.decode(), filename="纪要.txt", kb=board)
    mine = services.kb_create(name="Mine", owner=kb_editor)
    return board, mine


def test_a_file_stored_only_in_an_unreadable_base_is_stored_again_without_a_word_about_it(editor_client, bases):
    board, mine = bases
    response = upload(editor_client, mine)
    assert response.status_code == 202, response.json()
    assert "Board" not in str(response.json()) and "another" not in str(response.json())
    assert Document.objects.filter(kb=mine, checksum=Document.objects.get(kb=board).checksum).exists()


def test_the_same_file_in_the_same_base_answers_with_the_existing_document(editor_client, bases):
    _, mine = bases
    first = upload(editor_client, mine).json()
    again = upload(editor_client, mine, name="copy.txt")
    assert again.status_code == 200 and again.json()["id"] == first["id"]


def test_a_file_in_another_base_the_uploader_reads_is_refused_by_name(editor_client, kb_editor, bases):
    board, mine = bases
    services.kb_grant(kb=board, user=kb_editor, access=KbAccess.READ)
    response = upload(editor_client, mine)
    assert response.status_code == 400 and "Board" in response.json()["error"]


def test_a_move_into_a_base_that_holds_the_file_is_refused(kb_editor, bases):
    from kb import maintenance

    board, mine = bases
    copy, _ = services.document_create(uploaded_file=SimpleUploadedFile("c.txt", TEXT), kb=mine, user=kb_editor)
    Document.objects.filter(pk=copy.pk).update(status="ready")
    copy.refresh_from_db()
    with pytest.raises(services.IngestError, match="already holds"):
        maintenance.document_move_to_kb(document=copy, kb=board)
