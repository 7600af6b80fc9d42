"""Word .docx → text with tables in place: zip checked, paragraphs counted by streaming before python-docx builds
its tree."""
from __future__ import annotations

import re
import zipfile

import docx
from docx.table import Table
from lxml import etree

from kb.ingestion.parsers.archive import open_zip
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.tables import markdown_row, row_groups, separator, square

_KIND = "Word file"
_W_PARAGRAPH = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}p"


def docx_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    """Paragraphs and tables in the order the body holds them; headings as Markdown '#' lines, tables as
    Markdown tables led by their header row."""
    archive = open_zip(data, limits=limits, kind=_KIND)
    _check_paragraphs(archive, limits)
    try:
        document = docx.Document(archive.fp)
    except MemoryError:
        raise
    except Exception as exc:  # a missing part, not a docx at all: python-docx raises many types
        raise ParseError(f"the {_KIND} could not be read ({type(exc).__name__})") from None

    builder = TextBuilder(limits)
    # python-docx resolves a paragraph's style by searching the style part each time (~2 ms):
    # resolve each style id once.
    levels: dict[str | None, int | None] = {}
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            _table(item, builder)
            continue
        text = item.text.strip()
        if not text:
            continue
        style_id = item._p.style
        if style_id not in levels:
            levels[style_id] = _heading_level(item)
        level = levels[style_id]
        builder.block(("#" * level + " " + text) if level else text)
    return builder.build()


def _table(table, builder: TextBuilder) -> None:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is returned once per grid column it spans
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split()))
        rows.append(cells)
    rows = square(rows)
    if not rows:
        return
    if len(rows) == 1 or len(rows[0]) == 1:  # a layout box, not a table: its text as paragraphs
        for row in rows:
            builder.block("  ".join(c for c in row if c))
        return
    header, *body = rows
    head = f"{markdown_row(header)}\n{separator(len(header))}\n"
    lines = [markdown_row(row) for row in body]
    for group in row_groups(lines, head_chars=len(head)):
        builder.block(head + "\n".join(lines[i] for i in group))


def _heading_level(paragraph) -> int | None:
    style = (paragraph.style.name or "").lower() if paragraph.style is not None else ""
    found = re.search(r"heading\s*(\d)", style) or re.search(r"标题\s*(\d)", style)
    return int(found.group(1)) if found else None


def _check_paragraphs(archive: zipfile.ZipFile, limits: ParseLimits) -> None:
    """Count paragraphs in every XML part with a streaming parser, in constant memory.

    python-docx holds the whole tree (about 450 bytes per paragraph, empty ones included), so
    millions of empty paragraphs in a few KB of zip must be refused before it starts.
    """
    count = 0
    for member in archive.infolist():
        if not member.filename.endswith(".xml"):
            continue
        with archive.open(member) as stream:
            events = etree.iterparse(stream, events=("end",), tag=_W_PARAGRAPH, resolve_entities=False,
                                     no_network=True, load_dtd=False, huge_tree=False, recover=False)
            try:
                for _, element in events:
                    count += 1
                    if count > limits.max_paragraphs:
                        raise ParseError(f"the {_KIND} has more than {limits.max_paragraphs:,} paragraphs; "
                                         "split it into smaller files")
                    element.clear(keep_tail=True)
                    while element.getprevious() is not None:
                        del element.getparent()[0]
            except etree.XMLSyntaxError:
                raise ParseError(f"the {_KIND} could not be read (damaged XML in {_part_name(member)})") from None


def _part_name(member: zipfile.ZipInfo) -> str:
    return member.filename.rsplit("/", 1)[-1][:60]
