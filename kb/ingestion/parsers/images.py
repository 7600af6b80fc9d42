"""Images (.png/.jpg) → text by recognition (kb.ingestion.parsers.ocr), pixels bounded before decoding;
each line located as {"page": 1, "boxes": [[x0, top, x1, bottom]]} in the image's pixels."""
from __future__ import annotations

import io
import warnings

from PIL import Image, UnidentifiedImageError

from kb.ingestion import reasons
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.ocr import OcrBudget, OcrLine, recognise
from kb.ingestion.parsers.pdf_layout import Piece, blocks, reading_order

# Recognition needs no more than this many pixels on the longer side; larger images are scaled down first.
_MAX_SIDE = 4000


def image_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    try:
        with warnings.catch_warnings():  # the size is judged below, against our own bound
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
        width, height = image.size
    except (UnidentifiedImageError, OSError, ValueError):
        raise ParseError(reasons.IMAGE_UNREADABLE) from None
    if width * height > limits.max_image_pixels:
        raise ParseError(reasons.IMAGE_TOO_LARGE % {"megapixels": f"{width * height / 1e6:,.0f}",
                                                    "limit": f"{limits.max_image_pixels / 1e6:,.0f}"})
    try:
        image.load()
    except (OSError, ValueError, Image.DecompressionBombError):
        raise ParseError(reasons.IMAGE_DAMAGED) from None
    scale = 1.0
    if max(width, height) > _MAX_SIDE:
        scale = _MAX_SIDE / max(width, height)
        image = image.resize((round(width * scale), round(height * scale)))
    lines = recognise(image, scale=scale, budget=OcrBudget(limits.ocr_seconds))
    if not lines:
        raise ParseError(reasons.IMAGE_NO_TEXT)
    return located_lines(lines, page=1, limits=limits)


def ocr_pieces(lines: list[OcrLine]) -> list[Piece]:
    """Recognised lines as layout pieces. Their boxes' heights vary with the script (a CJK line stands taller
    than a Latin one), not with the type size, so every line gets the page's median height: no headings
    are guessed from a scan."""
    heights = sorted(line.box[3] - line.box[1] for line in lines)
    size = heights[len(heights) // 2] if heights else 10.0
    return [Piece(line.text, *line.box, size=size) for line in lines]


def located_lines(lines: list[OcrLine], *, page: int, limits: ParseLimits) -> ParsedText:
    pieces = ocr_pieces(lines)
    sizes = sorted(p.size for p in pieces)
    body = sizes[len(sizes) // 2]
    builder = TextBuilder(limits)
    for block in blocks(reading_order(pieces, body), body):
        builder.block(block.pieces(page))
    return builder.build()
