"""Tables as Markdown: split into blocks that each start with the header row, so that a piece of a long
table retrieved on its own still says what its columns are."""
from __future__ import annotations

import re

# A table is rendered in Markdown blocks of at most about this many characters.
TABLE_BLOCK_CHARS = 400


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("\n", " ").replace("|", "\\|").strip() for cell in cells) + " |"


def separator(columns: int) -> str:
    return "|" + "---|" * columns


def row_groups(lines: list[str], *, head_chars: int, budget: int = TABLE_BLOCK_CHARS) -> list[list[int]]:
    """Indexes of body rows (lines[i]) grouped so that header + group stays within `budget` (one row at least)."""
    groups: list[list[int]] = []
    current: list[int] = []
    size = head_chars
    for index, line in enumerate(lines):
        if current and size + len(line) + 1 > budget:
            groups.append(current)
            current, size = [], head_chars
        current.append(index)
        size += len(line) + 1
    if current or not groups:
        groups.append(current)
    return groups


def square(rows: list[list[str]]) -> list[list[str]]:
    """Rows padded to the same width, empty rows and empty trailing columns dropped."""
    rows = [[cell.strip() for cell in row] for row in rows]
    rows = [row for row in rows if any(row)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    while width > 1 and not any(r[width - 1] for r in rows):
        width -= 1
    return [r[:width] for r in rows]


# Plain text lays a table out in columns aligned by spaces or tabs ("华东  7420  108%"): a gap of two spaces or more,
# or a tab, separates its cells.
_GAP = re.compile(r"\t+|\s{2,}")
# A cell of such a table is short and is no sentence: prose typed with two spaces after a full stop splits into
# pieces ending in one, and a long piece is a line of text, not a cell.
ALIGNED_CELL_CHARS = 40
_SENTENCE_END = re.compile(r"[。！？；.!?;]$")
# Lines that make a table at least: a header and two rows, so that two lines that happen to share a gap are not one.
ALIGNED_MIN_LINES = 3


def _aligned_cells(line: str) -> list[str] | None:
    cells = _GAP.split(line.strip())
    if len(cells) < 2 or any(not c or len(c) > ALIGNED_CELL_CHARS or _SENTENCE_END.search(c) for c in cells):
        return None
    return cells


def aligned_tables(text: str) -> str:
    """`text` with each run of at least ALIGNED_MIN_LINES consecutive lines laid out in the same number of columns
    (cells apart by two spaces or more, or a tab) written as a Markdown table, its first line the header: the reader
    and the answers then see rows with their columns' names instead of the lines run together."""
    lines = text.split("\n")
    cells = [_aligned_cells(line) for line in lines]
    out: list[str] = []
    i = 0
    while i < len(lines):
        first = cells[i]
        j = i + 1
        while first is not None and j < len(lines) and cells[j] is not None and len(cells[j]) == len(first):
            j += 1
        if first is None or j - i < ALIGNED_MIN_LINES:
            out.append(lines[i])
            i += 1
            continue
        out.extend([markdown_row(first), separator(len(first)), *(markdown_row(row) for row in cells[i + 1:j])])
        i = j
    return "\n".join(out)
