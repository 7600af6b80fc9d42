"""Domain rows follow their documents: created for the first one, removed with the last unless an admin owns them."""
from __future__ import annotations

import pytest

from kb.domains.records import knowledge_domain_refresh
from kb.maintenance import document_move, document_move_to_kb
from kb.models import Document, DocumentStatus, KnowledgeDomain
from kb.services import document_delete, document_ingest_text, document_mark_failed, kb_create

pytestmark = pytest.mark.django_db


def _upload(title: str, domain: str, kb=None) -> Document:
    return document_ingest_text(title=title, text=f"{title}的正文内容。", domain=domain, kb=kb)[0]


def _domains(kb_id: int | None = None) -> dict[str, int]:
    rows = KnowledgeDomain.objects.all() if kb_id is None else KnowledgeDomain.objects.filter(kb_id=kb_id)
    return dict(rows.values_list("domain_id", "document_count"))


def test_an_upload_creates_its_domain_row_as_automatic(kb_index):
    document = _upload("杂项", "misc")
    row = KnowledgeDomain.objects.get(kb_id=document.kb_id, domain_id="misc")
    assert row.created_automatically and row.document_count == 1


def test_deleting_the_last_document_removes_its_automatic_domain(kb_index, django_capture_on_commit_callbacks):
    first, second = _upload("甲", "misc"), _upload("乙", "misc")
    _upload("丙", "hr")
    # The callbacks re-aggregate the knowledge map after the delete: they must not bring the row back.
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=first)
    assert _domains() == {"misc": 1, "hr": 1}
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=second)
    assert _domains() == {"hr": 1}


def test_moving_the_last_document_away_removes_the_domain_it_left(kb_index, django_capture_on_commit_callbacks):
    document = _upload("甲", "misc")
    with django_capture_on_commit_callbacks(execute=True):
        document_move(document=document, domain="hr")
    assert _domains() == {"hr": 1}


def test_moving_the_last_document_to_another_base_removes_the_domain_there_it_left(
        kb_index, django_capture_on_commit_callbacks):
    document = _upload("甲", "misc")
    source, target = document.kb_id, kb_create(name="另一个库")
    with django_capture_on_commit_callbacks(execute=True):
        document_move_to_kb(document=document, kb=target)
    assert _domains(source) == {} and _domains(target.pk) == {"misc": 1}


def test_a_domain_an_administrator_created_stays_empty_after_its_last_document(
        kb_index, django_capture_on_commit_callbacks):
    document = _upload("甲", "policy")
    KnowledgeDomain.objects.filter(domain_id="policy").update(created_automatically=False, description="制度")
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=document)
    row = KnowledgeDomain.objects.get(domain_id="policy")
    assert (row.document_count, row.description) == (0, "制度")


def test_a_failed_document_keeps_its_domain_since_it_can_be_retried(kb_index):
    document = _upload("甲", "misc")
    document_mark_failed(document_id=document.pk, reason="boom")
    assert Document.objects.get(pk=document.pk).status == DocumentStatus.FAILED
    assert _domains() == {"misc": 0}


def test_refreshing_a_domain_without_documents_creates_no_row(kb_index):
    from kb.access import kb_default

    assert knowledge_domain_refresh(kb_id=kb_default().pk, domain_id="nothing") is None
    assert not KnowledgeDomain.objects.exists()


def test_each_upload_counts_in_its_domain_in_its_base_without_failed_documents(kb_index):
    other_base = kb_create(name="另一个库")
    first = _upload("甲", "misc")
    _upload("乙", "misc", kb=other_base)
    document_mark_failed(document_id=first.pk, reason="boom")
    _upload("丙", "misc")
    _upload("丁", "misc")
    assert _domains(first.kb_id) == {"misc": 2}  # 丙 and 丁: the failed one and the other base's are not counted
    assert _domains(other_base.pk) == {"misc": 1}
