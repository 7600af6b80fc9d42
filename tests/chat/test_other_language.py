"""OwnLanguageGap: what the question's own language leaves unsaid, and whether the other language's evidence says it."""
from __future__ import annotations

from chat.other_language import OwnLanguageGap, own_language_gap
from chat.value_kinds import asked_kind
from docmind.bilingual import BilingualLexicon
from kb.retrieval.types import ScoredChunk


def _chunks(*texts: str) -> list[ScoredChunk]:
    return [ScoredChunk(chunk_id=str(n), content=text, score=1.0, document_id=n, document_title="", domain="")
            for n, text in enumerate(texts)]


LEXICON = BilingualLexicon([("累积", ("accumulate",))])


def test_evidence_naming_the_topic_without_the_asked_value_is_a_gap_of_that_kind():
    gap = own_language_gap("试用期多长？", _chunks("试用期员工不参加当期考核。"))
    assert gap is not None and gap.kind is not None and gap.kind.name == asked_kind("试用期多长？").name


def test_evidence_stating_the_value_or_in_the_other_language_is_no_gap():
    assert own_language_gap("试用期多长？", _chunks("试用期为三个月。")) is None
    assert own_language_gap("试用期多长？", _chunks("Probationers are not appraised.")) is None
    assert own_language_gap("试用期多长？", []) is None


def test_a_word_the_evidence_never_says_is_a_gap():
    gap = own_language_gap("年假可以累积吗？", _chunks("年假须提前三天申请。"))
    assert gap is not None and "累积" in gap.unsaid and gap.kind is None


def test_the_other_language_closes_a_value_gap_only_by_stating_a_value_of_the_kind():
    gap = OwnLanguageGap(unsaid=(), kind=asked_kind("试用期多长？"))
    assert gap.closed_by("试用期多长？", _chunks("The probation period is three months."))
    assert not gap.closed_by("试用期多长？", _chunks("Probationers meet their mentor."))
    # Text in the question's own language never closes it: it was the first search's to find.
    assert not gap.closed_by("试用期多长？", _chunks("试用期为三个月。"))


def test_an_unsaid_word_is_said_across_by_its_translation_or_as_written():
    gap = OwnLanguageGap(unsaid=("累积",), kind=None)
    assert gap.closed_by("年假可以累积吗？", _chunks("Unused annual leave does not accumulate."), LEXICON)
    assert not gap.closed_by("年假可以累积吗？", _chunks("Annual leave is 10 days."), LEXICON)
    code = OwnLanguageGap(unsaid=("AC-300",), kind=None)
    assert code.closed_by("AC-300能连Wi-Fi吗？", _chunks("The AC-300 connects over Wi-Fi."), LEXICON)
    assert not code.closed_by("AC-300能连Wi-Fi吗？", _chunks("The AC-500 connects over Wi-Fi."), LEXICON)


def test_one_chunk_must_say_the_whole_gap():
    gap = OwnLanguageGap(unsaid=("累积",), kind=asked_kind("年假最多累积几天？"))
    split = _chunks("Unused annual leave may accumulate.", "Sick leave is 12 days a year.")
    assert not gap.closed_by("年假最多累积几天？", split, LEXICON)
    assert gap.closed_by("年假最多累积几天？", _chunks("Annual leave may accumulate up to 5 days."), LEXICON)
