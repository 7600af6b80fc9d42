"""BilingualLexicon: CC-CEDICT glosses cleaned, inverted for English → Chinese, read from the installed package."""
from __future__ import annotations

import pytest

from docmind.bilingual import BilingualLexicon, clean_gloss, get_lexicon, parse_cedict

SAMPLE = """\
# CC-CEDICT
# a comment line
年假 年假 [nian2 jia4] /annual leave/New Year holidays/
密碼 密码 [mi4 ma3] /cipher; secret code/password; PIN/
口令 口令 [kou3 ling4] /oral command/a word of command/password (used in a fight)/
通關密語 通关密语 [tong1 guan1 mi4 yu3] /password/
假 假 [jia4] /vacation/
T恤 T恤 [T xu4] /T-shirt/
更換 更换 [geng1 huan4] /to replace (a worn-out tire etc)/to change (one's address etc)/
""".splitlines()


@pytest.mark.parametrize(("gloss", "cleaned"), [
    ("to replace (a worn-out tire etc)", "replace"),
    ("Annual Leave", "annual leave"),
    ("CL:個|个[ge4]", None),
    ("variant of 假[jia3]", None),
    ("surname Li", None),
    ("to promise to keep sth in good repair", "promise to keep in good repair"),
    ("to promise to keep sth in a good state of repair", None),  # a description, not a translation
    ("", None),
])
def test_it_cleans_a_gloss_to_plain_english_or_drops_it(gloss, cleaned):
    assert clean_gloss(gloss) == cleaned


def test_it_parses_simplified_words_with_their_glosses_in_order_and_skips_latin_words():
    entries = dict(parse_cedict(SAMPLE))
    assert entries["密码"] == ("cipher", "secret code", "password", "pin")
    assert entries["更换"] == ("replace", "change")
    assert "T恤" not in entries and "密碼" not in entries


def test_english_to_chinese_puts_the_more_frequent_word_first_and_leaves_single_characters_out():
    lexicon = BilingualLexicon(parse_cedict(SAMPLE), frequency={"密码": 500, "口令": 80})
    assert lexicon.chinese_for("password") == ("密码", "口令", "通关密语")
    assert lexicon.chinese_for("annual leave") == ("年假",)
    assert lexicon.chinese_for("vacation") == ()  # 假 alone matches far too much text
    assert lexicon.english_for("年假") == ("annual leave", "new year holidays")
    assert lexicon.english_for("不存在") == ()


def test_the_packaged_dictionary_translates_both_ways():
    lexicon = get_lexicon()
    assert "年假" in lexicon.chinese_for("annual leave")
    assert "password" in lexicon.english_for("密码")


def test_translated_coverage_counts_english_translations_as_whole_words_or_plurals():
    from docmind.bilingual import TranslatedTerm, translated_coverage

    terms = (TranslatedTerm("密码", ("password", "pin")), TranslatedTerm("信用卡", ("credit card",)))
    assert translated_coverage(terms, "Credit cards need a PIN.") == 1.0
    assert translated_coverage(terms, "Spin the card.") == 0.0
    assert translated_coverage((), "anything") == 0.0


def test_source_coverage_counts_the_questions_own_words_in_a_text():
    from docmind.bilingual import TranslatedTerm, source_coverage

    terms = (TranslatedTerm("年假", ("annual leave",)), TranslatedTerm("信用卡", ("credit card",)))
    assert source_coverage(terms, "年假为5天") == 0.5
    assert source_coverage(terms, "Annual leave") == 0.0
