"""Document services: dedupe, validation, delete across all stores, domain counts, kb version."""
import pytest
from django.core.files.base import ContentFile

from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, Document, DocumentStatus, KnowledgeDomain
from kb.selectors import kb_version
from kb.services import IngestError, document_create, document_delete, document_ingest_text

# Their refusals are asserted in English.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

TEXT = "公司的年假制度规定员工每年享有十五天带薪年假。年假需要提前一周申请。"


def test_the_same_content_twice_returns_the_existing_document(kb_index):
    first, created = document_ingest_text(title="年假", text=TEXT, domain="hr")
    again, created_again = document_create(uploaded_file=ContentFile(TEXT.encode(), name="other.txt"), domain="hr")
    assert created and not created_again
    assert again.pk == first.pk
    assert Document.objects.count() == 1


def test_title_defaults_to_the_file_name(kb_index):
    document, _ = document_create(uploaded_file=ContentFile(TEXT.encode(), name="员工手册.txt"), domain="hr")
    assert document.title == "员工手册"
    assert document.status == DocumentStatus.PENDING


@pytest.mark.parametrize(("name", "data", "message"), [
    ("empty.txt", b"", "empty"),
    ("virus.exe", b"MZ....", "unsupported"),
    ("noext", b"abc", "the file name has no extension"),
])
def test_bad_uploads_are_refused_and_change_nothing(kb_index, name, data, message):
    with pytest.raises(IngestError, match=message):
        document_create(uploaded_file=ContentFile(data, name=name), domain="hr")
    assert not Document.objects.exists()
    assert not KnowledgeDomain.objects.exists()


@pytest.mark.parametrize("name", ["价格.xlsx", "rows.csv", "deck.pptx", "scan.png", "photo.JPG", "photo.jpeg"])
def test_spreadsheets_slides_and_images_are_accepted_for_upload(kb_index, name):
    document, created = document_create(uploaded_file=ContentFile(b"data of " + name.encode(), name=name),
                                        domain="hr")
    assert created and document.file_type == name.rsplit(".", 1)[1].lower()


def test_the_refusal_lists_the_new_formats(kb_index):
    with pytest.raises(IngestError, match=r"supported: .*\.xlsx, \.csv, \.pptx, \.png, \.jpg"):
        document_create(uploaded_file=ContentFile(b"MZ", name="tool.exe"), domain="hr")


def test_files_over_the_limit_are_refused(kb_index, settings):
    settings.MAX_UPLOAD_BYTES = 10
    with pytest.raises(IngestError, match="limit"):
        document_create(uploaded_file=ContentFile(TEXT.encode(), name="big.txt"), domain="hr")
    assert not Document.objects.exists()


def test_a_bad_domain_is_refused(kb_index):
    with pytest.raises(IngestError, match="domain"):
        document_ingest_text(title="x", text=TEXT, domain="bad domain!")


def test_domain_document_count_follows_uploads_and_deletes(kb_index, django_capture_on_commit_callbacks):
    a, _ = document_ingest_text(title="a", text=TEXT, domain="hr")
    document_ingest_text(title="b", text=TEXT + "补充。", domain="hr")
    assert KnowledgeDomain.objects.get(domain_id="hr").document_count == 2
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=a)
    assert KnowledgeDomain.objects.get(domain_id="hr").document_count == 1


def test_delete_removes_chunks_vectors_and_bm25_entries(kb_index, django_capture_on_commit_callbacks):
    document, _ = document_ingest_text(title="年假", text=TEXT, domain="hr")
    process_pending_documents()
    child_ids = list(Chunk.objects.filter(document=document, level=1).values_list("id", flat=True))
    assert child_ids and get_vector_store().fetch(child_ids)
    assert get_lexical_index().search("年假", k=5, kb_ids=[document.kb_id])
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=document)
    assert not Chunk.objects.exists()
    assert get_vector_store().fetch(child_ids) == {}
    assert get_lexical_index().search("年假", k=5, kb_ids=[document.kb_id]) == []


def test_every_change_moves_the_kb_version(kb_index, django_capture_on_commit_callbacks):
    before = kb_version()
    with django_capture_on_commit_callbacks(execute=True):
        document_ingest_text(title="年假", text=TEXT, domain="hr")
    assert kb_version() != before


@pytest.mark.django_db(transaction=True)
def test_an_upload_gives_way_to_questions_but_not_while_holding_a_transaction(kb_index, monkeypatch):
    # the admin's form uploads inside a transaction, whose write lock would hold up every other writer meanwhile
    from django.db import transaction

    import kb.services as services

    calls = []
    monkeypatch.setattr(services, "give_way", lambda: calls.append(1) or 0.0)
    document_create(uploaded_file=ContentFile(TEXT.encode(), name="a.txt"), domain="hr")
    assert calls == [1]
    with transaction.atomic():
        document_create(uploaded_file=ContentFile((TEXT * 2).encode(), name="b.txt"), domain="hr")
    assert calls == [1] and Document.objects.count() == 2


def test_finishing_documents_marks_only_those_still_being_processed(kb_index, django_capture_on_commit_callbacks):
    from kb.services import document_claim, documents_mark_ready

    processing, deleted, requeued = (document_ingest_text(title=f"第{i}篇", text=f"第{i}篇的正文。")[0]
                                     for i in range(3))
    for document in (processing, deleted, requeued):
        assert document_claim(document_id=document.pk)
    Document.objects.filter(pk=requeued.pk).update(status=DocumentStatus.PENDING)  # re-uploaded meanwhile
    gone = deleted.pk
    Document.objects.filter(pk=gone).delete()
    before = kb_version()
    with django_capture_on_commit_callbacks(execute=True):
        marked = documents_mark_ready(document_ids=[processing.pk, gone, requeued.pk])
    assert marked == {processing.pk}
    assert dict(Document.objects.values_list("pk", "status")) == {processing.pk: DocumentStatus.READY,
                                                                   requeued.pk: DocumentStatus.PENDING}
    assert kb_version() != before
