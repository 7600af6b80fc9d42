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


def test_a_document_is_named_by_its_title_whatever_its_case_and_punctuation(kb_index):
    for title in ("brighthome-returns-faq", "差旅管理办法", "差旅管理办法补充说明", "FAQ"):
        document_ingest_text(title=title, text=f"{title}的内容。")
    process_pending_documents()
    kb_ids = [kb_default().pk]
    assert selectors.document_named_in(text="Summarise the BrightHome returns FAQ", kb_ids=kb_ids)[1] == \
        "brighthome-returns-faq"
    assert selectors.document_named_in(text="总结一下差旅管理办法", kb_ids=kb_ids)[1] == "差旅管理办法"
    assert selectors.document_named_in(text="总结差旅管理办法补充说明", kb_ids=kb_ids)[1] == "差旅管理办法补充说明"
    assert selectors.document_named_in(text="总结一下FAQ", kb_ids=kb_ids) is None  # too short to name one
    assert selectors.document_named_in(text="总结一下差旅管理办法", kb_ids=[kb_default().pk + 1]) is None


def test_a_title_two_documents_share_names_neither(kb_index):
    for n in range(2):
        document_ingest_text(title="差旅管理办法", text=f"第{n}版的内容。")
    process_pending_documents()
    assert selectors.document_named_in(text="总结一下差旅管理办法", kb_ids=[kb_default().pk]) is None
