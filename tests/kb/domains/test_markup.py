"""Markup and punctuation-only tokens never reach scenario tags or domain descriptions."""
from __future__ import annotations

import pytest

from kb.domains.aggregator import DocSummary, offline_merge
from kb.domains.markup import clean_phrase, clean_tag, clean_tags, strip_markup
from kb.domains.profiler import offline_profile


@pytest.mark.parametrize(("raw", "clean"), [
    ("## 乘坐交通", "乘坐交通"),
    ("**报销**规则", "报销规则"),
    ("<b>安全</b>测试", "安全测试"),
    ("[差旅政策](https://example.com/p)", "差旅政策"),
    ("`kubectl`", "kubectl"),
    ("user_id", "user_id"),
    ("&amp; 流程", "& 流程"),
    ("##", ""),
    ("、", ""),
    ("---", ""),
    ("   ", ""),
])
def test_a_tag_keeps_its_words_and_loses_its_markup(raw, clean):
    assert clean_tag(raw) == clean


def test_tags_are_cleaned_deduplicated_and_limited():
    assert clean_tags(["##", "乘坐", "**乘坐**", "交通", "<i></i>", "签证"], limit=2) == ("乘坐", "交通")


@pytest.mark.parametrize(("raw", "clean"), [
    ("hr：##、乘坐、交通", "hr：乘坐、交通"),
    ("##、乘坐、交通", "乘坐、交通"),
    ("乘坐、交通、##", "乘坐、交通"),
    ("用户问题涉及##、乘坐、交通时检索", "用户问题涉及乘坐、交通时检索"),
    ("C# 与 F# 开发", "C# 与 F# 开发"),
    ("When users ask about **payments**, refunds", "When users ask about payments, refunds"),
    ("管理员写的描述", "管理员写的描述"),
    ("", ""),
])
def test_a_description_drops_markup_and_punctuation_only_items(raw, clean):
    assert clean_phrase(raw) == clean


def test_urls_are_removed_but_link_texts_stay():
    assert strip_markup("见 [手册](http://x.test/a) 或 https://y.test/b").split() == ["见", "手册", "或"]


MARKDOWN_DOC = """# 差旅制度
## 乘坐交通
**出差**乘坐 <b>交通</b> 工具须提前审批，详见 [政策](https://intranet.example/policy) 与 `OA` 系统。
## ##
乘坐高铁二等座，交通费凭票报销。乘坐飞机经济舱。### 注意 ## ## ##
"""


def test_the_offline_profile_of_a_markdown_document_has_no_markup_tags():
    profile = offline_profile("hr", MARKDOWN_DOC)
    assert profile.covers[:2] == ("差旅制度", "乘坐交通")
    assert all(clean_tag(tag) == tag and tag for tag in profile.covers)
    assert "#" not in profile.when_to_retrieve and "http" not in " ".join(profile.covers)


def test_offline_merge_cleans_tags_stored_before_markup_was_filtered():
    docs = [DocSummary("差旅", ("##", "乘坐", "交通"), "x"), DocSummary("报销", ("##", "乘坐"), "y")]
    summary = offline_merge("hr", docs)
    assert summary.description == "hr：乘坐、交通"
    assert "##" not in summary.when_to_retrieve
