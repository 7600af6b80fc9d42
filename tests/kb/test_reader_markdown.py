"""The reader renders a document's Markdown safely, marks the cited passage inside it, and titles slugs."""
from __future__ import annotations

import pytest

from kb.reader_markdown import display_title, render_section


def test_headings_lists_and_tables_are_rendered_not_shown_as_marks():
    html = render_section("# 退款规则\n\n- 三个工作日\n- 原路退回\n\n| 项目 | 天数 |\n|---|---|\n| 年假 | 15 |", "", "")
    assert "<h1>退款规则</h1>" in html and "<li>三个工作日</li>" in html and "<td>年假</td>" in html
    assert "#" not in html and "|" not in html


def test_raw_html_in_a_document_stays_text():
    html = render_section('说明：<script>alert(1)</script> <img src=x onerror="alert(2)">', "", "")
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html


def test_a_cited_heading_stays_a_heading_with_the_mark_inside():
    html = render_section("前言。\n\n", "## 例外\n\n使用优惠券的订单", "不予退还。")
    assert '<h2><mark id="cited" class="cited-passage">例外</mark></h2>' in html
    assert '<p><mark class="cited-passage">使用优惠券的订单</mark>不予退还。</p>' in html
    assert html.count('id="cited"') == 1


def test_a_passage_inside_a_paragraph_is_marked_in_place():
    assert render_section("退款在", "三个工作日内", "到账。") == \
        '<p>退款在<mark id="cited" class="cited-passage">三个工作日内</mark>到账。</p>\n'


def test_a_passage_cut_inside_a_link_address_marks_the_whole_section():
    html = render_section("见 [条款](https://exa", "mple.com/terms) 第二条", "。")
    assert html.startswith('<div class="cited-block" id="cited">') and "<mark" not in html


def test_the_marker_characters_in_a_document_cannot_forge_a_mark():
    html = render_section("甲\ue000乙\ue001丙", "", "")
    assert "<mark" not in html and "甲乙丙" in html


@pytest.mark.parametrize(("title", "file_name", "first", "shown"), [
    ("refund-policy", "documents/refund-policy.md", "# 退款规则\n\n正文", "退款规则"),
    ("leave_policy_2024", "documents/leave_policy_2024_a1b2.txt", "no heading here", "leave policy 2024"),
    ("refund", "documents/refund.md", "退款规则\n\n正文", "refund"),
    ("员工手册", "documents/handbook.txt", "# 别的标题", "员工手册"),
    ("Leave policy", "documents/leave-policy.md", "# Other", "Leave policy"),
    ("refund-policy", "", "## 退款 ##", "退款"),
])
def test_a_title_that_is_only_the_file_name_reads_as_words(title, file_name, first, shown):
    assert display_title(title, file_name, first) == shown
