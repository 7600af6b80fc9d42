"""File bytes → plain text for .txt/.md/.html/.pdf/.docx, bounded, with encoding detection and clear refusals.

`parse_document` runs in the calling process; the worker calls it through `IsolatedParser`
(kb.ingestion.parsers.isolated), which adds memory and time limits in a child process.
"""
from __future__ import annotations

from kb.ingestion.parsers.base import (
    SUPPORTED_TYPES,
    ParseError,
    ParseInterrupted,
    ParseLimits,
    check_chars,
    file_type_of,
)
from kb.ingestion.parsers.html_text import html_to_text
from kb.ingestion.parsers.text import decode_text, normalise_text

__all__ = ["SUPPORTED_TYPES", "ParseError", "ParseInterrupted", "ParseLimits", "decode_text", "file_type_of",
           "html_to_text", "normalise_text", "parse_document"]


def parse_document(data: bytes, file_type: str, *, limits: ParseLimits | None = None) -> str:
    """The document's text with headings as Markdown '#' lines; raises ParseError with the reason."""
    limits = limits or ParseLimits()
    kind = file_type.lower().lstrip(".")
    if kind not in SUPPORTED_TYPES:
        raise ParseError(f"unsupported file type {file_type!r}; supported: {', '.join(SUPPORTED_TYPES)}")
    if not data:
        raise ParseError("the file is empty")
    if kind in ("txt", "md"):
        text = check_chars(decode_text(data), limits)
    elif kind in ("html", "htm"):
        text = html_to_text(check_chars(decode_text(data), limits))
    elif kind == "pdf":
        from kb.ingestion.parsers.pdf import pdf_text

        text = pdf_text(data, limits=limits)
    else:
        from kb.ingestion.parsers.word import docx_text

        text = check_chars(docx_text(data, limits=limits), limits)
    text = normalise_text(text)
    if not text.strip():
        raise ParseError("the file contains no text")
    return text
