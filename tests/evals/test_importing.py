"""Import of evaluation items: JSON, JSON lines, CSV; every error names its row and field."""
from __future__ import annotations

import json

import pytest
from django.utils import translation

from evals.importing import ImportFailed, parse_file, validate_items


def test_json_lines_errors_name_the_line():
    data = b'{"question": "a?", "answers": ["x"]}\n{"question": 3}\nnot json\n'
    with pytest.raises(ImportFailed) as caught:
        parse_file("set.jsonl", data)
    assert [(e.row, e.field) for e in caught.value.errors] == [(3, "line")]


def test_a_json_list_with_a_bad_field_names_the_item_and_field():
    data = json.dumps({"items": [{"question": "a?"}, {"question": "b?", "answers": {"x": 1}}]}).encode()
    with pytest.raises(ImportFailed) as caught:
        parse_file("set.json", data)
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "answers")]
    with translation.override("en"):
        assert "row 2, answers" in caught.value.errors[0].as_text()


def test_answers_keep_alternatives_and_parts():
    items = validate_items([{"question": "q", "answers": ["十天", ["E2", "restart"]], "history": ["earlier"]}])
    assert items[0].answers == [["十天"], ["E2", "restart"]] and items[0].history == ["earlier"]
    assert items[0].category == "general"


def test_a_csv_without_a_question_column_is_refused():
    with pytest.raises(ImportFailed, match="question"):
        parse_file("set.csv", b"q,answers\nx,y\n")


def test_an_unknown_file_type_is_refused():
    with pytest.raises(ImportFailed, match="file"):
        parse_file("set.txt", b"x")


def test_a_broken_xlsx_is_refused():
    with pytest.raises(ImportFailed, match="xlsx"):
        parse_file("set.xlsx", b"PK not really")
