"""QueryTranslator: bounded, deterministic dictionary translation of a question's content words."""
from __future__ import annotations

import pytest

from docmind.bilingual import BilingualLexicon
from kb.retrieval.translate import QueryTranslator, TranslatedQuery, TranslatedTerm

ENTRIES = [
    ("年假", ("annual leave", "new year holidays")),
    ("离开", ("depart", "leave")),
    ("留下", ("leave behind", "stay behind", "leave")),
    ("告别", ("leave", "say goodbye")),
    ("走开", ("leave",)),
    ("员工", ("staff", "personnel", "employee")),
    ("雇员", ("employee",)),
    ("打工仔", ("employee",)),
    ("职工", ("employee", "worker")),
    ("密码", ("cipher", "secret code", "password")),
    ("更换", ("replace", "change")),
    ("天数", ("number of days",)),
    ("日子", ("day", "date")),
    ("邮件", ("mail", "email")),
    ("附件", ("appendix", "attachment")),
]
FREQUENCY = {"离开": 900, "留下": 800, "告别": 300, "走开": 100, "员工": 900, "雇员": 200, "职工": 150}


@pytest.fixture
def translator() -> QueryTranslator:
    return QueryTranslator(lexicon=BilingualLexicon(ENTRIES, frequency=FREQUENCY), per_term=3, max_terms=8)


def _sources(terms: tuple[TranslatedTerm, ...]) -> list[str]:
    return [t.source for t in terms]


def test_a_phrase_is_translated_whole_before_its_words(translator):
    terms = translator.translate("How many days of annual leave do employees get?")
    assert _sources(terms) == ["days", "annual leave", "employees"]
    assert terms[1].targets == ("年假",)


def test_stop_words_and_codes_are_not_translated(translator):
    assert translator.translate("What does E2 mean for the leave?") == (
        TranslatedTerm("leave", ("离开", "留下", "告别")),)


def test_translations_per_term_and_terms_per_question_are_bounded():
    lexicon = BilingualLexicon(ENTRIES, frequency=FREQUENCY)
    one_each = QueryTranslator(lexicon=lexicon, per_term=1, max_terms=2)
    terms = one_each.translate("leave employee password change")
    assert terms == (TranslatedTerm("leave", ("离开",)), TranslatedTerm("employee", ("员工",)))


def test_a_chinese_question_gets_english_words_and_an_unknown_compound_its_known_parts(translator):
    terms = translator.translate("邮件附件最大多少？多久更换密码")
    assert _sources(terms) == ["邮件", "附件", "更换", "密码"]
    assert terms[-1].targets == ("cipher", "secret code", "password")


def test_the_translation_is_deterministic(translator):
    question = "How often do employees have to change their password?"
    assert translator.translate(question) == translator.translate(question)
    # Ties in frequency fall to the earlier sense, then the shorter word, then the word itself.
    assert TranslatedQuery(translator.translate(question)).text == "员工 雇员 职工 更换 密码"


def test_run_gives_the_translation_as_one_query_or_none(translator):
    translated = translator.run(query="How many days of annual leave?")
    assert translated is not None and translated.text == "日子 年假"
    assert translator.run(query="What is it?") is None


def test_it_rejects_non_positive_bounds():
    lexicon = BilingualLexicon(ENTRIES)
    for bad in ({"per_term": 0}, {"max_terms": 0}):
        with pytest.raises(ValueError):
            QueryTranslator(lexicon=lexicon, **bad)
