"""kb.selectors: the reads of documents and chunks that the chat and the MCP tools make through kb."""
from __future__ import annotations

import pytest

from kb import selectors
from kb.access import kb_default
from kb.ingestion.worker import process_pending_documents
from kb.models import Document
from kb.services import document_ingest_text

TEXT = "# 手册\n## 一、超时\n超时三十秒。\n## 二、回调\n回调重试八次。\n"


@pytest.fixture
def handbook(kb_index) -> Document:
    document, _ = document_ingest_text(title="手册", text=TEXT)
    process_pending_documents()
    return Document.objects.get(pk=document.pk)


def test_section_headings_are_the_headings_in_reading_order(handbook):
    assert selectors.section_headings(document_id=handbook.pk, kb_ids=[handbook.kb_id]) == ("一、超时", "二、回调")


def test_section_headings_of_a_document_outside_the_readable_bases_are_none(handbook):
    assert selectors.section_headings(document_id=handbook.pk, kb_ids=[handbook.kb_id + 1]) == ()


def test_a_ready_document_is_read_with_its_parents_in_reading_order(handbook):
    kb_ids = frozenset({kb_default().pk})
    assert selectors.ready_document(document_id=handbook.pk, kb_ids=kb_ids) == handbook
    parents = selectors.document_parent_chunks(document_id=handbook.pk, kb_ids=kb_ids)
    assert parents and "超时三十秒" in parents[0].content
    assert [p.ordinal for p in parents] == sorted(p.ordinal for p in parents)
    assert [d["id"] for d in selectors.ready_documents(kb_ids=kb_ids)] == [handbook.pk]


def test_a_document_outside_the_readable_bases_is_not_read(handbook):
    with pytest.raises(Document.DoesNotExist):
        selectors.ready_document(document_id=handbook.pk, kb_ids=frozenset())
    assert selectors.document_parent_chunks(document_id=handbook.pk, kb_ids=frozenset()) == []
    assert selectors.ready_documents(kb_ids=frozenset()) == []
