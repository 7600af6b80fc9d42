"""docmind.rerank: the HTTP cross-encoder in both wire shapes, the local score, the factory."""
from __future__ import annotations

import json

import httpx2
import numpy as np
import pytest

from docmind.env import ServiceEndpoint
from docmind.rerank import HttpReranker, IdentityReranker, LocalReranker, RerankError, build_reranker
from tests.kb.retrieval.fakes import chunk, unit

CHUNKS = [chunk("a", "甲"), chunk("b", "乙"), chunk("c", "丙")]


def _client(handler) -> httpx2.Client:
    return httpx2.Client(transport=httpx2.MockTransport(handler))


def test_dashscope_shape_is_sent_and_parsed():
    seen = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.update(json.loads(request.content))
        return httpx2.Response(200, json={"output": {"results": [
            {"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.4},
            {"index": 1, "relevance_score": 0.1}]}})

    reranker = HttpReranker(url="https://dashscope.aliyuncs.com/api/v1/services/rerank/text-rerank/text-rerank",
                            api_key="k", model="gte-rerank", client=_client(handler))
    assert reranker.rerank("q", CHUNKS) == [0.4, 0.1, 0.9]
    assert seen["input"] == {"query": "q", "documents": ["甲", "乙", "丙"]}
    assert seen["parameters"] == {"top_n": 3, "return_documents": False}


def test_v1_rerank_shape_is_sent_and_parsed_and_logits_are_squashed():
    seen = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.update(json.loads(request.content))
        return httpx2.Response(200, json={"results": [
            {"index": 0, "relevance_score": 0.7}, {"index": 1, "relevance_score": -3.0},
            {"index": 2, "relevance_score": 0.2}]})

    reranker = HttpReranker(url="http://tei:8080/v1/rerank", api_key=None, model="bge", client=_client(handler))
    scores = reranker.rerank("q", CHUNKS)
    assert seen["query"] == "q" and seen["documents"] == ["甲", "乙", "丙"]
    assert scores[0] == 0.7 and 0 < scores[1] < 0.1 and scores[2] == 0.2


def test_server_errors_are_retried_then_raise():
    calls = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        return httpx2.Response(503)

    reranker = HttpReranker(url="http://x/v1/rerank", api_key=None, model="m", max_retries=2, client=_client(handler))
    with pytest.raises(RerankError):
        reranker.rerank("q", CHUNKS)
    assert len(calls) == 3


def test_client_errors_are_not_retried():
    calls = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        return httpx2.Response(401, text="bad key")

    reranker = HttpReranker(url="http://x/v1/rerank", api_key=None, model="m", max_retries=2, client=_client(handler))
    with pytest.raises(RerankError):
        reranker.rerank("q", CHUNKS)
    assert len(calls) == 1


@pytest.mark.parametrize("body", [{"results": [{"index": 0, "relevance_score": 0.5}]}, {"nothing": 1},
                                  {"results": [{"index": 9, "relevance_score": 0.5}] * 3}])
def test_malformed_answers_raise(body):
    reranker = HttpReranker(url="http://x/v1/rerank", api_key=None, model="m", max_retries=0,
                            client=_client(lambda r: httpx2.Response(200, json=body)))
    with pytest.raises(RerankError):
        reranker.rerank("q", CHUNKS)


def test_timeouts_raise_rerank_error():
    def handler(request):
        raise httpx2.ReadTimeout("slow", request=request)

    reranker = HttpReranker(url="http://x/v1/rerank", api_key=None, model="m", max_retries=0, client=_client(handler))
    with pytest.raises(RerankError):
        reranker.rerank("q", CHUNKS)


def test_local_reranker_scores_in_unit_range_and_prefers_the_matching_chunk():
    chunks = [chunk("x", "长江是中国最长的河流"), chunk("y", "珠穆朗玛峰的海拔为8848米")]
    vectors = {"x": unit(0, 1, 0), "y": unit(1, 0, 0)}
    scores = LocalReranker(cos_floor=0.0, cos_ceiling=1.0).rerank(
        "珠穆朗玛峰的海拔是多少", chunks, query_vector=unit(1, 0, 0), chunk_vectors=vectors)
    assert scores[1] > scores[0] and all(0 <= s <= 1 for s in scores)


def test_local_reranker_works_without_vectors_and_with_zero_vectors():
    chunks = [chunk("x", "无关"), chunk("y", "珠穆朗玛峰")]
    scores = LocalReranker().rerank("珠穆朗玛峰的海拔", chunks, query_vector=np.zeros(3),
                                    chunk_vectors={"x": np.zeros(3)})
    assert scores[1] > scores[0] and not any(np.isnan(scores))


def test_local_reranker_ranks_the_document_titled_by_the_question_above_shared_common_words():
    # jieba cuts "元皇后" into 元 / 皇后; 皇后 and 儿子 also occur in another empress's article.
    other = chunk("other", "高英，北魏宣武帝的皇后，生下儿子，早夭。", document_title="高英", context="高英")
    named = chunk("named", "元皇后，北齐孝昭帝的皇后，有一子乐陵王高百年。", document_title="元皇后 (北齐孝昭帝)",
                  context="元皇后 (北齐孝昭帝)")
    scores = LocalReranker().rerank("元皇后的儿子叫什么？", [other, named])
    assert scores[1] > scores[0]


def test_local_reranker_reads_a_translation_cosine_on_a_scale_shifted_by_the_language_gap():
    # Same cosine to both chunks: the one in the other language scores higher by the shift, the same-language
    # one is scored as before.
    chunks = [chunk("zh", "密码至少八位"), chunk("en", "Passwords must be at least 12 characters long.")]
    vector = unit(1, 1, 0)
    vectors = {"zh": vector, "en": vector}
    query = unit(1, 0, 0)  # cosine 0.707
    plain, across = LocalReranker(cos_floor=0.6, cos_ceiling=0.9, cosine_weight=1.0, cross_language_shift=0.0
                                  ).rerank("密码最少几位？", chunks, query_vector=query, chunk_vectors=vectors)
    shifted = LocalReranker(cos_floor=0.6, cos_ceiling=0.9, cosine_weight=1.0, cross_language_shift=0.06
                            ).rerank("密码最少几位？", chunks, query_vector=query, chunk_vectors=vectors)
    assert across == pytest.approx(plain)
    assert shifted[1] == pytest.approx(across + 0.2, abs=1e-3) and shifted[0] == pytest.approx(plain)


def test_identity_reranker_keeps_the_order():
    scores = IdentityReranker().rerank("q", CHUNKS)
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0


def test_the_factory_picks_http_only_when_a_url_is_set():
    assert isinstance(build_reranker(ServiceEndpoint(url=None, api_key=None, model="gte-rerank")), LocalReranker)
    http = build_reranker(ServiceEndpoint(url="http://tei/v1/rerank", api_key=None, model="bge"))
    assert isinstance(http, HttpReranker)


def test_empty_input_makes_no_call():
    reranker = HttpReranker(url="http://x/v1/rerank", api_key=None, model="m",
                            client=_client(lambda r: (_ for _ in ()).throw(AssertionError())))
    assert reranker.rerank("q", []) == []


def test_local_reranker_lets_the_embedding_speak_for_a_chunk_in_another_language():
    # Same embedding closeness for both; only the Chinese chunk shares the question's language, and neither
    # shares its words: coverage must not sink the English chunk below its cosine.
    english = chunk("en", "Employees receive 158 days of maternity leave.")
    chinese = chunk("zh", "员工每年享有带薪病假12天。")
    vectors = {"en": unit(1, 0.2, 0), "zh": unit(1, 0.2, 0)}
    scores = LocalReranker(cos_floor=0.0, cos_ceiling=1.0, cross_language_shift=0.0).rerank(
        "产假多少天？", [english, chinese], query_vector=unit(1, 0, 0), chunk_vectors=vectors)
    assert scores[0] > scores[1]
    assert scores[0] == pytest.approx(float(np.dot(unit(1, 0, 0), unit(1, 0.2, 0))), abs=1e-6)


def _lexicon():
    from docmind.bilingual import BilingualLexicon

    return BilingualLexicon([("产假", ("maternity leave",)), ("病假", ("sick leave",))])


def test_a_chunk_in_another_language_is_covered_by_the_questions_dictionary_translation():
    # Equal (low) cosines: the English chunk holding the translation of 产假 passes the one that does not, by
    # the translation's coverage at its weight below a match of the question's own words.
    from docmind.bilingual import TRANSLATION_WEIGHT

    on_topic = chunk("on", "Employees receive 158 days of maternity leave.")
    off_topic = chunk("off", "Employees receive 12 days of paid sick time.")
    vectors = {"on": unit(1, 2, 0), "off": unit(1, 2, 0)}
    args = ("产假多少天？", [on_topic, off_topic])
    kwargs = {"query_vector": unit(1, 0, 0), "chunk_vectors": vectors}
    without = LocalReranker(cos_floor=0.0, cos_ceiling=1.0, cross_language_shift=0.0).rerank(*args, **kwargs)
    translated = LocalReranker(cos_floor=0.0, cos_ceiling=1.0, cross_language_shift=0.0,
                               lexicon=_lexicon()).rerank(*args, **kwargs)
    assert without[0] == pytest.approx(without[1])
    assert translated[1] == pytest.approx(without[1])
    assert translated[0] == pytest.approx(0.5 * without[0] + 0.5 * TRANSLATION_WEIGHT * 1.0)


def test_the_local_reranker_consults_no_dictionary_for_chunks_in_the_questions_language():
    class Refusing:
        def english_for(self, word: str) -> tuple[str, ...]:
            raise AssertionError("looked up")

        def chinese_for(self, phrase: str) -> tuple[str, ...]:
            raise AssertionError("looked up")

    chunks = [chunk("a", "产假为158天"), chunk("b", "病假为12天")]
    plain = LocalReranker().rerank("产假多少天？", chunks)
    assert LocalReranker(lexicon=Refusing()).rerank("产假多少天？", chunks) == plain


def test_a_chunk_only_the_centred_question_vector_found_is_blended_not_read_by_its_cosine_alone():
    # The same English chunk: found by BM25 of the translation its cosine speaks for it; found by the centred
    # vector alone (a topic near the question, no word of it) it is blended with its coverage like any chunk.
    from docmind.crosslingual import CENTRED_VECTOR_STAGE

    text = "Employees receive 158 days of maternity leave."
    by_words = chunk("en", text).with_score("bm25_translated", 3.0).with_score("rrf", 0.1)
    by_vector_alone = chunk("en", text).with_score(CENTRED_VECTOR_STAGE, 0.8).with_score("rrf", 0.1)
    reranker = LocalReranker(cos_floor=0.0, cos_ceiling=1.0, cross_language_shift=0.0)
    kwargs = {"query_vector": unit(1, 0, 0), "chunk_vectors": {"en": unit(1, 0.2, 0)}}
    cosine = float(np.dot(unit(1, 0, 0), unit(1, 0.2, 0)))
    assert reranker.rerank("产假多少天？", [by_words], **kwargs)[0] == pytest.approx(cosine, abs=1e-6)
    assert reranker.rerank("产假多少天？", [by_vector_alone], **kwargs)[0] == pytest.approx(0.5 * cosine, abs=1e-6)
