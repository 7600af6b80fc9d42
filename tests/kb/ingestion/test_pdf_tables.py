"""A table drawn without a grid reads as a Markdown table at its place, its continuation on the next page led by
its header; a bulleted list whose wrapped lines line up stays a list, and so do paragraphs whose words do."""
import pytest

from kb.ingestion.parsers import parse_located
from tests.kb.ingestion.files import PROSE_SECTIONS, prose_pdf, unruled_table_pdf


@pytest.fixture(scope="module")
def text():
    return parse_located(unruled_table_pdf(), "pdf").text


def test_a_table_without_rules_is_a_markdown_table_between_the_paragraphs_around_it(text):
    table = ("| 信息类别 | 保存期限 | 到期处理 |\n|---|---|---|\n"
             "| 员工档案 | 离职后2年 | 删除 |\n| 求职简历 | 6个月 | 删除 |")
    assert table in text
    assert text.index("见下表。") < text.index(table)


def test_its_rows_on_the_next_page_are_led_by_its_header(text):
    continued = ("| 信息类别 | 保存期限 | 到期处理 |\n|---|---|---|\n"
                 "| 考勤记录 | 3年 | 删除 |\n| 监控录像 | 30天 | 自动覆盖 |")
    assert continued in text
    assert text.index(continued) < text.index("表格之后的说明文字。")


def test_a_bulleted_list_is_not_read_as_a_table_and_each_item_is_its_own_paragraph(text):
    assert "• 数据库每天凌晨两点全量备份，保留三十天。\n\n• 日志每周归档一次，保留一年。" in text
    assert text.count("|---|---|---|\n") == 2


def test_paragraphs_whose_words_happen_to_line_up_stay_paragraphs_with_their_headings():
    text = parse_located(prose_pdf(), "pdf").text

    assert "|" not in text
    for heading, paragraph in PROSE_SECTIONS:
        assert f"## {heading}" in text and paragraph in text
