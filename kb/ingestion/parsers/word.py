"""Word .docx → text with tables in place: zip checked, paragraphs counted by streaming before python-docx builds
its tree."""
from __future__ import annotations

import re
import zipfile

import docx
from docx.table import Table
from lxml import etree

from kb.ingestion import reasons
from kb.ingestion.parsers.archive import open_zip, reading
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.tables import markdown_row, row_groups, separator, square

_KIND = reasons.WORD
_W_PARAGRAPH = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}p"


def docx_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    """Paragraphs and tables in the order the body holds them; headings as Markdown '#' lines, tables as
    Markdown tables led by their header row."""
    archive = open_zip(data, limits=limits, kind=_KIND)
    _check_paragraphs(archive, limits)
    with reading(_KIND):
        document = docx.Document(archive.fp)

    builder = TextBuilder(limits)
    # python-docx resolves a paragraph's style by searching the style part each time (~2 ms):
    # resolve each style id once.
    levels: dict[str | None, int | None] = {}
    lists = _Lists(document)
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
        marker = "" if level else lists.marker(item)
        builder.block("#" * level + " " + text if level else f"{marker} {text}" if marker else text)
    return builder.build()


class _Lists:
    """The list markers of a document's paragraphs, as Markdown writes them: "- " for a bulleted item, "1. " for a
    numbered one (counted per list and level through the document from the level's start, as Word numbers them),
    two spaces per level of nesting. Word keeps a list item's numbering in the paragraph (`w:numPr`) or in its style
    ("List Bullet"); without the marker a list of cases reads as loose paragraphs, and an answer can no longer tell
    one item from the list."""

    def __init__(self, document) -> None:
        self._numbering = _numbering(document)
        self._styles: dict[str | None, tuple[str, int] | None] = {}
        self._counts: dict[tuple[str, int], int] = {}

    def marker(self, paragraph) -> str:
        """The paragraph's list marker, "" when it is no list item."""
        numbered = _num_pr(paragraph._p.pPr)
        if numbered is None:
            style_id = paragraph._p.style
            if style_id not in self._styles:
                self._styles[style_id] = _style_num_pr(paragraph.style)
            numbered = self._styles[style_id]
        if numbered is None or numbered[0] == "0":  # numId 0: numbering switched off for this paragraph
            return ""
        num_id, level = numbered
        indent = "  " * min(level, MAX_LIST_DEPTH)
        fmt, start = self._numbering.get((num_id, level), ("bullet", 1))
        if fmt in ("bullet", "none"):
            return f"{indent}-"
        for key in [k for k in self._counts if k[0] == num_id and k[1] > level]:
            del self._counts[key]  # a deeper level restarts under each item of this one
        self._counts[(num_id, level)] = self._counts.get((num_id, level), start - 1) + 1
        return f"{indent}{self._counts[(num_id, level)]}."


# Deeper nesting than this is written at this depth: Markdown readers and the chunker see no difference beyond it.
MAX_LIST_DEPTH = 4
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _num_pr(p_pr) -> tuple[str, int] | None:
    """(numId, level) of a paragraph's or style's numbering properties, or None."""
    num_pr = p_pr.find(f"{_W}numPr") if p_pr is not None else None
    if num_pr is None:
        return None
    num_id, ilvl = num_pr.find(f"{_W}numId"), num_pr.find(f"{_W}ilvl")
    if num_id is None:
        return None
    level = ilvl.get(f"{_W}val") if ilvl is not None else "0"
    return num_id.get(f"{_W}val") or "0", int(level) if level and level.isdigit() else 0


def _style_num_pr(style) -> tuple[str, int] | None:
    """The numbering a paragraph style gives its paragraphs, through the styles it is based on (at most a few)."""
    for _ in range(8):
        if style is None:
            return None
        found = _num_pr(style.element.find(f"{_W}pPr"))
        if found is not None:
            return found
        style = style.base_style
    return None


def _numbering(document) -> dict[tuple[str, int], tuple[str, int]]:
    """(numId, level) → the level's number format ("bullet", "decimal", "chineseCounting", …) and first number,
    from the numbering part; {} when the document has none or it cannot be read (every item is then written as a
    bullet)."""
    try:
        root = document.part.numbering_part.element
    except Exception:  # no numbering part (NotImplementedError, KeyError): no numbered lists to read
        return {}
    formats: dict[str, dict[int, tuple[str, int]]] = {}
    for abstract in root.iterfind(f"{_W}abstractNum"):
        levels = formats.setdefault(abstract.get(f"{_W}abstractNumId") or "", {})
        for lvl in abstract.iterfind(f"{_W}lvl"):
            fmt, start, ilvl = lvl.find(f"{_W}numFmt"), lvl.find(f"{_W}start"), lvl.get(f"{_W}ilvl") or "0"
            first = start.get(f"{_W}val") if start is not None else "1"
            if fmt is not None and ilvl.isdigit():
                levels[int(ilvl)] = (fmt.get(f"{_W}val") or "bullet", int(first) if first and first.isdigit() else 1)
    out: dict[tuple[str, int], tuple[str, int]] = {}
    for num in root.iterfind(f"{_W}num"):
        abstract_id = num.find(f"{_W}abstractNumId")
        if abstract_id is None:
            continue
        for level, fmt in formats.get(abstract_id.get(f"{_W}val") or "", {}).items():
            out[(num.get(f"{_W}numId") or "", level)] = fmt
    return out


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
    if style in ("title", "标题"):  # the document's title (Word's Title style): its outermost heading
        return 1
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
                        raise ParseError(reasons.WORD_TOO_MANY_PARAGRAPHS % {"limit": f"{limits.max_paragraphs:,}"})
                    element.clear(keep_tail=True)
                    while element.getprevious() is not None:
                        del element.getparent()[0]
            except etree.XMLSyntaxError:
                raise ParseError(reasons.WORD_DAMAGED_XML % {"part": _part_name(member)}) from None


def _part_name(member: zipfile.ZipInfo) -> str:
    return member.filename.rsplit("/", 1)[-1][:60]
