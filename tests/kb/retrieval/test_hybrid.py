"""HybridSearch: both retrievers fused by RRF, the candidate count per call, one failing retriever noted."""
from __future__ import annotations

import numpy as np
import pytest

from kb.retrieval.gather import RetrievalFailed
from kb.retrieval.hybrid import HybridSearch
from tests.kb.retrieval.fakes import FakeEmbedder, FakeSearcher, unit


@pytest.fixture
def searcher() -> FakeSearcher:
    s = FakeSearcher()
    s.add("1", "苹果是一种水果", unit(1, 0, 0))
    s.add("2", "香蕉很好吃", unit(0, 1, 0))
    s.add("3", "苹果手机", unit(0, 0, 1))
    return s


def _search(searcher: FakeSearcher, **kwargs) -> HybridSearch:
    return HybridSearch(searcher=searcher, embed_query=FakeEmbedder({"苹果": unit(1, 0, 0)}).embed_query,
                        candidate_k=5, **kwargs)


def test_it_rejects_zero_candidates(searcher):
    with pytest.raises(ValueError):
        HybridSearch(searcher=searcher, embed_query=FakeEmbedder().embed_query, candidate_k=0)


def test_a_chunk_both_retrievers_found_ranks_first_with_its_stage_scores(searcher):
    result = _search(searcher).run(query="苹果")
    assert result.chunks[0].chunk_id == "1"
    assert {"vector", "bm25", "rrf"} <= set(result.chunks[0].stage_scores)
    assert (result.vector_count, result.lexical_count) == (3, 2)
    assert {"embed", "vector", "bm25", "rrf"} <= set(result.timings_ms)


def test_the_caller_can_ask_for_fewer_candidates_per_retriever(searcher):
    result = _search(searcher).run(query="苹果", candidate_k=1)
    assert (result.vector_count, result.lexical_count) == (1, 1)


def test_a_heavier_bm25_weight_lets_a_lexical_only_hit_pass_a_vector_only_hit(searcher):
    plain = [c.chunk_id for c in _search(searcher).run(query="苹果").chunks]
    lexical_heavy = [c.chunk_id for c in _search(searcher, bm25_weight=5.0).run(query="苹果").chunks]
    assert plain.index("3") > plain.index("1")
    assert lexical_heavy.index("3") < lexical_heavy.index("2")


def test_one_failing_retriever_is_a_note_and_both_failing_raise(searcher):
    searcher.fail_vector = True
    result = _search(searcher).run(query="苹果")
    assert result.notes and result.notes[0].startswith("vector retriever failed")
    assert [c.chunk_id for c in result.chunks] == ["1", "3"]
    searcher.fail_lexical = True
    with pytest.raises(RetrievalFailed):
        _search(searcher).run(query="苹果")


def _mixed_base() -> FakeSearcher:
    s = FakeSearcher()
    s.add("zh", "假期为五天", unit(1, 0, 0))
    s.add("en", "Annual leave: 10 days", unit(0.8, 0.6, 0))
    return s


def _translator(**kwargs):
    from docmind.bilingual import BilingualLexicon
    from kb.retrieval.translate import QueryTranslator

    return QueryTranslator(lexicon=BilingualLexicon([("年假", ("annual leave",))]), **kwargs)


def test_bm25_also_searches_the_translation_when_the_base_holds_the_other_language():
    searcher = _mixed_base()
    search = HybridSearch(searcher=searcher, embed_query=FakeEmbedder({"年假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=5, translator=_translator())
    result = search.run(query="年假几天")
    english = next(c for c in result.chunks if c.chunk_id == "en")
    # Its own stage: a translation's hit is not the question's words matching (no "bm25" agreement).
    assert "bm25_translated" in english.stage_scores and "bm25" not in english.stage_scores
    assert any("translation: annual leave" in note for note in result.notes)
    assert "bm25_translated" in result.timings_ms


def test_a_translated_hit_counts_less_than_the_same_rank_in_bm25_of_the_questions_words():
    from kb.retrieval.translate import TRANSLATED_SHARE

    assert 0 < TRANSLATED_SHARE < 1
    searcher = _mixed_base()
    search = HybridSearch(searcher=searcher, embed_query=FakeEmbedder({"年假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=5, vector_weight=0.0, translator=_translator())
    scores = {c.chunk_id: c.score for c in search.run(query="年假几天").chunks}
    assert scores["en"] == pytest.approx(TRANSLATED_SHARE * scores["zh"])


def test_a_base_in_the_questions_language_gets_nothing_from_the_translation():
    # A Chinese chunk holding the English words still is not a translated hit: BM25 of the question ranks it.
    s = FakeSearcher()
    s.add("loan", "年假 annual leave 五天", unit(1, 0, 0))
    s.add("other", "病假须提交证明", unit(0, 1, 0))
    embed = FakeEmbedder({"年假几天": unit(1, 0, 0)}).embed_query
    plain = HybridSearch(searcher=s, embed_query=embed, candidate_k=5).run(query="年假几天")
    translated = HybridSearch(searcher=s, embed_query=embed, candidate_k=5, translator=_translator()).run(
        query="年假几天")
    assert translated.chunks == plain.chunks
    assert not any("translation" in note for note in translated.notes)


def test_the_translation_is_dropped_when_the_questions_own_words_match_better():
    # The question's words match the Chinese chunk on more characters than the translation matches the English.
    s = FakeSearcher()
    s.add("zh", "年假几天都可以", unit(1, 0, 0))
    s.add("en", "leave", unit(0.8, 0.6, 0))
    search = HybridSearch(searcher=s, embed_query=FakeEmbedder({"年假几天都": unit(1, 0, 0)}).embed_query,
                          candidate_k=5, translator=_translator())
    result = search.run(query="年假几天都")
    assert all("bm25_translated" not in c.stage_scores for c in result.chunks)
    assert not any("translation" in note for note in result.notes)


def test_a_failing_translated_search_is_a_note_and_the_search_stands():
    searcher = _mixed_base()

    class Broken:
        def english_for(self, word: str) -> tuple[str, ...]:
            raise OSError("dictionary unreadable")

        def chinese_for(self, phrase: str) -> tuple[str, ...]:
            raise OSError("dictionary unreadable")

    from kb.retrieval.translate import QueryTranslator

    search = HybridSearch(searcher=searcher, embed_query=FakeEmbedder({"年假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=5, translator=QueryTranslator(lexicon=Broken()))
    result = search.run(query="年假几天")
    assert [c.chunk_id for c in result.chunks][0] == "zh"
    assert any(note.startswith("translated bm25 failed: OSError") for note in result.notes)


class _Means:
    """docmind.crosslingual.LanguageMeans with a fixed answer: the centred vector points at `towards`."""

    def __init__(self, towards: np.ndarray, offsets: tuple[float, float] | None = None) -> None:
        self.towards, self.calls, self._offsets = towards, 0, offsets

    def centred(self, vector, *, chinese):
        self.calls += 1
        return self.towards

    def offsets(self, vector):
        return self._offsets


def _crowded_base() -> FakeSearcher:
    """Chinese passages all nearer the question's own vector than the English one that answers it."""
    s = FakeSearcher()
    for i in range(3):
        s.add(f"zh{i}", f"第{i}条：工位与门禁", unit(1, 0.1 * i, 0))
    s.add("en", "Maternity leave is 158 days.", unit(0, 0, 1))
    return s


def test_the_centred_question_vector_brings_the_other_languages_passage_the_own_vector_ranks_out():
    means = _Means(unit(0, 0, 1))
    search = HybridSearch(searcher=_crowded_base(), embed_query=FakeEmbedder({"产假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=_translator(means=means))
    result = search.run(query="产假几天")
    english = next(c for c in result.chunks if c.chunk_id == "en")
    # Its own stage: not the question's vector (nor words) agreeing, and only its hits in the other language.
    assert set(english.stage_scores) == {"vector_translated", "rrf"}
    assert all("vector_translated" not in c.stage_scores for c in result.chunks if c.chunk_id != "en")
    assert "vector_translated" in result.timings_ms
    plain = HybridSearch(searcher=_crowded_base(), embed_query=FakeEmbedder({"产假几天": unit(1, 0, 0)}).embed_query,
                         candidate_k=2).run(query="产假几天")
    assert "en" not in {c.chunk_id for c in plain.chunks}


def test_a_question_its_own_language_answers_word_for_word_gets_no_centred_search():
    s = _crowded_base()
    s.add("zh-answer", "年假为五天", unit(1, 0, 0))
    means = _Means(unit(0, 0, 1))
    result = HybridSearch(searcher=s, embed_query=FakeEmbedder({"年假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=_translator(means=means)).run(query="年假几天")
    assert means.calls == 0
    assert all("vector_translated" not in c.stage_scores for c in result.chunks)


def test_asked_across_a_question_its_language_names_word_for_word_still_searches_the_other_language():
    # 年假 is all there is to the question's words, and a Chinese passage holds it: only `across` opens the search.
    s = _crowded_base()
    s.add("zh-topic", "年假须提前申请", unit(1, 0, 0))
    s.add("en-leave", "Annual leave is 10 days.", unit(0, 0.2, 0.98))
    means = _Means(unit(0, 0, 1))
    search = HybridSearch(searcher=s, embed_query=FakeEmbedder({"年假": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=_translator(means=means))
    gated = search.run(query="年假")
    assert not {"en", "en-leave"} & {c.chunk_id for c in gated.chunks}
    opened = search.run(query="年假", across=True)
    found = {c.chunk_id: set(c.stage_scores) for c in opened.chunks}
    assert "vector_translated" in found["en"]
    assert "bm25_translated" in found["en-leave"]
    assert all(stages <= {"vector", "bm25", "rrf"} for cid, stages in found.items() if cid.startswith("zh"))


def test_asked_again_across_the_same_question_searches_only_the_other_language(monkeypatch):
    s = _crowded_base()
    s.add("zh-topic", "年假须提前申请", unit(1, 0, 0))
    searched: list[str] = []
    own = s.lexical_search
    monkeypatch.setattr(s, "lexical_search", lambda query, **kw: searched.append(query) or own(query, **kw))
    search = HybridSearch(searcher=s, embed_query=FakeEmbedder({"年假": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=_translator(means=_Means(unit(0, 0, 1))))
    search.run(query="年假")
    search.run(query="年假", across=True)
    assert searched.count("年假") == 1
    search.run(query="年假", candidate_k=3)
    assert searched.count("年假") == 2


def test_a_base_in_the_questions_language_gets_nothing_from_the_centred_vector():
    s = FakeSearcher()
    s.add("a", "工位与门禁", unit(1, 0, 0))
    s.add("b", "产假一百五十八天", unit(0, 0, 1))
    result = HybridSearch(searcher=s, embed_query=FakeEmbedder({"产假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=1, translator=_translator(means=_Means(unit(0, 0, 1)))).run(query="产假几天")
    assert all("vector_translated" not in c.stage_scores for c in result.chunks)


def test_a_failing_centred_search_is_a_note_and_the_search_stands():
    class Failing:
        def centred(self, vector, *, chinese):
            raise FloatingPointError("no means")

    result = HybridSearch(searcher=_crowded_base(), embed_query=FakeEmbedder({"产假几天": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=_translator(means=Failing())).run(query="产假几天")
    assert [c.chunk_id for c in result.chunks][0] == "zh0"
    assert any(note.startswith("centred vector search failed: FloatingPointError") for note in result.notes)


def _half_said(offsets: tuple[float, float] | None) -> set[str]:
    """Ids of the chunks the centred search kept for a question whose words one Chinese passage holds half of
    (产假, not 工资): on the centred vector the English passage scores 0.8 and the Chinese one 0.6."""
    from docmind.bilingual import BilingualLexicon
    from kb.retrieval.translate import QueryTranslator

    s = FakeSearcher()
    s.add("zh", "产假期间照常发放", unit(1, 0, 0))
    s.add("en", "Salary during maternity leave is paid in full.", unit(0, 0, 1))
    lexicon = BilingualLexicon([("产假", ("maternity leave",)), ("工资", ("salary",))])
    translator = QueryTranslator(lexicon=lexicon, means=_Means(unit(0.6, 0, 0.8), offsets=offsets))
    result = HybridSearch(searcher=s, embed_query=FakeEmbedder({"产假工资": unit(1, 0, 0)}).embed_query,
                          candidate_k=2, translator=translator).run(query="产假工资")
    return {c.chunk_id for c in result.chunks if "vector_translated" in c.stage_scores}


def test_half_said_in_its_language_the_question_keeps_the_other_language_passage_nearer_in_meaning():
    assert _half_said(offsets=(0.0, 0.0)) == {"en"}


def test_half_said_in_its_language_the_question_drops_it_once_its_language_is_taken_out_of_the_score():
    # The English passage's 0.8 is half its language: less that, 0.3 is farther than the Chinese passage's 0.6.
    assert _half_said(offsets=(0.0, 0.5)) == set()


def test_half_said_without_the_means_to_compare_the_languages_the_other_language_is_not_searched():
    assert _half_said(offsets=None) == set()
