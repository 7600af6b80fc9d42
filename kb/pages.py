"""The original's pages as images for the reader: a PDF's pages rendered by pypdfium2, an uploaded image (a photo or a
scan, read by OCR) as its one page, re-encoded as PNG; made on first view and cached on disk by the document's checksum,
so a re-uploaded file never shows a stale picture."""
from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from kb.models import Document

# Pixels across a rendered page: sharp on a laptop screen, about 150–250 KB of PNG for a text page.
PAGE_WIDTH_PX = 1100
# A page larger than a poster is drawn at a lower resolution rather than as a 100-megapixel image.
_MAX_SCALE = 4.0


# Uploaded images: one page whose line boxes are in the image's pixels (kb.ingestion.parsers.images).
IMAGE_TYPES = frozenset({"png", "jpg", "jpeg"})


class NoSuchPage(LookupError):
    """The document is not a stored PDF or image, or it has no such page."""


@dataclass(frozen=True)
class PageInfo:
    number: int
    count: int
    width: float  # PDF points, or an image's pixels: the unit of the chunks' line boxes
    height: float


def _open(document: Document):
    # heavy: pypdfium2 (about 20 ms) loads with the first page shown, not at django.setup()
    import pypdfium2 as pdfium

    if document.file_type != "pdf" or not document.file:
        raise NoSuchPage("the document is not a stored PDF")
    try:
        with document.file.open("rb") as handle:
            return pdfium.PdfDocument(handle.read())
    except (OSError, pdfium.PdfiumError):
        raise NoSuchPage("the stored PDF cannot be opened") from None


def _open_image(document: Document, *, decode: bool):
    """The stored image, its pixels decoded only when asked (its size is in the header)."""
    # heavy: PIL and its decoders load with the first image page shown, not at django.setup()
    from PIL import Image, UnidentifiedImageError

    if not document.file:
        raise NoSuchPage("the image is not stored")
    try:
        with document.file.open("rb") as handle:
            image = Image.open(io.BytesIO(handle.read()))
            if decode:
                image.load()  # the file passed the parser's pixel bound when it was ingested
        return image
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError):
        raise NoSuchPage("the stored image cannot be opened") from None


def page_info(document: Document, number: int) -> PageInfo:
    if document.file_type in IMAGE_TYPES:
        if number != 1:
            raise NoSuchPage(f"the image has no page {number}")
        width, height = _open_image(document, decode=False).size
        return PageInfo(1, 1, float(width), float(height))
    pdf = _open(document)
    try:
        count = len(pdf)
        if not 1 <= number <= count:
            raise NoSuchPage(f"the document has no page {number}")
        width, height = pdf.get_page_size(number - 1)
        return PageInfo(number, count, float(width), float(height))
    finally:
        pdf.close()


def _cache() -> Path:
    return Path(settings.MEDIA_ROOT).parent / "cache" / "pages"


def forget_pages(document_id: int) -> None:
    """Remove a deleted document's page images: a picture of the original must not outlive it."""
    for path in _cache().glob(f"{document_id}-*.png"):
        path.unlink(missing_ok=True)


def page_image(document: Document, number: int) -> Path:
    """The PNG of page `number` (1-based), rendered once per file version."""
    cache = _cache()
    path = cache / f"{document.pk}-{document.checksum[:16]}-{number}-{PAGE_WIDTH_PX}.png"
    if path.exists():
        return path
    image = _image_page(document, number) if document.file_type in IMAGE_TYPES else _pdf_page(document, number)
    cache.mkdir(parents=True, exist_ok=True)
    # Written beside and renamed into place, so a concurrent request never reads half a file.
    handle, temporary = tempfile.mkstemp(dir=cache, suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        image.save(out, format="PNG", optimize=False)
    os.replace(temporary, path)
    return path


def _pdf_page(document: Document, number: int):
    pdf = _open(document)
    try:
        if not 1 <= number <= len(pdf):
            raise NoSuchPage(f"the document has no page {number}")
        page = pdf[number - 1]
        try:
            scale = min(PAGE_WIDTH_PX / max(page.get_width(), 1.0), _MAX_SCALE)
            return page.render(scale=scale).to_pil()
        finally:
            page.close()
    finally:
        pdf.close()


def _image_page(document: Document, number: int):
    """The uploaded image, no wider than a rendered page, as RGB(A): shown as a PNG whatever it was uploaded as."""
    if number != 1:
        raise NoSuchPage(f"the image has no page {number}")
    image = _open_image(document, decode=True)
    image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    if image.width > PAGE_WIDTH_PX:
        image = image.resize((PAGE_WIDTH_PX, max(1, round(image.height * PAGE_WIDTH_PX / image.width))))
    return image
