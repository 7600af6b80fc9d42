"""PDF → located text: pypdfium2 opens and bounds the file, pdfplumber reads each page's words and ruled
tables, pdf_layout puts them in reading order; running headers, footers and page numbers are dropped.

pdfplumber (MIT, on pdfminer.six, MIT) gives every word with its box and font size and finds ruled tables;
pypdfium2 (Apache-2.0 / BSD-3, PDFium) opens a file in C in milliseconds, so a password, damage or a page
count over the limit is refused before the slower layout work starts, and it renders pages for the reader.
"""
from __future__ import annotations

import io
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field

import pdfplumber
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from kb.ingestion import reasons
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.images import ocr_pieces
from kb.ingestion.parsers.ocr import RENDER_DPI, OcrBudget, recognise
from kb.ingestion.parsers.pdf_layout import (
    Block,
    Piece,
    TableItem,
    blocks,
    body_font_size,
    clean_cell,
    join_gap,
    pieces_from_words,
    reading_order,
)
from kb.ingestion.parsers.pdf_tables import AlignedTable, aligned_tables

log = logging.getLogger(__name__)

# Running headers and footers live in the top and bottom tenth of a page, on its first or last two rows.
_MARGIN = 0.1
# A margin line repeated (digits aside) on at least this share of the pages is a running header or footer.
_RUNNING_SHARE = 0.5
_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:第\s*\d+\s*页(?:\s*[,，/／]?\s*共\s*\d+\s*页)?|(?:page|p\.)\s*\d+(?:\s*(?:of|/)\s*\d+)?"
    r"|\d+\s*(?:/|of)\s*\d+|\d+|[ivxlc]+)[-–—\s]*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[。！？；：.!?;:…」』”）)|]$")
# A page with fewer characters than this but with an image is a scan (or a picture of text).
_SCAN_MAX_CHARS = 10


@dataclass
class _Page:
    number: int
    height: float
    pieces: list[Piece] = field(default_factory=list)
    tables: list[TableItem] = field(default_factory=list)
    sizes: list[tuple[float, int]] = field(default_factory=list)
    scanned: bool = False
    recognised: bool = False  # its text is from OCR: every line has the page's median height (ocr_pieces)


def pdf_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:

    document = _open(data, limits)
    plumber = None
    ocr = _Recogniser(limits)
    try:
        pages = []
        for index in range(len(document)):
            page = document[index]
            try:
                tables: list[TableItem] = []
                if _may_hold_a_table(page):
                    if plumber is None:
                        plumber = pdfplumber.open(io.BytesIO(data))
                    tables = _tables(plumber.pages[index])
                pages.append(_read_page(page, index + 1, tables, before=pages[-1] if pages else None))
                if pages[-1].scanned:
                    ocr.read(page, pages[-1])
            finally:
                page.close()
    except (ParseError, MemoryError):
        raise
    except Exception as exc:  # PDFium and pdfminer raise many types for damaged files
        log.info("a PDF could not be read: %s: %s", type(exc).__name__, exc)
        raise ParseError(reasons.PDF_DAMAGED) from None
    finally:
        if plumber is not None:
            plumber.close()
        document.close()
    return _assemble(pages, limits, ocr)


class _Recogniser:
    """Reads scanned pages by text recognition within the document's OCR bounds; remembers what it could not."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self.budget: OcrBudget | None = None
        self.attempts = 0
        self.read_pages: list[int] = []
        self.unread: dict[int, str] = {}

    def read(self, page, result: _Page) -> None:
        if self.attempts >= self.limits.max_ocr_pages:
            self.unread[result.number] = reasons.OCR_PAGE_LIMIT % {"limit": self.limits.max_ocr_pages}
            return
        self.attempts += 1
        if self.budget is None:
            self.budget = OcrBudget(self.limits.ocr_seconds)
        width, height = page.get_size()
        scale = RENDER_DPI / 72
        pixels = width * height * scale * scale
        if pixels > self.limits.max_image_pixels:
            scale *= math.sqrt(self.limits.max_image_pixels / pixels)
        try:
            image = page.render(scale=scale).to_pil()
            lines = recognise(image, scale=scale, budget=self.budget)
        except ParseError as exc:
            self.unread[result.number] = str(exc)
            return
        if not lines:
            self.unread[result.number] = reasons.OCR_NOTHING_ON_PAGE
            return
        result.pieces = ocr_pieces(lines)
        result.sizes = [(p.size, len(p.text)) for p in result.pieces]
        result.scanned = False
        result.recognised = True
        self.read_pages.append(result.number)


def _open(data: bytes, limits: ParseLimits):
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise ParseError(reasons.PDF_ENCRYPTED) from None
        raise ParseError(reasons.PDF_DAMAGED) from None
    pages = len(document)
    if pages > limits.max_pages or pages == 0:
        document.close()
        if pages == 0:
            raise ParseError(reasons.PDF_NO_PAGES)
        raise ParseError(reasons.PDF_TOO_MANY_PAGES % {"pages": f"{pages:,}", "limit": f"{limits.max_pages:,}"})
    return document


def _may_hold_a_table(page) -> bool:
    """Whether the page draws at least two horizontal and two vertical rules (a ruled table's grid)."""
    horizontal = vertical = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        wide, tall = right - left > 3, top - bottom > 3
        horizontal += 2 if wide and tall else int(wide)
        vertical += 2 if wide and tall else int(tall)
        if horizontal >= 2 and vertical >= 2:
            return True
    return False


def _tables(page) -> list[TableItem]:
    """Ruled tables found by pdfplumber (top-left coordinates, like the words)."""
    tables = []
    for table in page.find_tables():
        rows = [[clean_cell(c) for c in row] for row in table.extract()]
        keep = [i for i, row in enumerate(rows) if any(row)]
        rows = [rows[i] for i in keep]
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue  # a box drawn around a paragraph, not a table
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        row_boxes = [[round(v, 1) for v in row.bbox] for row in table.rows]
        boxes = [row_boxes[i] if i < len(row_boxes) else [round(v, 1) for v in table.bbox] for i in keep]
        x0, top, x1, bottom = table.bbox
        tables.append(TableItem(rows, boxes, x0, top, x1, bottom))
    page.close()
    return tables


def _read_page(page, number: int, tables: list[TableItem], before: _Page | None = None) -> _Page:
    """The page's words as line pieces and tables (ruled ones, found by pdfplumber, and ones drawn without rules);
    a table without rules that goes on from the page `before` is led by that table's header row."""
    height = float(page.get_height())
    textpage = page.get_textpage()
    try:
        words = _words(textpage, height)
    finally:
        textpage.close()
    if tables:
        words = [w for w in words if not any(_inside(w, t) for t in tables)]
    previous = next((t for t in reversed(before.tables) if isinstance(t, AlignedTable)), None) if before else None
    words, aligned = aligned_tables(words, follows=previous)
    if aligned and previous is not None and previous.continues_at(aligned[0].starts):
        aligned[0] = aligned[0].with_header_of(previous)
    tables = [*tables, *aligned]
    result = _Page(number=number, height=height, tables=tables)
    page_size = body_font_size([w["size"] for w in words])
    result.pieces = pieces_from_words(words, page_size) if words else []
    result.sizes = [(p.size, len(p.text)) for p in result.pieces]
    if not tables and sum(len(w["text"]) for w in words) < _SCAN_MAX_CHARS:
        result.scanned = any(True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2))
    return result


def _words(textpage, height: float) -> list[dict]:
    """Characters in content order grouped into words (split at spaces, line ends and jumps), in top-left
    coordinates. A character's size is its loose box's height (ascent to descent), which, unlike the
    nominal font size, stays right when a producer scales 1-point text by its matrix."""
    words: list[dict] = []
    current: dict | None = None
    raw = textpage.raw
    rect = pdfium_c.FS_RECTF()
    get_unicode, get_box = pdfium_c.FPDFText_GetUnicode, pdfium_c.FPDFText_GetLooseCharBox
    for index in range(textpage.count_chars()):
        code = get_unicode(raw, index)
        # The spaces and line ends PDFium generates between words are whitespace like the real ones.
        char = chr(code) if 0 < code < 0x110000 else ""
        if not char or char.isspace() or not get_box(raw, index, rect):
            current = None
            continue
        left, bottom, right, top = rect.left, rect.bottom, rect.right, rect.top
        box_top, box_bottom = height - top, height - bottom
        size = box_bottom - box_top
        if current is not None:
            middle = (box_top + box_bottom) / 2
            jumped = (left < current["x1"] - 0.5 * size or left - current["x1"] > 0.3 * size
                      or not current["top"] <= middle <= current["bottom"])
            if jumped:
                current = None
        if current is None:
            current = {"text": char, "x0": left, "x1": right, "top": box_top, "bottom": box_bottom, "size": size}
            words.append(current)
        else:
            current["text"] += char
            current["x1"] = max(current["x1"], right)
            current["top"] = min(current["top"], box_top)
            current["bottom"] = max(current["bottom"], box_bottom)
            current["size"] = max(current["size"], size)
    return words


def _inside(word: dict, table: TableItem) -> bool:
    x = (word["x0"] + word["x1"]) / 2
    y = (word["top"] + word["bottom"]) / 2
    return table.x0 <= x <= table.x1 and table.top <= y <= table.bottom


def _assemble(pages: list[_Page], limits: ParseLimits, ocr: _Recogniser) -> ParsedText:
    running = _running_lines(pages)
    weights: Counter[float] = Counter()
    for page in pages:
        for size, chars in page.sizes:
            weights[round(size * 2) / 2] += chars
    body_size = weights.most_common(1)[0][0] if weights else 10.0
    builder = TextBuilder(limits)
    pending: list[tuple[str, dict | None]] = []
    pending_kind = ""
    for page in pages:
        noise = _margin_noise(page, running)
        kept = [p for p in page.pieces if id(p) not in noise]
        # A recognised page is measured against its own lines: scans differ in resolution and type size from
        # page to page, and no heading is guessed from a scan.
        page_body = kept[0].size if page.recognised and kept else body_size
        ordered = reading_order([*kept, *page.tables], page_body)
        for index, block in enumerate(blocks(ordered, page_body)):
            pieces = block.pieces(page.number)
            if index == 0 and _continues_paragraph(pending, pending_kind, block):
                # A paragraph broken by the page end reads on from the previous page.
                pending = [*pending, (join_gap(_last_text(pending), block.lines[0][0]), None), *pieces]
                continue
            builder.block(pending)
            pending, pending_kind = pieces, block.kind
    builder.block(pending)
    parsed = builder.build()
    if ocr.read_pages:
        parsed.warnings.append(f"{reasons.page_list(ocr.read_pages)} had no text layer and "
                               f"{'were' if len(ocr.read_pages) > 1 else 'was'} read by text recognition (OCR)")
    if ocr.unread:
        scanned = reasons.page_list(sorted(ocr.unread))
        unread = reasons.REASON_SEPARATOR.join(sorted(set(ocr.unread.values())))
        verb = "has" if len(ocr.unread) == 1 else "have"
        parsed.warnings.append(f"{scanned} of {len(pages)} {verb} no text layer and could not be read ({unread})")
        if not parsed.text.strip():
            raise ParseError(reasons.PDF_SCANNED_UNREAD % {"pages": scanned, "reasons": unread})
    return parsed


def _continues_paragraph(pending: list, pending_kind: str, block: Block) -> bool:
    return (pending_kind == "text" and block.kind == "text" and bool(pending)
            and not _SENTENCE_END.search(_last_text(pending)))


def _last_text(pieces: list[tuple[str, dict | None]]) -> str:
    for text, _ in reversed(pieces):
        if text.strip():
            return text.rstrip()
    return ""


def _margin_key(piece: Piece) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", piece.text))


def _edge_pieces(page: _Page) -> list[Piece]:
    """Pieces in the top or bottom margin band that are on the page's first two or last two rows: where
    running headers, footers and page numbers stand (a body line further in never counts, however often
    it repeats)."""
    if not page.pieces:
        return []
    rows = sorted({round(p.top) for p in page.pieces})
    first, last = set(rows[:2]), set(rows[-2:])
    band = _MARGIN * page.height
    return [p for p in page.pieces
            if (round(p.top) in first and p.top < band) or (round(p.top) in last and p.bottom > page.height - band)]


def _running_lines(pages: list[_Page]) -> set[str]:
    """Edge lines that repeat, digits aside, on at least half the pages (and on two or more)."""
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({_margin_key(p) for p in _edge_pieces(page)})
    with_text = sum(1 for page in pages if page.pieces)
    needed = max(2, math.ceil(_RUNNING_SHARE * with_text))
    return {key for key, count in seen.items() if count >= needed}


def _margin_noise(page: _Page, running: set[str]) -> set[int]:
    """ids of the page's running header, footer and page-number pieces."""
    return {id(p) for p in _edge_pieces(page) if _margin_key(p) in running or _PAGE_NUMBER.match(p.text)}

