"""Tables as Markdown: plain text's columns aligned by spaces become a table."""
from __future__ import annotations

from kb.ingestion.parsers import parse_located
from kb.ingestion.parsers.tables import aligned_tables

SALES = """各大区情况如下：
大区  三季度收入（万元）  目标完成率  同比增长
华东  7420                108%        22%
华南  5130                101%        15%
华北  3960                97%         12%

华北大区未完成目标。"""


def test_columns_aligned_by_spaces_become_a_markdown_table_with_the_first_line_as_header():
    assert aligned_tables(SALES).split("\n") == [
        "各大区情况如下：",
        "| 大区 | 三季度收入（万元） | 目标完成率 | 同比增长 |",
        "|---|---|---|---|",
        "| 华东 | 7420 | 108% | 22% |",
        "| 华南 | 5130 | 101% | 15% |",
        "| 华北 | 3960 | 97% | 12% |",
        "",
        "华北大区未完成目标。",
    ]


def test_tab_separated_columns_are_a_table_too():
    assert aligned_tables("Name\tRole\nAlice\tEngineer\nBob\tDesigner").split("\n")[:2] == ["| Name | Role |",
                                                                                         "|---|---|"]


def test_prose_typed_with_two_spaces_after_a_full_stop_stays_prose():
    prose = "Hello there.  This is prose.  Typed with care.\nAnother line.  And more.\nThird.  Fourth."
    assert aligned_tables(prose) == prose


def test_two_aligned_lines_or_rows_of_other_widths_are_no_table():
    two = "Name  Role\nAlice  Engineer"
    uneven = "Name  Role\nAlice  Engineer  Shanghai\nBob  Designer"
    assert aligned_tables(two) == two
    assert aligned_tables(uneven) == uneven


def test_a_text_file_is_parsed_with_its_aligned_table_and_a_markdown_file_as_written():
    data = SALES.encode("utf-8")
    assert "| 华北 | 3960 | 97% | 12% |" in parse_located(data, "txt").text
    assert "华北  3960" in parse_located(data, "md").text
