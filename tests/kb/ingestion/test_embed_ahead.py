"""embed_ahead: batches in order, the next one embedding while the caller handles the current one."""
import threading

import numpy as np
import pytest

from kb.ingestion.embed_ahead import embed_ahead


def _embed(texts: list[str]) -> np.ndarray:
    return np.asarray([[float(len(t))] for t in texts], dtype=np.float32)


def test_it_yields_every_batch_in_order_with_its_vectors():
    batches = [["a"], ["bb", "ccc"], ["dddd"]]
    out = list(embed_ahead(_embed, batches, texts=lambda b: b))
    assert [b for b, _ in out] == batches
    assert [m.ravel().tolist() for _, m in out] == [[1.0], [2.0, 3.0], [4.0]]


def test_the_next_batch_embeds_while_the_caller_handles_the_current_one():
    second_started = threading.Event()

    def embed(texts):
        if texts == ["second"]:
            second_started.set()
        return _embed(texts)

    for batch, _ in embed_ahead(embed, [["first"], ["second"]], texts=lambda b: b):
        if batch == ["first"]:
            # still inside the handling of the first batch: the second must already be running
            assert second_started.wait(10)


def test_an_embedding_error_surfaces_at_its_batch_after_the_earlier_ones():
    def embed(texts):
        if texts == ["bad"]:
            raise RuntimeError("model failed")
        return _embed(texts)

    seen = []
    with pytest.raises(RuntimeError, match="model failed"):
        for batch, _ in embed_ahead(embed, [["ok"], ["bad"], ["later"]], texts=lambda b: b):
            seen.append(batch)
    assert seen == [["ok"]]


def test_it_rejects_a_zero_depth():
    with pytest.raises(ValueError):
        list(embed_ahead(_embed, [["a"]], texts=lambda b: b, depth=0))
