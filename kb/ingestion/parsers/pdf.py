"""PDF → text with pypdf, refusing encrypted files and bounding pages and characters."""
from __future__ import annotations

import io
import logging

from kb.ingestion.parsers.base import ParseError, ParseLimits

log = logging.getLogger(__name__)


def pdf_text(data: bytes, *, limits: ParseLimits) -> str:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ParseError("the PDF is encrypted")
        pages = len(reader.pages)
        if pages > limits.max_pages:
            raise ParseError(f"the PDF has {pages:,} pages; the limit is {limits.max_pages:,}")
        parts: list[str] = []
        chars = 0
        for page in reader.pages:
            text = page.extract_text() or ""
            chars += len(text)
            if chars > limits.max_chars:
                raise ParseError(f"the document has more than {limits.max_chars:,} characters of text; "
                                 "split it into smaller files")
            parts.append(text)
        return "\n\n".join(parts)
    except (ParseError, MemoryError):
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        log.info("pypdf could not read a PDF: %s: %s", type(exc).__name__, exc)
        raise ParseError(f"the PDF could not be read ({type(exc).__name__})") from None
