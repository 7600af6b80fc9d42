"""Text recognition for scans and images: read offline, located, bounded, and a page that cannot be read is
reported instead of left silently empty."""

import pytest

from kb.ingestion.parsers import ParseError, ParseLimits, parse_located
from tests.kb.ingestion.files import (
    ocr_available,
    png_bytes,
    png_declaring,
    scanned_pdf,
    scanned_text_pdf,
    text_image,
)

needs_ocr = pytest.mark.skipif(not ocr_available(),
                               reason="needs Debian tesseract-ocr, tesseract-ocr-chi-sim and fonts-noto-cjk")
LINES = ["密码每90天必须更换一次。", "Backups run every night."]


@needs_ocr
def test_an_image_is_read_by_text_recognition_with_line_boxes():
    parsed = parse_located(png_bytes(text_image(LINES)), "png")
    assert "密码每90天必须更换一次" in parsed.text and "Backups run every night" in parsed.text
    first = next(loc for start, end, loc in parsed.spans if "密码" in parsed.text[start:end])
    x0, top, x1, bottom = first["boxes"][0]
    assert first["page"] == 1 and 20 < x0 < 70 and 15 < top < bottom < 130  # pixels of the image


@needs_ocr
def test_a_scanned_pdf_page_is_read_and_reported_as_recognised():
    parsed = parse_located(scanned_text_pdf(LINES), "pdf")
    assert "密码每90天必须更换一次" in parsed.text
    assert parsed.spans[0][2]["page"] == 1
    assert parsed.warnings == ["page 1 had no text layer and was read by text recognition (OCR)"]


def _scan_of_two_pages_at_two_sizes() -> bytes:
    from reportlab.lib.utils import ImageReader

    from tests.kb.ingestion.files import _canvas

    pdf, buffer = _canvas()
    for lines, scale in ((["访客须在前台登记。"], 0.35), (["样品寄送每5天进行一次。"], 0.6)):
        image = text_image(lines)
        pdf.drawImage(ImageReader(image), 50, 700 - image.height * scale, image.width * scale, image.height * scale)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


@needs_ocr
def test_a_scan_whose_pages_differ_in_type_size_has_no_guessed_headings():
    parsed = parse_located(_scan_of_two_pages_at_two_sizes(), "pdf")
    assert "每5天进行一次" in parsed.text and "访客须在前台登记" in parsed.text  # both pages read, one line each
    assert "#" not in parsed.text  # a heading line would be context, never quoted as the answer


@needs_ocr
def test_a_scan_with_nothing_legible_fails_naming_the_page():
    with pytest.raises(ParseError, match=r"no text layer \(it looks scanned: page 1\).*no text could be recognised"):
        parse_located(scanned_pdf(), "pdf")


def test_scanned_pages_past_the_bound_are_reported_not_read():
    with pytest.raises(ParseError, match="only 1 scanned pages are read per document"):
        parse_located(_two_scans(), "pdf", limits=ParseLimits(max_ocr_pages=1))


def test_a_100_megapixel_image_is_refused_before_it_is_decoded():
    with pytest.raises(ParseError, match="the image has 100 megapixels; the limit is 40"):
        parse_located(png_declaring(10_000, 10_000), "png")


def test_a_file_that_is_not_an_image_is_refused():
    with pytest.raises(ParseError, match="could not be read"):
        parse_located(b"GIF89a not really", "jpg")


def _two_scans() -> bytes:
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for _ in range(2):
        writer.append(PdfReader(io.BytesIO(scanned_pdf())))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
