"""Small generated files for parser tests: Word files with chosen bodies, zip bombs, multi-page PDFs."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
from pypdf import PdfWriter

from kb.ingestion.parsers.ocr import tesseract_path

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


# -- PDFs with real text, authored with reportlab's built-in CJK font (no font file needed) ------------------
PAGE = (595, 842)
WRAPPED_LEFT = ["密码管理规定：所有生产账号的密码每90", "天必须更换一次，不得重复使用最近五次", "的密码。"]
RIGHT = ["备份策略：数据库每天凌晨两点全量备份，", "备份保留三十天。"]
PRICE_ROWS = [["套餐", "价格", "时长"], ["基础版", "99元", "30天"], ["专业版", "299元", "90天"]]


def _canvas():
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    buffer = io.BytesIO()
    return canvas.Canvas(buffer, pagesize=PAGE), buffer


def _running_header_and_footer(pdf, number: int) -> None:
    pdf.setFont("STSong-Light", 9)
    pdf.drawString(50, 815, "运维手册 内部资料")
    pdf.drawCentredString(297, 25, f"第 {number} 页")


def two_column_pdf() -> bytes:
    """Page 1: two columns, the left one wrapping "每90" / "天" at a line end; page 2: text, a ruled price
    table, text. Both pages carry a running header and a page-number footer."""
    pdf, buffer = _canvas()
    _running_header_and_footer(pdf, 1)
    pdf.setFont("STSong-Light", 12)
    for column_x, lines in ((50, WRAPPED_LEFT), (320, RIGHT)):
        for index, line in enumerate(lines):
            pdf.drawString(column_x, 760 - 16 * index, line)
    pdf.showPage()
    _running_header_and_footer(pdf, 2)
    pdf.setFont("STSong-Light", 12)
    pdf.drawString(50, 760, "价格如下表所示。")
    for i, row in enumerate(PRICE_ROWS):
        for j, cell in enumerate(row):
            pdf.rect(50 + 120 * j, 740 - 20 * (i + 1), 120, 20)
            pdf.drawString(55 + 120 * j, 746 - 20 * (i + 1), cell)
    pdf.drawString(50, 660, "表格之后的说明文字。")
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


RETENTION_ROWS = [["信息类别", "保存期限", "到期处理"], ["员工档案", "离职后2年", "删除"],
                  ["求职简历", "6个月", "删除"], ["考勤记录", "3年", "删除"], ["监控录像", "30天", "自动覆盖"]]
BULLETS = ["• 数据库每天凌晨两点全量备份，", "  保留三十天。", "• 日志每周归档一次，", "  保留一年。",
           "• 证书到期前三十天告警，", "  由值班人员续期。"]


def unruled_table_pdf() -> bytes:
    """A table drawn without a grid (only a rule under its header) between two paragraphs; its last two rows
    go on at the top of page 2 without the header. Then a bulleted list whose wrapped lines line up."""
    pdf, buffer = _canvas()
    pdf.setFont("STSong-Light", 11)
    pdf.drawString(50, 780, "主要信息的保存期限见下表。")
    y = 750
    for index, row in enumerate(RETENTION_ROWS[:3]):
        for x, cell in zip((50, 150, 250), row, strict=True):
            pdf.drawString(x, y, cell)
        if index == 0:
            pdf.line(50, y - 4, 330, y - 4)
        y -= 18
    pdf.showPage()
    pdf.setFont("STSong-Light", 11)
    y = 780
    for row in RETENTION_ROWS[3:]:
        for x, cell in zip((50, 150, 250), row, strict=True):
            pdf.drawString(x, y, cell)
        y -= 18
    pdf.drawString(50, 720, "表格之后的说明文字。")
    for index, line in enumerate(BULLETS):
        pdf.drawString(50, 690 - 16 * index, line)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


PROSE_SECTIONS = [
    ("5. Damaged or defective items",
     "Items that arrive damaged must be reported within 7 days of delivery with photos through the Help Center. "
     "Northwind will send a replacement or issue a full refund including original shipping costs, at the customer's "
     "choice. Defects that appear later are covered by the manufacturer warranty, typically 1 year."),
    ("6. Refund timing",
     "Once the warehouse receives and inspects the returned item, refunds are issued within 5 business days."),
]


def prose_pdf() -> bytes:
    """Paragraphs set ragged-right by reportlab's platypus, as a word processor exports them: three lines of the
    first paragraph and the heading after it have words that start at the same three places."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    story = []
    for heading, text in PROSE_SECTIONS:
        story += [Paragraph(heading, styles["Heading2"]), Paragraph(text, styles["Normal"]), Spacer(1, 6)]
    SimpleDocTemplate(buffer, pagesize=A4).build(story)
    return buffer.getvalue()


def bulleted_pdf() -> bytes:
    """A section of bullets whose bullet glyph is set a size larger than their text, as reportlab and word processors
    do, one bullet's amount wrapped alone onto its second line ("capped at USD" / "400.")."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    bullet = ParagraphStyle("bullet", parent=styles["Normal"], fontSize=10, leftIndent=18, bulletFontSize=12)
    story = [Paragraph("4. Loss and theft", styles["Heading2"]),
             Paragraph("A lost device must be reported within 24 hours.", styles["Normal"]),
             Paragraph("First loss within any 3-year period: no charge to the employee.", bullet, bulletText="•"),
             Paragraph("Second loss within 3 years: the employee pays 25%, capped at USD<br/>400.", bullet,
                       bulletText="•")]
    SimpleDocTemplate(buffer, pagesize=A4).build(story)
    return buffer.getvalue()


def scanned_pdf() -> bytes:
    """One page holding only a picture (of nothing): what a scanner produces, without a text layer."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    pdf, buffer = _canvas()
    pdf.drawImage(ImageReader(Image.new("L", (200, 100), 255)), 50, 500, 400, 200)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def password_pdf() -> bytes:
    from pypdf import PdfReader

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(two_column_pdf())))
    writer.encrypt(user_password="secret", owner_password="owner")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# -- Office files --------------------------------------------------------------------------------------------
def xlsx_bytes(sheets: dict[str, list[list]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def pptx_bytes(slides: list[dict]) -> bytes:
    """slides: [{"title": …, "body": "line\\nline", "notes": …, "table": [[…], …]}]"""
    import pptx
    from pptx.util import Emu

    deck = pptx.Presentation()
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1 if "body" in spec else 5])
        slide.shapes.title.text = spec["title"]
        if "body" in spec:
            slide.placeholders[1].text = spec["body"]
        if "table" in spec:
            rows = spec["table"]
            table = slide.shapes.add_table(len(rows), len(rows[0]), Emu(0), Emu(2_000_000), Emu(4_000_000),
                                           Emu(800_000)).table
            for i, row in enumerate(rows):
                for j, value in enumerate(row):
                    table.cell(i, j).text = value
        if "notes" in spec:
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def docx_with_table(before: str, rows: list[list[str]], after: str) -> bytes:
    document = docx.Document()
    document.add_paragraph(before)
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    document.add_paragraph(after)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


# -- Images ---------------------------------------------------------------------------------------------------
CJK_FONT = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"  # Debian fonts-noto-cjk


def ocr_available() -> bool:
    """Debian's tesseract and the CJK font the test images are drawn with (CI installs both)."""
    return tesseract_path() is not None and Path(CJK_FONT).exists()


def text_image(lines: list[str], size: int = 40):
    """A PIL image of `lines` in `size`-pixel Noto Sans CJK, black on white, like a clean scan: 2.4 line
    heights apart, at least 1,200 pixels wide and wide enough for the longest line."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(CJK_FONT, size)
    pitch = int(size * 2.4)
    image = Image.new("L", (max(1200, size * max(len(x) for x in lines) + 120), pitch * len(lines) + 80), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((40, 40 + pitch * index), line, font=font, fill=0)
    return image


def png_bytes(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def scanned_text_pdf(lines: list[str]) -> bytes:
    """A page holding only a picture of `lines`: a scan with text to recognise."""
    from reportlab.lib.utils import ImageReader

    image = text_image(lines)
    pdf, buffer = _canvas()
    pdf.drawImage(ImageReader(image), 50, 842 - 100 - image.height * 0.4, image.width * 0.4, image.height * 0.4)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A PNG whose header declares width × height pixels, with almost no pixel data behind it."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 16))
            + chunk(b"IEND", b""))
