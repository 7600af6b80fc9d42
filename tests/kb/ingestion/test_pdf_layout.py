"""PDFs read as a person reads them: columns in order, wrapped CJK lines whole, running headers and page
numbers gone, tables as Markdown in place, each line's page and box recorded; bad files refused clearly."""
import pytest

from kb.ingestion.parsers import ParseError, ParseLimits, parse_located
from kb.ingestion.parsers.pdf_layout import join_gap
from tests.kb.ingestion.files import blank_pdf, bulleted_pdf, password_pdf, scanned_pdf, two_column_pdf


@pytest.fixture(scope="module")
def parsed():
    return parse_located(two_column_pdf(), "pdf")


def test_a_number_wrapped_at_a_line_end_stays_with_its_unit(parsed):
    assert "密码每90天必须更换一次，不得重复使用最近五次的密码。" in parsed.text


def test_the_left_column_is_read_before_the_right_one(parsed):
    left = parsed.text.index("最近五次的密码。")
    right = parsed.text.index("备份策略")
    assert left < right
    assert "备份保留三十天。" in parsed.text  # the right column's lines are not interleaved with the left's


def test_running_headers_and_page_numbers_are_dropped(parsed):
    assert "运维手册" not in parsed.text
    assert "第 1 页" not in parsed.text and "第 2 页" not in parsed.text


def test_a_table_is_a_markdown_table_at_its_place(parsed):
    table = "| 套餐 | 价格 | 时长 |\n|---|---|---|\n| 基础版 | 99元 | 30天 |\n| 专业版 | 299元 | 90天 |"
    assert table in parsed.text
    assert parsed.text.index("价格如下表所示。") < parsed.text.index(table) < parsed.text.index("表格之后的说明文字。")


def test_each_line_records_its_page_and_box(parsed):
    def location_of(fragment):
        at = parsed.text.index(fragment)
        return next(loc for start, end, loc in parsed.spans if start <= at < end)

    first = location_of("密码管理规定")
    assert first["page"] == 1
    x0, top, x1, bottom = first["boxes"][0]
    # Drawn at x=50 with its baseline 760 pt above the bottom of an 842 pt page; boxes count from the top.
    assert x0 == pytest.approx(50, abs=1) and top < 842 - 760 < bottom and x1 > x0
    assert location_of("备份策略")["boxes"][0][0] == pytest.approx(320, abs=1)
    assert location_of("| 基础版")["page"] == 2


def test_a_bullet_set_larger_than_its_text_is_no_heading_and_a_wrapped_amount_stays_in_its_sentence():
    text = parse_located(bulleted_pdf(), "pdf").text
    assert "## 4. Loss and theft" in text
    assert "## •" not in text and "• First loss within any 3-year period: no charge to the employee." in text
    assert "capped at USD 400." in text


def test_a_password_protected_pdf_is_refused_with_that_reason():
    with pytest.raises(ParseError, match="encrypted with a password"):
        parse_located(password_pdf(), "pdf")


def test_a_2000_page_pdf_is_refused_at_once_by_its_page_count():
    with pytest.raises(ParseError, match="has 2,000 pages; the limit is 1,000"):
        parse_located(blank_pdf(2000), "pdf", limits=ParseLimits())


def test_a_scanned_pdf_fails_saying_it_has_no_text_layer():
    with pytest.raises(ParseError, match="no text layer .*scanned: page 1"):
        parse_located(scanned_pdf(), "pdf")


@pytest.mark.parametrize(("before", "after", "gap"), [
    ("每90", "天", ""), ("密码每", "90天", ""), ("每1", "5天", ""), ("保存1", "2个月", ""),
    ("page 12", "34 items", " "),
    ("the quick", "brown fox", " "), ("manage-", "ment", ""),
    ("使用", "Docker", ""), ("A-", "B", " "),
])
def test_wrapped_lines_join_without_a_space_only_where_cjk_or_a_hyphen_breaks_them(before, after, gap):
    assert join_gap(before, after) == gap


def test_a_short_line_ending_a_sentence_closes_its_paragraph():
    from kb.ingestion.parsers.pdf_layout import Piece, blocks

    lines = [Piece("第一段第一行，内容很长很长很长很长很长很长很长", 50, 100, 300, 112, 12),
             Piece("第一段结束。", 50, 116, 122, 128, 12),
             Piece("第二段从这里开始，内容很长很长很长很长很长很长", 50, 132, 300, 144, 12),
             Piece("并且继续。", 50, 148, 110, 160, 12)]
    assert [[text for text, _ in b.lines] for b in blocks(lines, 12)] == [
        ["第一段第一行，内容很长很长很长很长很长很长很长", "第一段结束。"],
        ["第二段从这里开始，内容很长很长很长很长很长很长", "并且继续。"]]
