"""Why a document could not be indexed: every failure reason's template, once, and the stored reason in the reader's
language.

A reason is stored on the document in English, as its template filled in (`ParseError(PDF_TOO_MANY_PAGES % {…})`),
so the row needs no language of its own and the server log reads the same text. It is translated when it is shown:
`in_language` finds the template the text was made from, and fills the active language's translation with the same
values. Changing a template's English wording orphans the rows stored with the old one (they are then shown as
stored), so a template's English stays as it is once released.

The parser child fills templates in but never translates, so this module loads no Django at import: its marker
stands in for gettext_noop, and gettext is imported only where a reason is shown.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_TEMPLATES: list[str] = []


def N_(message: str) -> str:
    """Marks a template for the catalogue, as gettext_noop does, and registers it for `in_language`."""
    _TEMPLATES.append(message)
    return message


# --- any file -------------------------------------------------------------------------------------------------------
UNSUPPORTED_TYPE = N_("unsupported file type %(file_type)s; supported: %(supported)s")
EMPTY = N_("the file is empty")
NO_TEXT = N_("the file contains no text")
TOO_MANY_CHARS = N_("the document has more than %(limit)s characters of text; split it into smaller files")

# --- plain text ------------------------------------------------------------------------------------------------------
LOOKS_BINARY = N_("the file looks binary, not text")
IMPLAUSIBLE_ENCODING = N_("the text does not read plausibly in any supported encoding (UTF-8, UTF-16 with a BOM, "
                          "GBK/GB18030 or Big5); it may be damaged or in another encoding")
UNKNOWN_ENCODING = N_("the text encoding could not be determined (expected UTF-8, UTF-16 with a BOM, GBK/GB18030 "
                      "or Big5)")
CSV_FIELD_TOO_LONG = N_("the CSV file has a field longer than %(limit)s characters (line %(line)s)")
CSV_MALFORMED = N_("the CSV file could not be read at line %(line)s (it is not well-formed CSV)")

# --- PDF -------------------------------------------------------------------------------------------------------------
PDF_DAMAGED = N_("the PDF could not be read (it is damaged or not a PDF)")
PDF_ENCRYPTED = N_("the PDF is encrypted with a password; upload an unprotected copy")
PDF_NO_PAGES = N_("the PDF has no pages")
PDF_TOO_MANY_PAGES = N_("the PDF has %(pages)s pages; the limit is %(limit)s")
# `pages` is one of the page lists below, `reasons` the recognition reasons joined by "; ": both are translated too.
PDF_SCANNED_UNREAD = N_("the PDF has no text layer (it looks scanned: %(pages)s) and could not be read: %(reasons)s")
PAGE = N_("page %(number)s")
PAGES = N_("pages %(numbers)s")
PAGES_AND_MORE = N_("pages %(numbers)s and %(more)s more")

# --- text recognition (scanned pages, images) ------------------------------------------------------------------------
OCR_NOT_INSTALLED = N_("text recognition (OCR) is not installed on this server "
                       "(Debian: apt-get install tesseract-ocr tesseract-ocr-chi-sim)")
OCR_OUT_OF_TIME = N_("the time for text recognition ran out")
OCR_FAILED = N_("text recognition failed on this page")
OCR_PAGE_LIMIT = N_("only %(limit)s scanned pages are read per document")
OCR_NOTHING_ON_PAGE = N_("no text could be recognised")
IMAGE_UNREADABLE = N_("the image could not be read (it is damaged or not a PNG/JPEG)")
IMAGE_DAMAGED = N_("the image could not be read (it is damaged)")
IMAGE_TOO_LARGE = N_("the image has %(megapixels)s megapixels; the limit is %(limit)s")
IMAGE_NO_TEXT = N_("no text could be recognised in the image")


# --- zip containers: Word files, presentations, spreadsheets ---------------------------------------------------------
@dataclass(frozen=True)
class Container:
    """The refusals of one kind of zip-based file, each a whole sentence naming the kind, so that a translation
    can put the kind's own word where its language wants it."""

    unreadable: str
    not_a_zip: str
    too_many_parts: str
    too_large: str
    zip_bomb: str


WORD = Container(
    unreadable=N_("the Word file could not be read (it is damaged, or not a .docx file)"),
    not_a_zip=N_("the Word file could not be read (it is not a valid zip container)"),
    too_many_parts=N_("the Word file holds %(parts)s parts; the limit is %(limit)s"),
    too_large=N_("the Word file would unpack to %(size)s MB; the limit is %(limit)s MB"),
    zip_bomb=N_("the Word file is compressed %(ratio)s:1 (limit %(limit)s:1), which real documents never are; "
                "it looks like a zip bomb"),
)
PRESENTATION = Container(
    unreadable=N_("the presentation could not be read (it is damaged, or not a .pptx file)"),
    not_a_zip=N_("the presentation could not be read (it is not a valid zip container)"),
    too_many_parts=N_("the presentation holds %(parts)s parts; the limit is %(limit)s"),
    too_large=N_("the presentation would unpack to %(size)s MB; the limit is %(limit)s MB"),
    zip_bomb=N_("the presentation is compressed %(ratio)s:1 (limit %(limit)s:1), which real documents never are; "
                "it looks like a zip bomb"),
)
SPREADSHEET = Container(
    unreadable=N_("the spreadsheet could not be read (it is damaged, or not an .xlsx file)"),
    not_a_zip=N_("the spreadsheet could not be read (it is not a valid zip container)"),
    too_many_parts=N_("the spreadsheet holds %(parts)s parts; the limit is %(limit)s"),
    too_large=N_("the spreadsheet would unpack to %(size)s MB; the limit is %(limit)s MB"),
    zip_bomb=N_("the spreadsheet is compressed %(ratio)s:1 (limit %(limit)s:1), which real documents never are; "
                "it looks like a zip bomb"),
)
WORD_TOO_MANY_PARAGRAPHS = N_("the Word file has more than %(limit)s paragraphs; split it into smaller files")
WORD_DAMAGED_XML = N_("the Word file could not be read (damaged XML in %(part)s)")
SLIDES_TOO_MANY = N_("the presentation has %(slides)s slides; the limit is %(limit)s")
# A CSV file has no sheets; %(sheet)s is the sheet's name as Python quotes it ('Sheet1').
ROWS_TOO_MANY = N_("the spreadsheet has more than %(limit)s rows; "
                   "split it into smaller files or remove rows that are not needed")
ROWS_TOO_MANY_IN_SHEET = N_("the spreadsheet has more than %(limit)s rows (sheet %(sheet)s); "
                            "split it into smaller files or remove rows that are not needed")
CELLS_TOO_MANY = N_("the spreadsheet has more than %(limit)s cells; "
                    "split it into smaller files or remove columns that are not needed")
CELLS_TOO_MANY_IN_SHEET = N_("the spreadsheet has more than %(limit)s cells (sheet %(sheet)s); "
                             "split it into smaller files or remove columns that are not needed")
SHEET_TOO_LARGE = N_("the sheet %(sheet)s has %(rows)s rows × %(columns)s columns; "
                     "the limit is %(max_rows)s rows and %(max_cells)s cells")

# --- the parser child ------------------------------------------------------------------------------------------------
PARSE_TOO_SLOW = N_("parsing took longer than %(seconds)s s; the file is too large or too complex")
PARSE_OUT_OF_MEMORY = N_("parsing needed more than %(size)s MB of memory; the file is too large or too complex")
PARSER_STOPPED = N_("the file could not be parsed (the parser stopped unexpectedly)")
PARSER_NOT_STARTED = N_("the file could not be parsed (the parser could not start)")

# --- the worker: failures that are not the file's (%(error)s: the exception's class name) ---------------------------
EMBEDDING_FAILED = N_("the embedding service failed (%(error)s); "
                      "upload the file again to retry (details are in the server log)")
VECTOR_STORE_FAILED = N_("the vector store failed (%(error)s); "
                         "upload the file again to retry (details are in the server log)")
STORED_FILE_UNREADABLE = N_("the stored file could not be read (%(error)s); "
                            "upload the file again to retry (details are in the server log)")
INTERNAL_ERROR = N_("an internal error stopped indexing (%(error)s); "
                    "upload the file again to retry (details are in the server log)")
INTERRUPTED = N_("ingestion was interrupted %(attempts)s times (server restarts or crashes)")

TEMPLATES: tuple[str, ...] = tuple(_TEMPLATES)

# Values made from templates themselves, translated with the sentence: a page list, and reasons joined by "; ".
_PAGE_LISTS = frozenset({"pages"})
_REASON_LISTS = frozenset({"reasons"})
REASON_SEPARATOR = "; "
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def page_list(numbers: list[int]) -> str:
    """'page 3', 'pages 1, 2, 5', or the first ten and how many more."""
    shown = ", ".join(str(n) for n in numbers[:10])
    if len(numbers) > 10:
        return PAGES_AND_MORE % {"numbers": shown, "more": len(numbers) - 10}
    if len(numbers) > 1:
        return PAGES % {"numbers": shown}
    return PAGE % {"number": shown}


def in_language(text: str) -> str:
    """A stored reason in the active language: the translation of the template it was made from, with the same
    values; a text no template made (a row stored before this module, a truncated one) as it is."""
    found = _match(text)
    if found is None:
        return text
    # heavy: django.utils.translation (about 50 ms and 18 modules) loads where a reason is shown, not in the parser
    # child, which only fills templates in
    from django.utils.translation import gettext, pgettext

    template, values = found
    for name, value in values.items():
        if name in _PAGE_LISTS:
            values[name] = in_language(value)
        elif name in _REASON_LISTS:
            values[name] = pgettext("between failure reasons", REASON_SEPARATOR).join(
                in_language(part) for part in value.split(REASON_SEPARATOR))
    return gettext(template) % values


def _match(text: str) -> tuple[str, dict[str, str]] | None:
    for template, pattern in _patterns():
        found = pattern.fullmatch(text)
        if found is not None:
            return template, found.groupdict()
    return None


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each template as a pattern, the most specific first: where two could make the same text ("could not be read
    (%(error)s)" and "could not be read (it is damaged or not a PDF)"), the one with more fixed text wins."""
    compiled = []
    for template in TEMPLATES:
        pieces = _PLACEHOLDER.split(template)  # fixed text and placeholder names, alternating
        pattern = "".join(re.escape(piece) if index % 2 == 0 else f"(?P<{piece}>.+?)"
                          for index, piece in enumerate(pieces))
        fixed = sum(len(piece) for piece in pieces[::2])
        compiled.append((fixed, template, re.compile(pattern, re.DOTALL)))
    compiled.sort(key=lambda item: -item[0])
    return tuple((template, pattern) for _, template, pattern in compiled)
