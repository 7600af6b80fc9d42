"""Shared text helpers: stop lists, jieba tokens, salient terms, keywords and bigrams."""
from __future__ import annotations

import pytest

from docmind.text import (
    ANSWER_STOP_WORDS,
    FUNCTION_WORDS,
    LEXICAL_STOP_WORDS,
    STOP_WORDS,
    bigrams,
    char_bigrams,
    contains,
    coverage,
    joined_separable,
    keywords,
    names_in,
    plain_headings,
    rarity,
    salient_terms,
    title_only,
    tokens,
    unknown_words,
    words,
)

# The list the stored BM25 index was built with. If this test fails, the change needs `manage.py kb_reindex`
# on every deployment: update this copy only together with a note in the release.
INDEXED_STOP_WORDS = {
    "的", "了", "和", "是", "在", "也", "就", "都", "而", "及", "与", "或", "之", "其", "这", "那", "个", "着",
    "吗", "呢", "吧", "啊", "把", "被", "让", "给", "对", "从", "向", "于", "以", "为", "等", "中", "上", "下",
    "the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "was", "were", "be", "for", "with",
    "by", "at", "as", "it", "this", "that", "from", "what", "which", "who", "how",
    "，", "。", "！", "？", "；", "：", "、", "“", "”", "（", "）", ",", ".", "!", "?", ";", ":", "(", ")",
}


def test_the_lexical_stop_list_is_the_one_the_index_was_built_with():
    assert set(LEXICAL_STOP_WORDS) == INDEXED_STOP_WORDS
    assert LEXICAL_STOP_WORDS == sorted(LEXICAL_STOP_WORDS)  # a plain, stable list for Milvus' analyzer


def test_every_stop_list_contains_the_function_words():
    assert FUNCTION_WORDS <= STOP_WORDS and FUNCTION_WORDS <= ANSWER_STOP_WORDS
    assert FUNCTION_WORDS <= set(LEXICAL_STOP_WORDS)


def test_the_answer_stop_words_keep_negations_that_queries_drop():
    assert {"not", "没有"} <= STOP_WORDS
    assert not {"not", "没有"} & ANSWER_STOP_WORDS


def test_tokens_are_lowercased_search_mode_without_stop_words_or_punctuation():
    assert tokens("泡泡堂是哪款游戏？The Quick fox, 你们知道吗") == (
        "泡泡", "泡泡堂", "哪款", "游戏", "quick", "fox", "知道")


@pytest.mark.parametrize("text", ["", "  ", "？！。", "的了吗"])
def test_tokens_of_text_without_content_are_empty(text):
    assert tokens(text) == ()


def test_words_segment_every_character_once():
    text = "泡泡堂是哪款游戏"
    assert words(text) == ["泡泡堂", "是", "哪款", "游戏"]
    assert "".join(words(text)) == text


def test_a_name_is_rarer_than_a_common_verb_and_an_unknown_word_counts_as_rare():
    assert rarity("进行") < rarity("一次") < rarity("报销") < rarity("差旅") <= 1.5
    assert rarity("泡泡堂xyz") == pytest.approx(1.2)


def test_salient_terms_keep_the_longest_word_and_drop_interrogatives():
    found = [t.text for t in salient_terms("泡泡堂是哪款游戏？")]
    assert found == ["泡泡堂", "游戏"]


@pytest.mark.parametrize("query", ["他向我让给着", "谁在上中下", "中华人民共和国的首都在哪里"])
def test_salient_terms_never_count_a_single_cjk_character(query):
    # This is why single characters in the stop lists change nothing for salient_terms.
    assert all(len(t.text) > 1 for t in salient_terms(query))


def test_salient_terms_drop_how_many_words_the_answer_never_says():
    assert [t.text for t in salient_terms("密码最少几位？")] == ["密码", "最少"]
    assert "几次" not in {t.text for t in salient_terms("一个月能补几次卡？")}


def test_a_word_jieba_leaves_as_single_characters_is_one_salient_term():
    # jieba cuts 年假 into 年 / 假, and single characters never count on their own.
    assert unknown_words("年假有几天？") == ["年假"]
    assert [t.text for t in salient_terms("年假有几天？")] == ["年假"]


def test_single_characters_that_are_stop_words_or_too_many_make_no_word():
    assert unknown_words("他向我让给着") == []
    assert unknown_words("S级最多占多少比例？") == []  # one-character words in a row


@pytest.mark.parametrize(("text", "word"), [("年休假为每年5天", "年假"), ("每月补打卡不超过3次", "补卡"),
                                            ("车辆补贴每月500元", "车补"), ("婚假10天", "婚假")])
def test_a_shortened_chinese_word_is_found_in_its_full_form(text, word):
    assert contains(text, word)


@pytest.mark.parametrize(("text", "word"), [
    ("婚假10天，产假158天", "育儿假"),  # 育 and 儿 are not there
    ("年度的休假", "年假"),  # more than one character between
    ("中华人民共和国", "中人民国和"),  # too long to be a shortened word
    ("a-b", "ab"),  # Latin words are matched as written
])
def test_characters_far_apart_or_missing_are_no_shortened_word(text, word):
    assert not contains(text, word)


def test_an_acronym_that_spells_a_stop_word_is_a_term_matched_as_written():
    terms = salient_terms("IT电话多少？")
    assert [t.text for t in terms] == ["IT", "电话"] and terms[0].rare
    assert coverage(terms[:1], "## 怎么联系IT服务台？ 拨打内线8000") == 1.0
    assert coverage(terms[:1], "邮箱security@example.com；Restart it.") == 0.0
    assert "it" not in {t.text.lower() for t in salient_terms("Can I restart it?")}


def test_coverage_counts_a_shortened_word_of_the_question():
    assert coverage(salient_terms("年假有几天？"), "累计工作满1年的员工，年休假为每年5天。") == 1.0
    assert coverage(salient_terms("产假有几天？"), "累计工作满1年的员工，年休假为每年5天。") == 0.0


def test_rare_and_long_terms_weigh_more():
    by_text = {t.text: t for t in salient_terms("Nexon 开发的游戏")}
    assert by_text["nexon"].rare and not by_text["游戏"].rare
    assert by_text["nexon"].weight > by_text["游戏"].weight


def test_a_title_the_query_contains_is_one_rare_term_whatever_jieba_cuts():
    # jieba cuts 元 / 皇后 and 黄华麒是; the document titles name the subjects whole.
    empress = {t.text: t for t in salient_terms("元皇后的儿子叫什么？", names=["元皇后 (北齐孝昭帝)", "高英"])}
    assert set(empress) == {"元皇后", "儿子"} and empress["元皇后"].rare
    graduate = [t.text for t in salient_terms("黄华麒是哪个大学毕业的？", names=["黄华麒"])]
    assert "黄华麒" in graduate and not any("黄华麒" in t and t != "黄华麒" for t in graduate)


def test_without_titles_salient_terms_are_unchanged():
    assert salient_terms("元皇后的儿子叫什么？", names=["高英"]) == salient_terms("元皇后的儿子叫什么？")


@pytest.mark.parametrize(("query", "titles", "found"), [
    ("元皇后祖籍何处？", ["元皇后（北齐孝昭帝）", "皇后", "高英"], ["元皇后"]),  # the longer name, not 皇后 inside it
    ("蓍的别名是什么？", ["蓍", "夜来香 (夹竹桃科)"], ["蓍"]),  # a rare one-character name counts
    ("这种植物的花是什么颜色？", ["花"], []),  # a common character does not
    ("What does Go do?", ["go", "Goal"], ["go"]),  # Latin names as whole words only
    ("google 是什么？", ["go"], []),
    ("64DD有哪些优点？", ["64DD"], ["64dd"]),
])
def test_names_in_finds_the_titles_a_question_names(query, titles, found):
    assert names_in(query, titles) == found


def test_keywords_skip_numbers_and_single_characters():
    found = keywords("支付超时 支付 支付 网关日志 2024 2024 回调 回调 扣款 a a a", 6)
    assert found[:2] == ["支付", "回调"]
    assert all(len(k) >= 2 and not k.isdigit() for k in found)


@pytest.mark.parametrize(("text", "grams"), [("", []), ("a", []), ("abc", ["ab", "bc"]),
                                             ("支付超时", ["支付", "付超", "超时"])])
def test_char_bigrams_overlap_in_order(text, grams):
    assert char_bigrams(text) == grams


@pytest.mark.parametrize(("text", "grams"), [("", frozenset()), (" x ", frozenset({"x"})),
                                             ("A  b", frozenset({"a ", " b"}))])
def test_bigrams_normalise_whitespace_and_case(text, grams):
    assert bigrams(text) == grams


PLAIN = "Support hours\n\nStandard support runs from 9:00 to 18:00 on working days.\n\n考核周期\n\n公司每半年考核一次。"


def test_a_short_standalone_line_before_body_text_is_a_plain_heading():
    lines = PLAIN.splitlines()
    assert [lines[i] for i in sorted(plain_headings(PLAIN))] == ["Support hours", "考核周期"]


@pytest.mark.parametrize("text", [
    "Support hours\nStandard support runs from 9:00 to 18:00.",          # no blank line: part of a paragraph
    "Note: read this first\n\nStandard support runs from 9:00.",       # a colon: a labelled sentence
    "Support hours",                                                    # nothing follows it
    "- Support hours\n\nStandard support runs from 9:00 to 18:00.",    # a list item
])
def test_a_line_is_no_plain_heading_without_all_of_its_marks(text):
    assert plain_headings(text) == set()


def test_a_title_line_right_before_the_first_heading_is_a_plain_heading_too():
    text = "Support Service Level Agreement\n\n" + PLAIN
    lines = text.splitlines()
    assert [lines[i] for i in sorted(plain_headings(text))] == ["Support Service Level Agreement", "Support hours",
                                                                 "考核周期"]


def test_a_list_written_one_item_a_paragraph_keeps_its_items():
    text = "Item A\n\nItem B\n\nItem C\n\nA longer paragraph of body text follows the list."
    lines = text.splitlines()
    assert [lines[i] for i in plain_headings(text)] == ["Item C"]  # only the last, before the body


@pytest.mark.parametrize(("text", "alone"), [
    ("Support Service Level Agreement", True), ("\n关于研发中心搬迁的通知\n", True),
    ("员工生日当月可领取500元生日礼金。", False), ("Support hours\n\nWeekdays 9:00-18:00", False),
])
def test_a_passage_of_one_heading_like_line_is_a_title_alone(text, alone):
    assert title_only(text) is alone


@pytest.mark.parametrize("text,word,said", [
    ("周六、周日及法定节假日：8:00—21:00", "周末", True),
    ("open saturday 9:00-17:00", "weekend", True),
    ("周一至周五：6:30—22:30", "工作日", True),
    ("monday to friday, 9 am to 6 pm", "weekdays", True),
    ("周一至周五：6:30—22:30", "周末", False),
    ("每周一上午换水保养", "工作日", False),
])
def test_a_calendar_word_is_contained_in_the_days_it_stands_for(text, word, said):
    assert contains(text, word) is said


@pytest.mark.parametrize("question,joined", [
    ("一个月能补几次卡？", "一个月能补卡几次？"),
    ("家里老人去世了能请几天假？", "家里老人去世了能请假几天？"),
    ("能请几天假吗？", "能请假几天吗？"),
    ("一年出几次差", "一年出差几次"),
    ("加几个小时班？", "加班几个小时？"),
    ("每月能打多少次卡？", "每月能打卡多少次？"),
])
def test_a_verb_object_word_split_by_its_count_is_joined_again(question, joined):
    assert joined_separable(question) == joined


def test_the_joined_word_is_one_word_to_jieba_where_the_split_one_was_two():
    assert "补卡" in words("一个月能补卡几次？") and "补卡" not in words("一个月能补几次卡？")


@pytest.mark.parametrize("question", [
    "公司有几个人？",         # a count of things, not of the action
    "买几个苹果？",
    "等几天再说",            # the character after the count begins the next words
    "要等几个月呢？",         # a particle, not an object
    "这个月迟到几次了？",
    "婚假可以请几天？",
    "How many days of leave?",
])
def test_a_count_that_splits_no_word_is_left_in_place(question):
    assert joined_separable(question) == question
