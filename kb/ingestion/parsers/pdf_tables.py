"""Tables drawn without a grid: rows of short cells whose left edges line up in three or more columns.

Exported reports and spec sheets often draw a table with no rules (or only a rule under the header), which
pdfplumber's ruled-table finder cannot see. Read line by line such a table is a scramble of cells: its columns
look like a page's text columns, and its rows run into each other. Here the words of consecutive lines are
tested for shared column starts — left edges that many lines have a word at and that (almost) no word of the
run crosses — and a run with at least three columns of short cells becomes a TableItem like a ruled one.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from kb.ingestion.parsers.pdf_layout import TableItem, is_cjk, word_rows

# Rows and columns a run needs to be read as a table: a header and two rows, three columns (two columns are a
# key/value list, which reads right line by line).
_MIN_ROWS = 3
_MIN_COLUMNS = 3
# Left edges within this many points are one column start.
_ALIGN_POINTS = 2.0
# A column start must be where at least this share of the run's lines has a word...
_START_SHARE = 0.5
# ...and which at most this share of the lines crosses with a word (a tight table merges a cell into the next).
_CROSS_SHARE = 0.2
# The lines of one table are at most this many line heights apart (top to top).
_MAX_ROW_PITCH = 2.6
# Cells are short: a run whose cells average more characters than this is text set in columns.
_MAX_MEAN_CELL_CHARS = 24
# The space before a column is wider than the space between the words of a cell: where the words that start the
# columns follow the word before them by no more than this many times the run's usual gap between words, the run
# is prose whose word starts happen to line up (ragged lines of a paragraph often share three), not a table. A
# priori: a table's columns are set apart by more than half a space again.
_MIN_COLUMN_GAP = 1.5
# A first column of bullets or list numbers is a list whose wrapped lines happen to line up.
_LIST_MARKER = re.compile(r"^(?:[•·▪◦●○■□\-–—*]|\(?\d{1,3}[.)、]|[a-z][.)])$", re.IGNORECASE)


@dataclass
class AlignedTable(TableItem):
    """A table found by its aligned column starts; `starts` lets the next page recognise its continuation."""

    starts: list[float] = field(default_factory=list)

    def continues_at(self, starts: list[float]) -> bool:
        """Whether rows with these column starts (at the top of the next page) go on with this table."""
        return len(self.starts) == len(starts) and all(
            abs(a - b) <= _ALIGN_POINTS for a, b in zip(self.starts, starts, strict=True))

    def with_header_of(self, first: AlignedTable) -> AlignedTable:
        """This continuation led by the header row of the page before, as a reader reads it."""
        if self.rows and self.rows[0] == first.rows[0]:
            return self  # the header was repeated on this page
        return AlignedTable([first.rows[0], *self.rows], [self.row_boxes[0], *self.row_boxes], self.x0, self.top,
                            self.x1, self.bottom, self.starts)


def aligned_tables(words: list[dict], follows: AlignedTable | None = None
                   ) -> tuple[list[dict], list[AlignedTable]]:
    """The words that are not in a table drawn without rules, and those tables, top to bottom. `follows`: the
    last such table of the page before; rows with its column starts continue it, however few they are (the
    first of them is then led by its header row)."""
    lines = word_rows(words)
    tables: list[AlignedTable] = []
    used: set[int] = set()
    start = 0
    while start < len(lines):
        found = _table_from(lines, start, follows if not tables else None)
        if found is None:
            start += 1
            continue
        end, table = found
        tables.append(table)
        for line in lines[start:end]:
            used.update(id(w) for w in line)
        start = end
    return [w for w in words if id(w) not in used], tables


def _height(line: list[dict]) -> float:
    return max(w["bottom"] - w["top"] for w in line) or 1.0


def _starts(run: list[list[dict]]) -> list[float]:
    """The column starts shared by the lines of `run`, left edge first; [] when fewer than two."""
    left = min(line[0]["x0"] for line in run)
    candidates: list[float] = []
    for x in sorted(w["x0"] for line in run for w in line):
        if x - left > _ALIGN_POINTS and (not candidates or x - candidates[-1] > _ALIGN_POINTS):
            candidates.append(x)
    starts = []
    for x in candidates:
        hits = sum(1 for line in run if any(abs(w["x0"] - x) <= _ALIGN_POINTS for w in line))
        crossed = sum(1 for line in run if any(w["x0"] < x - _ALIGN_POINTS and w["x1"] > x + 0.5 for w in line))
        if hits >= max(2, _START_SHARE * len(run)) and crossed <= _CROSS_SHARE * len(run):
            starts.append(x)
    return [left, *starts] if starts else []


def _table_from(lines: list[list[dict]], start: int, follows: AlignedTable | None
                ) -> tuple[int, AlignedTable] | None:
    """The longest table starting at line `start`: (the index after its last line, the table), or None."""
    best: tuple[int, list[float]] | None = None
    min_rows = _MIN_ROWS
    end = start + 1
    while end < len(lines):
        pitch = lines[end][0]["top"] - lines[end - 1][0]["top"]
        if pitch > _MAX_ROW_PITCH * _height(lines[end - 1]):
            break
        starts = _starts(lines[start:end + 1])
        if len(starts) < _MIN_COLUMNS:
            break
        end += 1
        if follows is not None and follows.continues_at(starts):
            min_rows = 2
        if end - start >= min_rows:
            best = (end, starts)
    if best is None:
        return None
    end, starts = best
    if _filled(lines[start], starts) < 2:
        return None  # a line of text above the table: the table starts at a later line
    if _spaced_as_prose(lines[start:end], starts):
        return None
    rows, boxes = _rows(lines[start:end], starts)
    full = sum(1 for row in rows if all(row))
    cells = [c for row in rows for c in row if c]
    if len(rows) < min_rows or full < 2 or statistics.mean(len(c) for c in cells) > _MAX_MEAN_CELL_CHARS \
            or all(_LIST_MARKER.match(row[0]) for row in rows):
        return None
    words = [w for line in lines[start:end] for w in line]
    return end, AlignedTable(rows, boxes, min(w["x0"] for w in words), min(w["top"] for w in words),
                             max(w["x1"] for w in words), max(w["bottom"] for w in words), starts)


def _spaced_as_prose(lines: list[list[dict]], starts: list[float]) -> bool:
    """Whether the words that open the columns follow the word before them as closely as the words of a cell do."""
    column, inner = [], []
    for line in lines:
        for before, word in zip(line, line[1:], strict=False):
            gap = word["x0"] - before["x1"]
            opens = any(abs(word["x0"] - x) <= _ALIGN_POINTS for x in starts[1:])
            (column if opens else inner).append(gap)
    return bool(column and inner) and statistics.median(column) < _MIN_COLUMN_GAP * statistics.median(inner)


def _filled(line: list[dict], starts: list[float]) -> int:
    """How many of the columns `line` has a word in."""
    return len({max(i for i, x in enumerate(starts) if w["x0"] >= x - _ALIGN_POINTS) for w in line
                if w["x0"] >= starts[0] - _ALIGN_POINTS})


def _rows(lines: list[list[dict]], starts: list[float]) -> tuple[list[list[str]], list[list[float]]]:
    """Each line's words put in the column they start in; a line with nothing in the first column continues the
    row above (a wrapped cell)."""
    rows: list[list[str]] = []
    boxes: list[list[float]] = []
    for line in lines:
        cells = [""] * len(starts)
        for word in line:
            column = max(i for i, x in enumerate(starts) if word["x0"] >= x - _ALIGN_POINTS)
            cells[column] = _join(cells[column], word["text"])
        box = [round(min(w["x0"] for w in line), 1), round(min(w["top"] for w in line), 1),
               round(max(w["x1"] for w in line), 1), round(max(w["bottom"] for w in line), 1)]
        if rows and not cells[0]:
            rows[-1] = [_join(before, after) for before, after in zip(rows[-1], cells, strict=True)]
            last = boxes[-1]
            boxes[-1] = [min(last[0], box[0]), last[1], max(last[2], box[2]), max(last[3], box[3])]
            continue
        rows.append(cells)
        boxes.append(box)
    return rows, boxes


def _join(before: str, after: str) -> str:
    if not before or not after:
        return before or after
    return before + ("" if is_cjk(before[-1]) or is_cjk(after[0]) else " ") + after
