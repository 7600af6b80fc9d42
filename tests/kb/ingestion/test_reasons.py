"""Failure reasons are stored in English and shown in the reader's language: every template has a Chinese
translation that keeps the values, and a reason no template made is shown as stored."""
import re

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.utils import translation
from django.utils.translation import gettext

from kb.ingestion import reasons
from kb.ingestion.parsers import ParseError, parse_document
from kb.ingestion.worker import process_pending_documents
from kb.models import Document, DocumentStatus
from kb.services import document_create

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _sample_values(template: str) -> dict[str, str]:
    """Values unlike any template's fixed text, each one different, so that a value put in the wrong place shows."""
    return {name: f"{index + 1},00{index}" for index, name in enumerate(PLACEHOLDER.findall(template))}


@pytest.mark.parametrize("template", reasons.TEMPLATES)
def test_a_reason_is_shown_in_chinese_with_the_values_it_was_stored_with(template):
    values = _sample_values(template)
    stored = template % values
    with translation.override("zh-hans"):
        chinese = gettext(template) % values
        assert reasons.in_language(stored) == chinese
    assert chinese != stored
    assert all(value in chinese for value in values.values())


@pytest.mark.parametrize("template", reasons.TEMPLATES)
def test_a_reason_is_shown_in_english_as_stored(template):
    stored = template % _sample_values(template)
    with translation.override("en"):
        assert reasons.in_language(stored) == stored


@pytest.mark.parametrize("template", reasons.TEMPLATES)
def test_every_template_has_a_chinese_translation_with_the_same_placeholders(template):
    with translation.override("zh-hans"):
        chinese = gettext(template)
    assert chinese != template
    assert sorted(PLACEHOLDER.findall(chinese)) == sorted(PLACEHOLDER.findall(template))


def test_every_template_is_different():
    assert len(set(reasons.TEMPLATES)) == len(reasons.TEMPLATES)


@pytest.mark.parametrize("text", [
    "", "boom", "the PDF has no text layer",
    "FileNotFoundError: [Errno 2] No such file: '<server path>'",
    # Stored wording that a template once had, or a reason cut at the column's length, is no template's.
    "the PDF has 1,200 pages; the limit is",
    "The file looks binary, not text",
])
def test_a_text_no_template_made_is_shown_as_stored(text):
    with translation.override("zh-hans"):
        assert reasons.in_language(text) == text


def test_the_template_with_more_fixed_text_wins_where_two_could_have_made_the_text():
    with translation.override("zh-hans"):
        assert reasons.in_language(reasons.PDF_DAMAGED) == gettext(reasons.PDF_DAMAGED)
        assert reasons.in_language(reasons.WORD.not_a_zip) == gettext(reasons.WORD.not_a_zip)
        damaged_xml = reasons.WORD_DAMAGED_XML % {"part": "document.xml"}
        assert reasons.in_language(damaged_xml) == "无法读取该 Word 文件（document.xml 中的 XML 已损坏）"


def test_the_page_list_and_the_recognition_reasons_of_a_scanned_pdf_are_translated_too():
    pages = reasons.page_list(list(range(1, 13)))
    unread = reasons.REASON_SEPARATOR.join([reasons.OCR_PAGE_LIMIT % {"limit": 50}, reasons.OCR_OUT_OF_TIME])
    stored = reasons.PDF_SCANNED_UNREAD % {"pages": pages, "reasons": unread}
    assert stored == ("the PDF has no text layer (it looks scanned: pages 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more) "
                      "and could not be read: only 50 scanned pages are read per document; "
                      "the time for text recognition ran out")
    with translation.override("zh-hans"):
        assert reasons.in_language(stored) == (
            "PDF 没有文字层（第 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 页及另外 2 页看起来是扫描件），"
            "且无法识别：每个文档最多识别 50 个扫描页；文字识别超时")


@pytest.mark.parametrize(("numbers", "expected"), [
    ([3], "page 3"), ([1, 4], "pages 1, 4"), (list(range(1, 12)), "pages 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 1 more")])
def test_a_page_list_reads_as_before(numbers, expected):
    assert reasons.page_list(numbers) == expected


def test_a_parser_refuses_with_its_template_filled_in():
    with pytest.raises(ParseError) as refused:
        parse_document(b"PK\x03\x04 not a zip at all", "docx")
    assert str(refused.value) == reasons.WORD.not_a_zip


@pytest.mark.django_db
def test_a_failed_document_shows_its_reason_in_the_readers_language(kb_index, admin_user, member_client):
    document, _ = document_create(uploaded_file=ContentFile(b"\x00\x01\x02binary" * 40, name="blob.txt"),
                                  domain="general")
    process_pending_documents()
    document.refresh_from_db()
    assert (document.status, document.error) == (DocumentStatus.FAILED, reasons.LOOKS_BINARY)
    chinese = "文件看起来是二进制文件，不是文本"

    admin = Client()
    admin.force_login(admin_user)
    admin.cookies["django_language"] = "zh-hans"
    change = admin.get(f"/admin/kb/document/{document.pk}/change/").content.decode()
    listed = admin.get("/admin/kb/document/").content.decode()
    progress = admin.get("/admin/kb/document/progress/", {"ids": document.pk}).json()["documents"]
    assert chinese in change and chinese in listed and [d["error"] for d in progress] == [chinese]
    assert reasons.LOOKS_BINARY not in change + listed

    url = f"/api/kb/documents/{document.pk}/"
    assert member_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").json()["error"] == chinese
    assert member_client.get(url, HTTP_ACCEPT_LANGUAGE="en").json()["error"] == reasons.LOOKS_BINARY
    assert Document.objects.get(pk=document.pk).error == reasons.LOOKS_BINARY  # stored as it was


def test_a_csv_field_past_the_limit_is_refused_with_the_limit_and_line_in_a_template():
    with pytest.raises(ParseError) as refused:
        parse_document(b'a,b\n1,2\n3,"' + b"y" * 140_000 + b'"\n', "csv")
    assert re.fullmatch(r"the CSV file has a field longer than [\d,]+ characters \(line 3\)", str(refused.value))
    with translation.override("zh-hans"):
        assert reasons.in_language(str(refused.value)).startswith("CSV 文件中有字段超过")
