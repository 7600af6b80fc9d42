"""Spreadsheets, slides, Word tables and web pages: each piece where it stands, with its place recorded;
oversized sheets refused with the bound they passed."""
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from kb.ingestion.parsers import ParseError, ParseLimits, parse_located
from tests.kb.ingestion.files import docx_with_table, pptx_bytes, xlsx_bytes

PRICES = [["套餐", "价格", "时长"], ["基础版", 99, "30天"], ["专业版", 299.0, "90天"]]


def _location_of(parsed, fragment):
    at = parsed.text.index(fragment)
    return next(loc for start, end, loc in parsed.spans if start <= at < end)


def test_each_sheet_row_is_written_with_its_header_and_located_by_sheet_and_row():
    parsed = parse_located(xlsx_bytes({"价格表": PRICES, "说明": [["条款"], ["不退款"]]}), "xlsx")
    assert "## 价格表" in parsed.text and "## 说明" in parsed.text
    assert "套餐: 基础版; 价格: 99; 时长: 30天" in parsed.text
    assert "套餐: 专业版; 价格: 299; 时长: 90天" in parsed.text  # 299.0 is shown as the sheet shows it
    assert _location_of(parsed, "套餐: 专业版") == {"sheet": "价格表", "rows": [3, 3]}
    assert _location_of(parsed, "条款: 不退款") == {"sheet": "说明", "rows": [2, 2]}


def test_a_csv_row_is_written_with_its_header():
    parsed = parse_located(b"name;price\nbasic;99\npro;299\n", "csv")
    assert "name: pro; price: 299" in parsed.text
    assert _location_of(parsed, "name: pro") == {"sheet": None, "rows": [3, 3]}


def test_a_50000_row_sheet_is_refused_naming_the_bound():
    rows = "\n".join(f"{i},{i * 2}" for i in range(50_000))
    with pytest.raises(ParseError, match="more than 20,000 rows"):
        parse_located(("a,b\n" + rows).encode(), "csv")


def test_a_workbook_declaring_more_rows_than_the_bound_is_refused_before_reading_them():
    data = xlsx_bytes({"大表": [["a"]] + [[i] for i in range(30)]})
    with pytest.raises(ParseError, match="'大表' has 31 rows"):
        parse_located(data, "xlsx", limits=ParseLimits(max_rows=20))


def test_slides_are_read_in_order_with_their_notes_and_numbers():
    data = pptx_bytes([{"title": "季度总结", "body": "收入增长20%\n成本下降", "notes": "讲者备注：强调增长"},
                       {"title": "价格", "table": [["套餐", "价格"], ["基础版", "99元"]]}])
    parsed = parse_located(data, "pptx")
    text = parsed.text
    order = [text.index(s) for s in ("## 季度总结", "收入增长20%", "讲者备注：强调增长", "## 价格")]
    assert order == sorted(order)
    assert "| 套餐 | 价格 |\n|---|---|\n| 基础版 | 99元 |" in text
    assert _location_of(parsed, "讲者备注") == {"slide": 1}
    assert _location_of(parsed, "| 基础版") == {"slide": 2}


def test_a_content_slide_s_bullets_are_list_items_and_a_text_box_s_lines_are_not():
    import pptx
    from pptx.util import Emu

    deck = pptx.Presentation(io.BytesIO(pptx_bytes([{"title": "回滚条件", "body": "错误率超过2%\n延迟超过800毫秒"}])))
    box = deck.slides[0].shapes.add_textbox(Emu(0), Emu(5_000_000), Emu(4_000_000), Emu(800_000))
    box.text_frame.text = "负责人：李娜\n备份：王强"
    buffer = io.BytesIO()
    deck.save(buffer)

    text = parse_located(buffer.getvalue(), "pptx").text
    assert "- 错误率超过2%\n- 延迟超过800毫秒" in text
    assert "负责人：李娜\n备份：王强" in text and "- 负责人" not in text


def test_a_word_table_stays_between_the_paragraphs_around_it():
    data = docx_with_table("表格前的段落。", [["套餐", "价格"], ["基础版", "99元"]], "表格后的段落。")
    text = parse_located(data, "docx").text
    table = "| 套餐 | 价格 |\n|---|---|\n| 基础版 | 99元 |"
    assert text.index("表格前的段落。") < text.index(table) < text.index("表格后的段落。")


def test_a_web_page_keeps_its_main_content_and_tables_without_navigation_or_footer():
    page = """<html><body><nav><a href="/">首页</a><a href="/p">产品中心</a></nav>
    <header class="site-header">网站标题</header><div class="sidebar">热门文章</div>
    <main><h1>退款政策</h1><p>订单在<b>7天</b>内可退款。</p>
    <table><tr><th>类型</th><th>时限</th></tr><tr><td>普通</td><td>7天</td></tr></table>
    <div class="share-buttons">分享到微博</div></main><footer>版权所有 © 2026</footer></body></html>"""
    text = parse_located(page.encode(), "html").text
    assert "# 退款政策" in text and "订单在7天内可退款。" in text
    assert "| 类型 | 时限 |\n|---|---|\n| 普通 | 7天 |" in text
    for boilerplate in ("首页", "产品中心", "网站标题", "热门文章", "分享到微博", "版权所有"):
        assert boilerplate not in text


def test_a_saved_cms_page_loses_its_breadcrumb_counters_and_neighbours_but_keeps_its_date_and_text():
    page = """<body><div class="top-bar">您好，请 <a>登录</a> | <a>注册</a></div>
    <div class="pos">当前位置：<a>首页</a> &gt; <a>办事服务</a> &gt; 正文</div>
    <h1>社保卡办理指南</h1><p class="info">发布时间：2024-03-08 来源：服务中心 浏览次数：28417 字号：大 中 小</p>
    <p>补办社保卡收取工本费20元。</p><div class="article-tool">【打印】 【关闭】</div>
    <div class="prenext"><p>上一篇：<a>医保缴费通知</a></p></div><p>下一篇：退休认证常见问题</p>
    <div class="foot"><p>咨询电话：12333 澄ICP备05012345号</p></div><div class="float-btn">在线客服</div></body>"""
    text = parse_located(page.encode(), "html").text
    assert "补办社保卡收取工本费20元。" in text and "发布时间：2024-03-08 来源：服务中心" in text
    for boilerplate in ("登录", "当前位置", "28417", "大 中 小", "打印", "上一篇", "下一篇", "ICP", "在线客服"):
        assert boilerplate not in text


def test_content_named_like_furniture_stays_when_it_holds_the_title_or_most_of_the_page():
    page = """<body><div class="header"><a>首页</a> | <a>登录</a></div>
    <div class="article-header"><h1>招聘启事</h1><p>发布时间：2024-05-06</p></div>
    <div class="job-position">岗位：前端工程师，工作地点：上海，三年以上经验。</div>
    <div class="content-header">本页介绍公司的招聘岗位、待遇、福利、面试流程和联系方式，
    欢迎投递简历，我们会在五个工作日内回复每一位应聘者。</div>
    </body>"""
    text = parse_located(page.encode(), "html").text
    assert "招聘启事" in text and "前端工程师" in text and "五个工作日内回复" in text
    assert "登录" not in text


def test_a_merged_table_cell_is_read_in_every_row_and_column_it_spans():
    page = """<main><table><tr><th>项目</th><th>境内</th><th>境外</th></tr>
    <tr><td>取现利息</td><td colspan="2">日利率万分之五</td></tr>
    <tr><td rowspan="2">年费</td><td>主卡200元</td><td>主卡300元</td></tr>
    <tr><td>附属卡免费</td><td>附属卡100元</td></tr>
    </table></main>"""
    text = parse_located(page.encode(), "html").text
    assert "| 取现利息 | 日利率万分之五 | 日利率万分之五 |" in text
    assert "| 年费 | 主卡200元 | 主卡300元 |" in text and "| 年费 | 附属卡免费 | 附属卡100元 |" in text


def test_a_page_without_a_main_element_keeps_its_body_minus_the_furniture():
    page = "<body><nav>菜单</nav><div><p>正文第一段。</p></div><footer>页脚</footer></body>"
    assert parse_located(page.encode(), "html").text == "正文第一段。"


WEB_PAGES = Path(__file__).resolve().parents[3] / "eval" / "webpages"


def _normalised(text: str) -> str:
    return re.sub(r"\s+", "", re.sub(r"(?<=\d)[,，](?=\d{3})", "", text.lower()))


def test_every_gold_answer_of_the_saved_web_pages_survives_the_removal_of_page_furniture():
    rows = [json.loads(line) for line in (WEB_PAGES / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = {page.name: _normalised(parse_located(page.read_bytes(), "html").text)
             for page in (WEB_PAGES / "docs").iterdir()}
    # An alternative that is a list needs all its parts on one page.
    lost = [row["id"] for row in rows if row["documents"] and not any(
        all(_normalised(part) in texts[name] for part in ([answer] if isinstance(answer, str) else answer))
        for answer in row["answers"] for name in row["documents"])]
    assert len(texts) == 10 and lost == []


@pytest.mark.parametrize(("kind", "says"), [("docx", "not a .docx file"), ("pptx", "not a .pptx file"),
                                            ("xlsx", "not an .xlsx file")])
def test_a_zip_that_is_not_the_office_file_it_claims_is_refused_saying_what_to_check(kind, says):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "a zip holding none of the parts an Office file has")
    with pytest.raises(ParseError) as refused:
        parse_located(buffer.getvalue(), kind)
    assert says in str(refused.value) and "Error" not in str(refused.value)


def test_a_sheet_title_above_the_header_is_written_as_a_title_and_the_header_names_the_columns():
    rows = [["仓库安全操作规程（2025年版）"], ["作业区域", "叉车限速"], ["装卸平台", "3 km/h"], ["货架区", "5 km/h"],
            ["其他要求：严禁载人。"]]
    parsed = parse_located(xlsx_bytes({"叉车作业": rows}), "xlsx")
    assert "作业区域: 装卸平台; 叉车限速: 3 km/h" in parsed.text
    assert "仓库安全操作规程（2025年版）:" not in parsed.text and "仓库安全操作规程（2025年版）" in parsed.text
    assert "作业区域: 其他要求" not in parsed.text and "其他要求：严禁载人。" in parsed.text
    assert _location_of(parsed, "仓库安全操作规程") == {"sheet": "叉车作业", "rows": [1, 1]}
    assert _location_of(parsed, "其他要求") == {"sheet": "叉车作业", "rows": [5, 5]}
