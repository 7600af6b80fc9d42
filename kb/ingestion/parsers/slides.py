"""PowerPoint .pptx → text per slide (title as a heading, text boxes top to bottom, tables as Markdown,
speaker notes), each slide's number as its location."""
from __future__ import annotations

import pptx

from kb.ingestion import reasons
from kb.ingestion.parsers.archive import open_zip, reading
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.tables import markdown_row, separator, square

_KIND = reasons.PRESENTATION


def pptx_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    archive = open_zip(data, limits=limits, kind=_KIND)
    with reading(_KIND):
        deck = pptx.Presentation(archive.fp)
        slides = list(deck.slides)
    if len(slides) > limits.max_slides:
        raise ParseError(reasons.SLIDES_TOO_MANY % {"slides": f"{len(slides):,}", "limit": f"{limits.max_slides:,}"})
    builder = TextBuilder(limits)
    for number, slide in enumerate(slides, 1):
        where = {"slide": number}
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        builder.block(f"## {title}" if title else f"## Slide {number}", where)
        for shape in _in_reading_order(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            for text in _shape_texts(shape):
                builder.block(text, where)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                builder.block(notes.text, where)
    return builder.build()


def _in_reading_order(shapes) -> list:
    return sorted(shapes, key=lambda s: ((s.top or 0) // 10_000, s.left or 0))


def _shape_texts(shape) -> list[str]:
    if shape.shape_type is not None and shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
        return [text for child in _in_reading_order(shape.shapes) for text in _shape_texts(child)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = square([[cell.text for cell in row.cells] for row in shape.table.rows])
        if not rows:
            return []
        header, *body = rows
        return ["\n".join([markdown_row(header), separator(len(header)), *(markdown_row(r) for r in body)])]
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        bulleted = _content_placeholder(shape)
        lines = []
        for paragraph in shape.text_frame.paragraphs:
            line = " ".join(paragraph.text.split())
            if line and _is_bullet(paragraph, bulleted):
                line = f"{'  ' * min(paragraph.level, 4)}- {line}"
            lines.append(line)
        return ["\n".join(line for line in lines if line)]
    return []


# Placeholder types whose paragraphs a slide layout shows as bullets unless a paragraph turns them off: a "Title and
# Content" slide's body (PP_PLACEHOLDER.BODY, OBJECT). A plain text box shows none unless a paragraph sets one.
_BULLETED_PLACEHOLDERS = frozenset({2, 7})
_DRAWING_ML = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _content_placeholder(shape) -> bool:
    if not getattr(shape, "is_placeholder", False):
        return False
    try:
        return int(shape.placeholder_format.type) in _BULLETED_PLACEHOLDERS
    except (ValueError, TypeError, AttributeError):
        return False


def _is_bullet(paragraph, bulleted: bool) -> bool:
    """Whether the paragraph is shown as a list item: its own bullet setting, else its placeholder's. Written as a
    Markdown item, each bullet stays one item of the slide's list, quoted on a line of its own rather than run into
    the next one (a slide's bullets seldom end in punctuation)."""
    properties = paragraph._p.pPr  # python-pptx has no public reader of a paragraph's bullet
    if properties is not None:
        if properties.find(f"{_DRAWING_ML}buNone") is not None:
            return False
        if any(properties.find(f"{_DRAWING_ML}{tag}") is not None for tag in ("buChar", "buAutoNum")):
            return True
    return bulleted
