"""docmind.crosslingual: each language's mean, measured once per embedder, taken out of a question's vector."""
from __future__ import annotations

import numpy as np
import pytest

from docmind.crosslingual import PARALLEL_PASSAGES, LanguageMeans
from docmind.language import is_chinese


class TwoSidedEmbedder:
    """Chinese text at (1, 0, topic), English at (0, 1, topic): a language part and a shared topic part."""

    def __init__(self) -> None:
        self.batches = 0

    def embed_passages(self, texts):
        self.batches += 1
        return np.asarray([[1.0, 0.0, 0.5] if is_chinese(t) else [0.0, 1.0, 0.5] for t in texts], dtype=np.float32)


def test_the_passage_pairs_are_chinese_and_their_english_translations():
    assert len(PARALLEL_PASSAGES) >= 40
    assert all(is_chinese(zh) and not is_chinese(en) for zh, en in PARALLEL_PASSAGES)


def test_each_passage_opens_with_a_title_and_section_line_as_a_chunk_does():
    for pair in PARALLEL_PASSAGES:
        for text in pair:
            heading, _, body = text.partition("\n")
            assert "›" in heading and body and "\n" not in body


def test_a_centred_vector_has_its_languages_mean_taken_out_and_unit_length():
    means = LanguageMeans(TwoSidedEmbedder())
    question = np.asarray([0.6, 0.0, 0.8], dtype=np.float32)
    centred = means.centred(question, chinese=True)
    zh_mean = np.asarray([1.0, 0.0, 0.5]) / np.linalg.norm([1.0, 0.0, 0.5])
    expected = question - zh_mean
    assert centred == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
    assert float(np.linalg.norm(means.centred(question, chinese=False))) == pytest.approx(1.0)


def test_a_passages_score_less_its_languages_offset_is_its_score_against_the_passage_less_its_mean():
    means = LanguageMeans(TwoSidedEmbedder())
    vector = np.asarray([0.6, 0.0, 0.8], dtype=np.float32)
    zh_mean = np.asarray([1.0, 0.0, 0.5]) / np.linalg.norm([1.0, 0.0, 0.5])
    en_mean = np.asarray([0.0, 1.0, 0.5]) / np.linalg.norm([0.0, 1.0, 0.5])
    passage = np.asarray([0.9, 0.1, 0.4])
    zh, en = means.offsets(vector)
    assert float(vector @ passage) - zh == pytest.approx(float(vector @ (passage - zh_mean)), abs=1e-6)
    assert float(vector @ passage) - en == pytest.approx(float(vector @ (passage - en_mean)), abs=1e-6)
    assert means.offsets(np.ones(4, dtype=np.float32)) is None


def test_rows_are_centred_each_as_one_vector_would_be():
    means = LanguageMeans(TwoSidedEmbedder())
    rows = np.asarray([[0.6, 0.0, 0.8], [0.0, 1.0, 0.0]], dtype=np.float32)
    centred = means.centred(rows, chinese=False)
    for row, alone in zip(centred, rows, strict=True):
        assert row == pytest.approx(means.centred(alone, chinese=False), abs=1e-6)


def test_the_means_are_measured_once_in_one_batch():
    embedder = TwoSidedEmbedder()
    means = LanguageMeans(embedder)
    for _ in range(3):
        means.centred(np.ones(3, dtype=np.float32), chinese=True)
    assert embedder.batches == 1


def test_a_failing_embedder_gives_no_centred_vector_and_is_not_asked_again(caplog):
    class Down:
        calls = 0

        def embed_passages(self, texts):
            Down.calls += 1
            raise ConnectionError("embedding service down")

    means = LanguageMeans(Down())
    assert means.centred(np.ones(3, dtype=np.float32), chinese=True) is None
    assert means.centred(np.ones(3, dtype=np.float32), chinese=False) is None
    assert Down.calls == 1 and "could not be measured" in caplog.text


def test_a_vector_of_another_size_gets_none():
    assert LanguageMeans(TwoSidedEmbedder()).centred(np.ones(4, dtype=np.float32), chinese=True) is None


def test_a_rebuilt_instance_for_the_same_model_reuses_the_measured_means():
    first, second = TwoSidedEmbedder(), TwoSidedEmbedder()
    first.name = second.name = "two-sided/test-reuse"
    vector = np.ones(3, dtype=np.float32)
    assert LanguageMeans(first).centred(vector, chinese=True) == pytest.approx(
        LanguageMeans(second).centred(vector, chinese=True))
    assert (first.batches, second.batches) == (1, 0)
