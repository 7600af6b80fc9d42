"""Evaluation items from a JSON body or an uploaded JSON, CSV or XLSX file, each error naming its row and field.

In CSV and XLSX cells, `|` separates alternatives and `&&` the parts of one alternative that must all appear
(`十天|10天`, `E2&&restart`); `documents` and `history` are separated by `|`.
"""
from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

MAX_ITEMS = 20_000
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_QUESTION_CHARS = 2_000
MAX_CATEGORY_CHARS = 64
COLUMNS = ("question", "answers", "documents", "category", "history")
TEMPLATE_ROWS = (
    {"question": "年假有几天？", "answers": [["5天"], ["五天"]], "documents": ["员工手册"], "category": "short",
     "history": []},
    {"question": "What does error code E2 mean?", "answers": [["E2", "restart"]], "documents": ["X100 manual"],
     "category": "manual", "history": []},
    {"question": "它的保修期呢？", "answers": [["2年"]], "documents": ["X100 manual"], "category": "followup",
     "history": ["X100 的额定功率是多少？"]},
)


@dataclass(frozen=True)
class RowError:
    row: int
    field: str
    message: str

    def as_text(self) -> str:
        return _("row %(row)s, %(field)s: %(message)s") % {"row": self.row, "field": self.field,
                                                           "message": self.message}


class ImportFailed(ValueError):
    """The input cannot become items; `errors` name each bad row and field (nothing was saved)."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        shown = "; ".join(e.as_text() for e in errors[:5])
        more = len(errors) - 5
        super().__init__(shown + (_(" (and %(n)s more)") % {"n": more} if more > 0 else ""))


@dataclass(frozen=True)
class ItemData:
    question: str
    answers: list[list[str]]
    documents: list[str]
    category: str
    history: list[str]
    row: int = 0  # where it came from: the file's row or the item's number, for errors found later


def _strings(value: Any, *, row: int, field: str, errors: list[RowError]) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                                              for v in value):
        errors.append(RowError(row, field, _("must be a list of texts")))
        return []
    return [str(v).strip() for v in value if str(v).strip()]


def validate_item(raw: Any, *, row: int, errors: list[RowError]) -> ItemData | None:
    """One item from JSON-like data; appends to `errors` and returns None when it is not valid."""
    if not isinstance(raw, dict):
        errors.append(RowError(row, "item", _("must be an object with a question")))
        return None
    before = len(errors)
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        errors.append(RowError(row, "question", _("is required")))
        question = ""
    elif len(question) > MAX_QUESTION_CHARS:
        errors.append(RowError(row, "question", _("is longer than %(n)s characters") % {"n": MAX_QUESTION_CHARS}))
    answers: list[list[str]] = []
    raw_answers = raw.get("answers", [])
    if isinstance(raw_answers, str):
        raw_answers = [raw_answers]
    if not isinstance(raw_answers, list):
        errors.append(RowError(row, "answers", _("must be a list of alternatives, each a text or a list of texts")))
    else:
        for alternative in raw_answers:
            parts = _strings(alternative, row=row, field="answers", errors=errors)
            if parts:
                answers.append(parts)
    documents = _strings(raw.get("documents"), row=row, field="documents", errors=errors)
    history = _strings(raw.get("history"), row=row, field="history", errors=errors)
    category = raw.get("category") or "general"
    if not isinstance(category, str) or len(category.strip()) > MAX_CATEGORY_CHARS:
        errors.append(RowError(row, "category", _("must be a text of at most %(n)s characters")
                               % {"n": MAX_CATEGORY_CHARS}))
        category = "general"
    if len(errors) > before:
        return None
    return ItemData(question=question.strip(), answers=answers, documents=documents,
                    category=category.strip() or "general", history=history, row=row)


def validate_items(rows: Any, *, first_row: int = 1) -> list[ItemData]:
    if not isinstance(rows, list):
        raise ImportFailed([RowError(0, "items", _("must be a list"))])
    if len(rows) > MAX_ITEMS:
        raise ImportFailed([RowError(0, "items", _("at most %(n)s items a set") % {"n": MAX_ITEMS})])
    errors: list[RowError] = []
    items = [validate_item(raw, row=n, errors=errors) for n, raw in enumerate(rows, first_row)]
    if errors:
        raise ImportFailed(errors)
    return [i for i in items if i is not None]


def _cell_row(cells: dict[str, Any]) -> dict[str, Any]:
    """A CSV/XLSX row's cells as the JSON shape."""
    def split(value: Any) -> list[str]:
        text = "" if value is None else str(value)
        return [part.strip() for part in text.split("|") if part.strip()]

    return {"question": "" if cells.get("question") is None else str(cells.get("question")),
            "answers": [[p.strip() for p in alt.split("&&") if p.strip()] for alt in split(cells.get("answers"))],
            "documents": split(cells.get("documents")), "category": str(cells.get("category") or "").strip(),
            "history": split(cells.get("history"))}


def _table(header: list[Any], body: list[tuple[int, list[Any]]]) -> list[ItemData]:
    names = [str(h or "").strip().lower() for h in header]
    if "question" not in names:
        raise ImportFailed([RowError(1, "question", _("the header row has no question column"))])
    rows = [(n, {names[i]: v for i, v in enumerate(values) if i < len(names) and names[i] in COLUMNS})
            for n, values in body if any(v not in (None, "") for v in values)]
    if len(rows) > MAX_ITEMS:
        raise ImportFailed([RowError(0, "items", _("at most %(n)s items a set") % {"n": MAX_ITEMS})])
    errors: list[RowError] = []
    items = [validate_item(_cell_row(cells), row=n, errors=errors) for n, cells in rows]
    if errors:
        raise ImportFailed(errors)
    return [i for i in items if i is not None]


def parse_file(name: str, data: bytes) -> list[ItemData]:
    """Items from a .json/.jsonl, .csv or .xlsx file; ImportFailed names the bad rows and fields."""
    if len(data) > MAX_FILE_BYTES:
        raise ImportFailed([RowError(0, "file", _("is larger than %(n)s MB") % {"n": MAX_FILE_BYTES // 2**20})])
    suffix = name.lower().rpartition(".")[2]
    if suffix in ("json", "jsonl"):
        return _parse_json(data)
    if suffix == "csv":
        return _parse_csv(data)
    if suffix == "xlsx":
        return _parse_xlsx(data)
    raise ImportFailed([RowError(0, "file", _("must be a .json, .jsonl, .csv or .xlsx file"))])


def _parse_json(data: bytes) -> list[ItemData]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFailed([RowError(0, "file", _("is not UTF-8 text"))]) from None
    stripped = text.lstrip()
    try:
        if stripped.startswith(("[", "{")) and not _looks_like_lines(stripped):
            parsed = json.loads(stripped)
            rows = parsed.get("items") if isinstance(parsed, dict) else parsed
            return validate_items(rows)
    except json.JSONDecodeError as exc:
        raise ImportFailed([RowError(exc.lineno, "file", _("is not valid JSON: %(e)s") % {"e": exc.msg})]) from None
    rows, errors = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            errors.append(RowError(n, "line", _("is not valid JSON: %(e)s") % {"e": exc.msg}))
    if errors:
        raise ImportFailed(errors)
    if len(rows) > MAX_ITEMS:
        raise ImportFailed([RowError(0, "items", _("at most %(n)s items a set") % {"n": MAX_ITEMS})])
    items = [validate_item(raw, row=n, errors=errors) for n, raw in rows]
    if errors:
        raise ImportFailed(errors)
    return [i for i in items if i is not None]


def _looks_like_lines(text: str) -> bool:
    """JSON lines: the first line is a whole object on its own."""
    first = text.split("\n", 1)[0].strip()
    try:
        return isinstance(json.loads(first), dict) and "\n" in text.strip()
    except json.JSONDecodeError:
        return False


def _parse_csv(data: bytes) -> list[ItemData]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFailed([RowError(0, "file", _("is not UTF-8 text"))]) from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise ImportFailed([RowError(0, "file", _("is not valid CSV: %(e)s") % {"e": exc})]) from None
    if not rows:
        raise ImportFailed([RowError(1, "question", _("the header row has no question column"))])
    return _table(rows[0], [(n, list(r)) for n, r in enumerate(rows[1:], 2)])


def _parse_xlsx(data: bytes) -> list[ItemData]:
    # heavy: openpyxl (about 0.4 s) loads only for an .xlsx import; django.setup() loads this module
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, OSError, KeyError, ValueError):
        raise ImportFailed([RowError(0, "file", _("is not a valid .xlsx workbook"))]) from None
    try:
        sheet = book.worksheets[0]
        rows = list(sheet.iter_rows(values_only=True, max_row=MAX_ITEMS + 2))
    finally:
        book.close()
    if not rows:
        raise ImportFailed([RowError(1, "question", _("the header row has no question column"))])
    return _table(list(rows[0]), [(n, list(r)) for n, r in enumerate(rows[1:], 2)])


def template(kind: str) -> tuple[bytes, str]:
    """A small example file of `kind` (json, csv or xlsx) and its content type."""
    if kind == "json":
        return (json.dumps(list(TEMPLATE_ROWS), ensure_ascii=False, indent=1).encode(), "application/json")
    table = [list(COLUMNS)] + [[row["question"], "|".join("&&".join(a) for a in row["answers"]),
                                "|".join(row["documents"]), row["category"], "|".join(row["history"])]
                               for row in TEMPLATE_ROWS]
    if kind == "csv":
        out = io.StringIO()
        csv.writer(out).writerows(table)
        return ("\ufeff" + out.getvalue()).encode(), "text/csv; charset=utf-8"
    if kind == "xlsx":
        # heavy: openpyxl, as in _parse_xlsx
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        for row in table:
            sheet.append(row)
        buffer = io.BytesIO()
        book.save(buffer)
        return buffer.getvalue(), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    raise ValueError(kind)
