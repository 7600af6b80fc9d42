"""Tables as Markdown: split into blocks that each start with the header row, so that a piece of a long
table retrieved on its own still says what its columns are."""
from __future__ import annotations

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
