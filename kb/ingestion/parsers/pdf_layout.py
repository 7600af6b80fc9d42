"""One PDF page in reading order: line pieces found from pdfplumber's words, columns split at their gutter,
lines joined into paragraphs the CJK way (no space, numbers kept whole), ruled tables as Markdown in place."""
from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from kb.ingestion.parsers.tables import markdown_row, row_groups, separator

# Characters written without spaces between them: CJK ideographs, kana, hangul and full-width punctuation.
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_SENTENCE_END = re.compile(r"[。！？；：.!?;:…」』”）)]$")
# A line opening with a bullet or an item number ("1.", "2、", "(3)", "（四）") starts a list item of its own; a number
# and stop alone on the line ("400.") end the sentence the line before wrapped.
_LIST_ITEM = re.compile(r"^\s*(?:[•·▪◦●○■□]|\d{1,3}[.)、](?!\d)(?=\s*\S)|[(（][0-9一二三四五六七八九十]{1,3}[)）])")
# A gutter narrower than this share of the body font size is a word space, not a column gap.
_MIN_GUTTER_EMS = 1.5
# Rows whose left pieces are this short against the page's text width are a key/value list, not columns.
_KEY_VALUE_SHARE = 0.25
_MAX_COLUMN_DEPTH = 2


@dataclass
class Piece:
    """Words on one baseline within one column."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float

    @property
    def box(self) -> list[float]:
        return [round(self.x0, 1), round(self.top, 1), round(self.x1, 1), round(self.bottom, 1)]


@dataclass
class TableItem:
    rows: list[list[str]]
    row_boxes: list[list[float]]
    x0: float
    top: float
    x1: float
    bottom: float


@dataclass
class Block:
    """A paragraph, heading or table of one page: its lines as (text, box) and how they join."""

    kind: str  # "text" | "heading" | "table"
    lines: list[tuple[str, list[float]]] = field(default_factory=list)
    level: int = 0
    size: float = 0.0

    def pieces(self, page: int) -> list[tuple[str, dict | None]]:
        out: list[tuple[str, dict | None]] = []
        if self.kind == "heading":
            out.append(("#" * self.level + " ", None))
        previous = ""
        for index, (text, box) in enumerate(self.lines):
            if index:
                out.append(("\n" if self.kind == "table" else join_gap(previous, text), None))
                if self.kind != "table" and _hyphenated(previous, text):
                    # "manage-" + "ment": the hyphen only broke the word at the line end.
                    last, loc = out[-2]
                    out[-2] = (last[:-1], loc)
            out.append((text, {"page": page, "boxes": [box]}))
            previous = text
        return out


def is_cjk(char: str) -> bool:
    return bool(_CJK.match(char))


def join_gap(before: str, after: str) -> str:
    """What goes between two wrapped lines: nothing where either side is CJK ("每90" + "天" → "每90天"), a number
    in CJK text was cut ("每1" + "5天" → "每15天") or a word was hyphenated; a space between Latin words."""
    if not before or not after:
        return ""
    if is_cjk(before[-1]) or is_cjk(after[0]):
        return ""
    if before[-1].isdigit() and after[0].isdigit():
        # A number cut by the line end ("每1" + "5天"): in CJK text it was one number; between Latin words two.
        head, tail = before.rstrip(_NUMBER_CHARS), after.lstrip(_NUMBER_CHARS)
        if (head and is_cjk(head[-1])) or (tail and is_cjk(tail[0])):
            return ""
    return "" if _hyphenated(before, after) else " "


_NUMBER_CHARS = "0123456789.,"


def _hyphenated(before: str, after: str) -> bool:
    return before.endswith("-") and len(before) > 1 and before[-2].isalpha() and after[:1].islower()


def word_rows(words: list[dict]) -> list[list[dict]]:
    """Words grouped into rows by their vertical centre: rows top to bottom, each row's words left to right."""
    rows: list[list[dict]] = []
    for word in sorted(words, key=lambda w: (round(w["top"], 1), w["x0"])):
        centre = (word["top"] + word["bottom"]) / 2
        for row in reversed(rows[-3:]):
            if row[0]["top"] - 1 <= centre <= row[0]["bottom"] + 1:
                row.append(word)
                break
        else:
            rows.append([word])
    for row in rows:
        row.sort(key=lambda w: w["x0"])
    return rows


def pieces_from_words(words: list[dict], body_size: float) -> list[Piece]:
    """Words grouped into rows (`word_rows`), each row cut where a gap is wider than a gutter."""
    pieces: list[Piece] = []
    gutter = _MIN_GUTTER_EMS * body_size
    for row in word_rows(words):
        current = [row[0]]
        for word in row[1:]:
            if word["x0"] - current[-1]["x1"] > gutter:
                pieces.append(_piece(current))
                current = []
            current.append(word)
        pieces.append(_piece(current))
    return pieces


def _piece(words: list[dict]) -> Piece:
    text = words[0]["text"]
    for before, after in zip(words, words[1:], strict=False):
        both_cjk = is_cjk(before["text"][-1]) and is_cjk(after["text"][0])
        text += ("" if both_cjk else " ") + after["text"]
    return Piece(text, min(w["x0"] for w in words), min(w["top"] for w in words),
                 max(w["x1"] for w in words), max(w["bottom"] for w in words), _line_size(words))


def _line_size(words: list[dict]) -> float:
    """The type size of most of a line's characters (sizes within half a point together): a larger bullet glyph or
    symbol in a body line ("• First loss …", the bullet set a size up) does not make the line a heading."""
    sizes = [(word.get("size", 0.0) or 0.0, len(word["text"])) for word in words]
    weights: Counter[float] = Counter()
    for size, chars in sizes:
        weights[_half_point(size)] += chars
    usual = max(weights, key=lambda rounded: (weights[rounded], rounded))
    return max(size for size, _ in sizes if _half_point(size) == usual)


def _half_point(size: float) -> float:
    return round(size * 2) / 2


def reading_order(items: list[Piece | TableItem], body_size: float, depth: int = 0) -> list[Piece | TableItem]:
    """Items in reading order: split at a column gutter when there is one (a line or table crossing it is
    read where it stands, between the column runs above and below it), else top to bottom."""
    ordered = sorted(items, key=lambda i: (i.top, i.x0))
    if depth >= _MAX_COLUMN_DEPTH or len(ordered) < 4:
        return ordered
    gutter = _gutter(ordered, body_size)
    if gutter is None:
        return ordered
    g0, g1 = gutter
    out: list[Piece | TableItem] = []
    left: list[Piece | TableItem] = []
    right: list[Piece | TableItem] = []

    def flush() -> None:
        out.extend(reading_order(left, body_size, depth + 1))
        out.extend(reading_order(right, body_size, depth + 1))
        left.clear()
        right.clear()

    for item in ordered:
        if item.x1 <= g0 + 0.5:
            left.append(item)
        elif item.x0 >= g1 - 0.5:
            right.append(item)
        else:
            flush()
            out.append(item)
    flush()
    return out


def _gutter(items: list[Piece | TableItem], body_size: float) -> tuple[float, float] | None:
    """The widest empty vertical strip between narrow items with text on both sides, or None."""
    x_min = min(i.x0 for i in items)
    x_max = max(i.x1 for i in items)
    width = x_max - x_min
    if width <= 0:
        return None
    narrow = [i for i in items if (i.x1 - i.x0) < 0.6 * width]
    if len(narrow) < 4:
        return None
    intervals = sorted((i.x0, i.x1) for i in narrow)
    best: tuple[float, float] | None = None
    reach = intervals[0][1]
    for x0, x1 in intervals[1:]:
        if x0 > reach and (best is None or x0 - reach > best[1] - best[0]):
            best = (reach, x0)
        reach = max(reach, x1)
    if best is None or best[1] - best[0] < _MIN_GUTTER_EMS * body_size:
        return None
    g0, g1 = best
    left = [i for i in narrow if i.x1 <= g0 + 0.5]
    right = [i for i in narrow if i.x0 >= g1 - 0.5]
    if len(left) < 2 or len(right) < 2:
        return None
    overlap = min(max(i.bottom for i in left), max(i.bottom for i in right)) - max(min(i.top for i in left),
                                                                                   min(i.top for i in right))
    if overlap < 2 * body_size:
        return None  # the two sides are not beside each other
    if _key_value_rows(left, right, width):
        return None
    return best


def _key_value_rows(left: list, right: list, width: float) -> bool:
    """Short labels each with a value on the same baseline: a form or unruled table, read row by row."""
    left_widths = [i.x1 - i.x0 for i in left]
    if statistics.median(left_widths) >= _KEY_VALUE_SHARE * width:
        return False
    tops = [i.top for i in right]
    paired = sum(1 for i in left if any(abs(i.top - t) < 2 for t in tops))
    return paired >= 0.8 * len(left)


def blocks(items: list[Piece | TableItem], body_size: float) -> list[Block]:
    """Items in reading order → paragraphs (lines joined while the spacing and font stay those of one
    paragraph), headings (larger type, short) and tables."""
    out: list[Block] = []
    current: Block | None = None
    previous: Piece | None = None
    right = 0.0  # the right edge of the current paragraph's lines: where a full line ends
    for item in items:
        if isinstance(item, TableItem):
            out.extend(table_blocks(item))
            current, previous = None, None
            continue
        heading_level = _heading_level(item, body_size)
        if heading_level:
            if current is not None and current.kind == "heading" and current.level == heading_level \
                    and previous is not None and item.top - previous.bottom < 0.8 * item.size:
                current.lines.append((item.text, item.box))  # a heading wrapped over two lines
            else:
                current = Block("heading", [(item.text, item.box)], level=heading_level, size=item.size)
                out.append(current)
            previous = item
            continue
        if current is None or current.kind != "text" or not _continues(previous, item) \
                or _starts_paragraph(previous, item, right):
            current = Block("text", [], size=item.size)
            out.append(current)
            right = item.x1
        current.lines.append((item.text, item.box))
        right = max(right, item.x1)
        previous = item
    return out


def _heading_level(piece: Piece, body_size: float) -> int:
    if not body_size or len(piece.text) > 80 or piece.size < 1.2 * body_size:
        return 0
    return 1 if piece.size >= 1.6 * body_size else 2


def _continues(previous: Piece | None, piece: Piece) -> bool:
    """Whether `piece` is the next line of the paragraph `previous` ended."""
    if previous is None:
        return False
    height = max(previous.bottom - previous.top, piece.bottom - piece.top, 1.0)
    gap = piece.top - previous.bottom
    if gap < -0.5 * height or gap > 0.8 * height:
        return False  # a blank line's worth of space, or a piece above (another column's run)
    if abs(piece.size - previous.size) > 0.15 * max(previous.size, 1.0):
        return False
    return abs(piece.x0 - previous.x0) < 3 * height or piece.x0 < previous.x0


def _starts_paragraph(previous: Piece | None, piece: Piece, right: float) -> bool:
    """A list item starts a paragraph of its own. After a line that ends a sentence, an indented line
    (two-character indents are the rule in Chinese) or a line following one that stopped short of the
    paragraph's right edge starts a new paragraph."""
    if previous is None:
        return False
    if _LIST_ITEM.match(piece.text):
        return True
    if not _SENTENCE_END.search(previous.text):
        return False
    em = max(previous.size, 1.0)
    return piece.x0 - previous.x0 > 1.5 * em or previous.x1 < right - 2 * em


def table_blocks(table: TableItem) -> list[Block]:
    """A ruled table as Markdown tables, each led by the header row (kb.ingestion.parsers.tables)."""
    header, *rows = table.rows
    head_lines = [(markdown_row(header), table.row_boxes[0]), (separator(len(header)), table.row_boxes[0])]
    lines = [markdown_row(row) for row in rows]
    out = []
    for group in row_groups(lines, head_chars=sum(len(t) + 1 for t, _ in head_lines)):
        out.append(Block("table", [*head_lines, *((lines[i], table.row_boxes[i + 1]) for i in group)]))
    return out


def clean_cell(cell: str | None) -> str:
    """A cell's text on one line, wrapped CJK joined without spaces."""
    lines = [line.strip() for line in (cell or "").splitlines() if line.strip()]
    text = lines[0] if lines else ""
    for line in lines[1:]:
        text += join_gap(text, line) + line
    return text


def body_font_size(sizes: list[float]) -> float:
    """The most common character size, rounded to half points: the size of the running text."""
    rounded = [round(s * 2) / 2 for s in sizes if s]
    if not rounded:
        return 10.0
    return statistics.mode(rounded)
