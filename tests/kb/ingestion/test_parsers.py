"""Parsers: each file type, Chinese encodings, and refusals with clear reasons."""
import io

import docx
import pytest
from pypdf import PdfWriter

from kb.ingestion.parsers import ParseError, parse_document

ZH = "知识库问答系统支持中文文档。繁體中文也可以。"


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030", "gbk"])
def test_it_decodes_simplified_chinese_text(encoding):
    text = "知识库问答系统支持中文文档，检索增强生成。"
    assert parse_document(text.encode(encoding), "txt") == text


def test_it_decodes_big5_text():
    text = "知識庫問答系統支援繁體中文文件，檢索增強生成。"
    assert parse_document(text.encode("big5"), "txt") == text


def test_markdown_keeps_headings():
    assert parse_document("# 标题\n正文。".encode(), "md").startswith("# 标题")


def test_html_drops_scripts_and_keeps_headings():
    page = "<html><head><title>x</title><script>alert(1)</script></head><body><h2>概述</h2><p>正文内容。</p></body>"
    text = parse_document(page.encode(), "html")
    assert "alert" not in text
    assert "## 概述" in text and "正文内容。" in text


def test_docx_headings_become_markdown():
    document = docx.Document()
    document.add_heading("第一章", level=1)
    document.add_paragraph("段落内容。")
    buffer = io.BytesIO()
    document.save(buffer)
    text = parse_document(buffer.getvalue(), "docx")
    assert text.splitlines()[0] == "# 第一章"
    assert "段落内容。" in text


def test_a_docx_title_paragraph_is_the_outermost_heading():
    document = docx.Document()
    document.add_heading("差旅管理办法", level=0)  # Word's Title style
    document.add_paragraph("本办法适用于全体员工。")
    buffer = io.BytesIO()
    document.save(buffer)
    assert parse_document(buffer.getvalue(), "docx").splitlines()[0] == "# 差旅管理办法"


def test_a_pdf_without_text_fails_clearly():
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(ParseError, match="no text"):
        parse_document(buffer.getvalue(), "pdf")


@pytest.mark.parametrize("file_type", ["pdf", "docx"])
def test_corrupt_files_fail_with_a_reason(file_type):
    with pytest.raises(ParseError, match="could not be read"):
        parse_document(b"this is not really a " + file_type.encode() + b" file" * 20, file_type)


def test_binary_content_named_txt_is_refused():
    with pytest.raises(ParseError, match="binary"):
        parse_document(bytes(range(256)) * 10, "txt")


def test_empty_files_and_unknown_types_are_refused():
    with pytest.raises(ParseError, match="empty"):
        parse_document(b"", "txt")
    with pytest.raises(ParseError, match="unsupported"):
        parse_document(b"abc", "exe")


def test_docx_list_paragraphs_keep_their_bullets_and_numbers():
    document = docx.Document()
    document.add_paragraph("年休假按工龄计算：")
    document.add_paragraph("满1年不满10年，5天。", style="List Bullet")
    document.add_paragraph("满10年，10天。", style="List Bullet")
    document.add_paragraph("提交申请。", style="List Number")
    document.add_paragraph("经理审批。", style="List Number")
    buffer = io.BytesIO()
    document.save(buffer)
    lines = [line for line in parse_document(buffer.getvalue(), "docx").splitlines() if line]
    assert lines == ["年休假按工龄计算：", "- 满1年不满10年，5天。", "- 满10年，10天。",
                     "1. 提交申请。", "2. 经理审批。"]
