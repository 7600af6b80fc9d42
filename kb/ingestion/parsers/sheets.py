"""Spreadsheets → text: .xlsx (openpyxl, streaming) and .csv, each row written with its header, per sheet,
with the sheet and row numbers as each row's location; rows and cells bounded."""
from __future__ import annotations

import csv
import datetime as dt
import io
import logging

from kb.ingestion import reasons
from kb.ingestion.parsers.archive import open_zip, reading
from kb.ingestion.parsers.base import ParsedText, ParseError, ParseLimits, TextBuilder
from kb.ingestion.parsers.text import decode_text

log = logging.getLogger(__name__)
_KIND = reasons.SPREADSHEET
# Rows per block: a block is one run of "header: value" lines.
_ROWS_PER_BLOCK = 20


class _Counter:
    def __init__(self, limits: ParseLimits) -> None:
        self.limits, self.rows, self.cells = limits, 0, 0

    def add(self, cells: int, sheet: str | None) -> None:
        self.rows += 1
        self.cells += cells
        if self.rows > self.limits.max_rows:
            raise ParseError((reasons.ROWS_TOO_MANY_IN_SHEET if sheet else reasons.ROWS_TOO_MANY)
                             % {"limit": f"{self.limits.max_rows:,}", "sheet": repr(sheet)})
        if self.cells > self.limits.max_cells:
            raise ParseError((reasons.CELLS_TOO_MANY_IN_SHEET if sheet else reasons.CELLS_TOO_MANY)
                             % {"limit": f"{self.limits.max_cells:,}", "sheet": repr(sheet)})


def xlsx_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    archive = open_zip(data, limits=limits, kind=_KIND)
    with reading(_KIND):
        # heavy: openpyxl (about 0.4 s) loads only for .xlsx, never for .csv
        import openpyxl

        book = openpyxl.load_workbook(archive.fp, read_only=True, data_only=True)
    builder = TextBuilder(limits)
    counter = _Counter(limits)
    try:
        for sheet in book.worksheets:
            declared = (sheet.max_row or 0) * (sheet.max_column or 0)
            if (sheet.max_row or 0) > limits.max_rows or declared > limits.max_cells:
                raise ParseError(reasons.SHEET_TOO_LARGE % {
                    "sheet": repr(sheet.title), "rows": f"{sheet.max_row:,}", "columns": f"{sheet.max_column:,}",
                    "max_rows": f"{limits.max_rows:,}", "max_cells": f"{limits.max_cells:,}"})
            rows = ((number, [_cell(v) for v in values])
                    for number, values in enumerate(sheet.iter_rows(values_only=True), 1))
            _sheet(builder, counter, sheet.title, rows)
    finally:
        book.close()
    return builder.build()


def csv_parse(data: bytes, *, limits: ParseLimits) -> ParsedText:
    text = decode_text(data)
    try:
        dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    builder = TextBuilder(limits)
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        _sheet(builder, _Counter(limits), None, ((reader.line_num, row) for row in reader))
    except csv.Error as exc:
        # The csv module's own message is English prose: the log keeps it, the reason says it in a template.
        log.info("a CSV file could not be read at line %s: %s", reader.line_num, exc)
        if str(exc).startswith("field larger than field limit"):
            raise ParseError(reasons.CSV_FIELD_TOO_LONG % {"limit": f"{csv.field_size_limit():,}",
                                                           "line": f"{reader.line_num:,}"}) from None
        raise ParseError(reasons.CSV_MALFORMED % {"line": f"{reader.line_num:,}"}) from None
    return builder.build()


def _sheet(builder: TextBuilder, counter: _Counter, name: str | None, rows) -> None:
    """A sheet's rows as "header: value" lines. Rows of one cell above the first row of several are the sheet's
    title or caption, not its header: they are written as they are, and the header is the row of several cells
    below them. Below the header, a row of one cell in a table of several columns is a note or a group's name,
    written as it is rather than labelled with the first column's name. A sheet of one column keeps its first row
    as the header."""
    header: list[str] | None = None
    above: list[tuple[int, list[str]]] = []  # one-cell rows before the first row of several cells
    block: list[tuple[str, dict | None]] = []

    def start(number: int, cells: list[str], titles: list[tuple[int, list[str]]]) -> None:
        if name:
            builder.block(f"## {name}", {"sheet": name, "rows": [number, number]})
        for at, line in titles:
            builder.block(line[-1], {"sheet": name, "rows": [at, at]})
        builder.block(" | ".join(c for c in cells if c), {"sheet": name, "rows": [number, number]})

    def record(number: int, cells: list[str]) -> None:
        nonlocal block
        if block:
            block.append(("\n", None))
        alone = sum(1 for c in cells if c) == 1 and sum(1 for c in header if c) >= 2
        text = next(c for c in cells if c) if alone else _row_text(header, cells)
        block.append((text, {"sheet": name, "rows": [number, number]}))
        if len(block) >= 2 * _ROWS_PER_BLOCK - 1:
            builder.block(block)
            block = []

    for number, cells in rows:
        counter.add(len(cells), name)
        while cells and not cells[-1]:
            cells.pop()
        cells = [" ".join(c.split()) for c in cells]
        if not any(cells):
            continue
        if header is None:
            if sum(1 for c in cells if c) == 1:
                above.append((number, cells))
                continue
            header = cells
            start(number, cells, above)
            continue
        record(number, cells)
    if header is None and above:  # a sheet of one column: its first row is the header
        (number, header), *rest = above
        start(number, header, [])
        for at, cells in rest:
            record(at, cells)
    if block:
        builder.block(block)


def _row_text(header: list[str], cells: list[str]) -> str:
    """"套餐: 基础版; 价格: 99元": a row read on its own still says what each value is."""
    parts = []
    for index, value in enumerate(cells):
        if not value:
            continue
        label = header[index] if index < len(header) and header[index] else ""
        parts.append(f"{label}: {value}" if label else value)
    return "; ".join(parts)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)
