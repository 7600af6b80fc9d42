"""Small generated files for parser tests: Word files with chosen bodies, zip bombs, multi-page PDFs."""
from __future__ import annotations

import io
import zipfile

import docx
from pypdf import PdfWriter

_BODY = "<w:body>"


def docx_bytes(*paragraphs: str) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def docx_with_paragraphs(count: int, text: str = "") -> bytes:
    """A valid .docx whose body is `count` copies of one paragraph (empty by default), maximally compressed.

    4 M empty paragraphs make a ~70 KB file that python-docx needs gigabytes to open.
    """
    source = zipfile.ZipFile(io.BytesIO(docx_bytes("seed")))
    paragraph = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" if text else "<w:p/>"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "word/document.xml":
                head, tail = data.decode("utf-8").split(_BODY, 1)
                section = tail[tail.index("<w:sectPr"):]
                data = (head + _BODY + paragraph * count + section).encode("utf-8")
            archive.writestr(member.filename, data)
    return out.getvalue()


def zip_with_members(count: int) -> bytes:
    """A .docx-named zip holding `count` tiny members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for i in range(count):
            archive.writestr(f"part{i}.xml", "<a/>")
    return out.getvalue()


def blank_pdf(pages: int) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
