"""File bytes → text with the place of each piece in the original, for .txt/.md/.html/.pdf/.docx/.xlsx/.csv/.pptx
and images (.png/.jpg, by text recognition), bounded, with encoding detection and clear refusals.

`parse_located` runs in the calling process; the worker calls it through `IsolatedParser`
(kb.ingestion.parsers.isolated), which adds memory and time limits in a child process.
"""
from __future__ import annotations

from kb.ingestion import reasons
from kb.ingestion.parsers.base import (
    SUPPORTED_TYPES,
    ParsedText,
    ParseError,
    ParseInterrupted,
    ParseLimits,
    TextBuilder,
    check_chars,
    file_type_of,
)
from kb.ingestion.parsers.html_text import html_to_text
from kb.ingestion.parsers.sheets import csv_parse, xlsx_parse
from kb.ingestion.parsers.tables import aligned_tables
from kb.ingestion.parsers.text import decode_text, normalise_text

__all__ = ["SUPPORTED_TYPES", "ParseError", "ParseInterrupted", "ParseLimits", "ParsedText", "decode_text",
           "file_type_of", "html_to_text", "normalise_text", "parse_document", "parse_located"]


def parse_document(data: bytes, file_type: str, *, limits: ParseLimits | None = None) -> str:
    """The document's text with headings as Markdown '#' lines; raises ParseError with the reason."""
    return parse_located(data, file_type, limits=limits).text


def parse_located(data: bytes, file_type: str, *, limits: ParseLimits | None = None) -> ParsedText:
    """The document's text and where its pieces are in the original; raises ParseError with the reason."""
    limits = limits or ParseLimits()
    kind = file_type.lower().lstrip(".")
    if kind not in SUPPORTED_TYPES:
        raise ParseError(reasons.UNSUPPORTED_TYPE % {"file_type": repr(file_type),
                                                     "supported": ", ".join(SUPPORTED_TYPES)})
    if not data:
        raise ParseError(reasons.EMPTY)
    if kind == "txt":
        # Plain text's tables are columns aligned by spaces: written as Markdown tables (Markdown has its own).
        parsed = _plain(aligned_tables(check_chars(decode_text(data), limits)), limits)
    elif kind == "md":
        parsed = _plain(decode_text(data), limits)
    elif kind in ("html", "htm"):
        parsed = _plain(html_to_text(check_chars(decode_text(data), limits)), limits)
    elif kind == "pdf":
        # heavy: each format loads its library only for its own files: pdfplumber and pypdfium2 (about 0.15 s)
        from kb.ingestion.parsers.pdf import pdf_parse

        parsed = pdf_parse(data, limits=limits)
    elif kind in ("xlsx", "csv"):
        parsed = (xlsx_parse if kind == "xlsx" else csv_parse)(data, limits=limits)
    elif kind in ("png", "jpg", "jpeg"):
        # heavy: Pillow, for images only
        from kb.ingestion.parsers.images import image_parse

        parsed = image_parse(data, limits=limits)
    elif kind == "pptx":
        # heavy: python-pptx (about 0.15 s), for slides only
        from kb.ingestion.parsers.slides import pptx_parse

        parsed = pptx_parse(data, limits=limits)
    else:
        # heavy: python-docx (about 0.1 s), for Word files only
        from kb.ingestion.parsers.word import docx_parse

        parsed = docx_parse(data, limits=limits)
    if not parsed.text.strip():
        raise ParseError(reasons.NO_TEXT)
    return parsed


def _plain(text: str, limits: ParseLimits) -> ParsedText:
    builder = TextBuilder(limits)
    builder.block(normalise_text(check_chars(text, limits)))
    return builder.build()
