"""Many small documents uploaded one by one through POST /api/kb/documents/, against the all-core embedder.

Run (a throw-away data dir each time; writes JSON; --smoke: two documents, no latency round):
  .venv/bin/python -u -m bench.small_docs_bench --docs 80 --out /tmp/small.json
  .venv/bin/python -u -m bench.small_docs_bench --docs 500 --no-latency --out /tmp/small500.json

The server's arrangement in one process: the ingestion worker thread (as `make run` starts it), an
uploader thread posting short Chinese articles (bench/articles.py, 2–3 child chunks each) through the
document API one request per file, and — in the latency round — this thread sending one retrieval
query every 200 ms through the one-shot path. The throughput round runs without queries: it is the
pipeline against the embedder. Right after it, the ingestion embedder alone (its own process, every
core) embeds the very texts the pipeline embedded, in the pipeline's batch size: the ratio of the two
rates is the figure, since other users of a shared machine move both alike — as long as the load is
steady; the share of the round the embedder was busy is the figure that load drift cannot move. Each
stage's time is summed over the round (the stages overlap: they run in different threads), per document.
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable

from bench.articles import article
from bench.common import arguments, percentile, setup_django, write_json

QUERIES = ["年假需要提前几天申请", "差旅报销的期限是多少天", "会议室预订后多久不签到会被释放", "密码有什么要求",
           "供应商准入需要哪些材料", "客户投诉多久要响应", "内部推荐奖励多少钱", "忘记打卡怎么办"]
PROBE_INTERVAL = 0.2
_MISSING = object()


class StageClock:
    """Sums wall time per named stage across threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.wrapped: list[tuple[object, str, object]] = []

    def wrap(self, owner, attr: str, name: str) -> None:
        inner = getattr(owner, attr, None)
        if inner is None or getattr(inner, "_bench_wrapped", False):
            return
        self.wrapped.append((owner, attr, vars(owner).get(attr, _MISSING)))

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                with self.lock:
                    self.seconds[name] += time.perf_counter() - start
                    self.calls[name] += 1

        timed._bench_wrapped = True
        setattr(owner, attr, timed)

    def restore(self) -> None:
        """Put every wrapped attribute back (the process lives on after a smoke run)."""
        for owner, attr, original in reversed(self.wrapped):
            if original is _MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
        self.wrapped.clear()

    def reset(self) -> None:
        with self.lock:
            self.seconds.clear()
            self.calls.clear()

    def report(self, documents: int) -> dict[str, dict[str, float]]:
        with self.lock:
            return {name: {"seconds": round(s, 3), "calls": self.calls[name],
                           "ms_per_document": round(1000 * s / max(1, documents), 1)}
                    for name, s in sorted(self.seconds.items(), key=lambda kv: -kv[1])}


def instrument(clock: StageClock) -> None:
    """Time every stage a document passes; names that do not exist in this version are skipped."""
    import kb.domains
    import kb.ingestion.worker as worker
    import kb.services as services
    from docmind.backends import get_ingest_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb.ingestion import pipeline
    from kb.ingestion.parsers import isolated

    clock.wrap(worker, "claim_next", "claim")
    clock.wrap(isolated.IsolatedParser, "__call__", "parse")
    clock.wrap(pipeline.DocumentIngester, "_store_chunks", "store_chunks")
    clock.wrap(pipeline.DocumentIngester, "prepare", "prepare (parse, store)")
    clock.wrap(pipeline.DocumentIngester, "index_lexical", "bm25_index")
    clock.wrap(pipeline.DocumentIngester, "store_vector_batch", "store_vectors")
    clock.wrap(services, "document_set_progress", "progress_writes")
    clock.wrap(services, "document_mark_ready", "mark_ready")
    clock.wrap(kb.domains, "on_document_ingested", "knowledge_map")
    clock.wrap(getattr(kb.domains, "DomainUpdates", None), "document_ready", "knowledge_map")
    clock.wrap(getattr(kb.domains, "DomainUpdates", None), "flush", "knowledge_map")
    vectors, lexical = get_vector_store(), get_lexical_index()
    clock.wrap(vectors, "upsert", "vector_upsert")
    clock.wrap(vectors, "flush", "vector_flush")
    clock.wrap(vectors, "delete_documents", "vector_delete")
    clock.wrap(lexical, "add", "bm25_add")
    clock.wrap(lexical, "delete_documents", "bm25_delete")
    clock.wrap(get_ingest_embedder(), "embed_passages", "embed")


def _summary(values: list[float]) -> dict[str, float]:
    return {"queries": len(values), "p50_ms": round(statistics.median(values), 1) if values else 0.0,
            "p95_ms": round(percentile(values, 0.95), 1) if values else 0.0}


def _probe(retriever, *, until: Callable[[], bool], minimum: int) -> list[float]:
    latencies: list[float] = []
    next_at = time.perf_counter()
    i = 0
    while len(latencies) < minimum or not until():
        time.sleep(max(0.0, next_at - time.perf_counter()))
        next_at += PROBE_INTERVAL
        start = time.perf_counter()
        retriever.run(query=QUERIES[i % len(QUERIES)], top_k=5)
        latencies.append((time.perf_counter() - start) * 1000)
        i += 1
    return latencies


def _client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(username="bench-admin", defaults={"is_superuser": True,
                                                                                        "is_staff": True})
    client = Client()
    client.force_login(user)
    return client


def _upload(client, seeds: range, domain: str, ids: list[int], errors: list[str]) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import close_old_connections

    try:
        for seed in seeds:
            title, text = article(seed)
            response = client.post("/api/kb/documents/", {
                "file": SimpleUploadedFile(f"article-{seed}.txt", text.encode("utf-8"), "text/plain"),
                "title": title, "domain": domain})
            if response.status_code not in (200, 202):
                errors.append(f"{response.status_code}: {response.content[:200]!r}")
            else:
                ids.append(response.json()["id"])
    finally:
        close_old_connections()


def _settled(ids_expected: int, ids: list[int]) -> bool:
    from kb.models import Document, DocumentStatus

    return len(ids) >= ids_expected and not Document.objects.filter(
        pk__in=ids, status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING]).exists()


def _embedded_texts(ids: list[int]) -> list[str]:
    from kb.ingestion.chunker import retrieval_text
    from kb.models import Chunk, ChunkLevel

    return [retrieval_text(context, content) for context, content in
            Chunk.objects.filter(level=ChunkLevel.CHILD, document_id__in=ids).order_by("id")
            .values_list("context", "content")]


def ingest_round(client, seeds: range, domain: str, *, retriever=None) -> dict:
    """Upload `seeds` one by one while the worker runs; returns when every document is ready or failed."""
    from django.db.models import Count

    from kb.models import Document, DocumentStatus

    ids: list[int] = []
    errors: list[str] = []
    start = time.perf_counter()
    uploader = threading.Thread(target=_upload, args=(client, seeds, domain, ids, errors), daemon=True)
    uploader.start()
    latencies: list[float] = []
    if retriever is not None:
        latencies = _probe(retriever, until=lambda: _settled(len(seeds), ids) and not uploader.is_alive(),
                           minimum=1)
    while uploader.is_alive() or not _settled(len(seeds) - len(errors), ids):
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    uploader.join()
    statuses = dict(Document.objects.filter(pk__in=ids).values_list("status").annotate(n=Count("id"))
                    .values_list("status", "n"))
    texts = _embedded_texts(ids)
    return {"documents": len(ids), "upload_errors": errors[:5], "statuses": statuses, "child_chunks": len(texts),
            "seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 2),
            "documents_per_s": round(len(ids) / seconds, 2), "texts": texts, "latencies": latencies,
            "ready": statuses.get(DocumentStatus.READY, 0)}


def embed_alone(texts: list[str]) -> dict:
    from docmind.backends import get_ingest_embedder
    from kb.ingestion.pipeline import BATCH_SIZE

    embed = get_ingest_embedder().embed_passages
    start = time.perf_counter()
    for i in range(0, len(texts), BATCH_SIZE):
        embed(texts[i:i + BATCH_SIZE])
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 2), "batch": BATCH_SIZE}


def parse_only(docs: int) -> dict:
    """The parse stage alone, as the worker runs it (IsolatedParser with the server's limits), on the articles."""
    from kb.ingestion.parsers.isolated import IsolatedParser

    parser = IsolatedParser()
    texts = [article(seed)[1].encode("utf-8") for seed in range(docs)]
    start = time.perf_counter()
    for data in texts:
        parser(data, "txt")
    seconds = time.perf_counter() - start
    return {"documents": docs, "seconds": round(seconds, 2), "ms_per_document": round(1000 * seconds / docs, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--docs", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0, help="first article seed")
    parser.add_argument("--no-latency", action="store_true", help="skip the round with queries")
    parser.add_argument("--idle-queries", type=int, default=50)
    parser.add_argument("--warm-up", type=int, default=12, help="documents ingested before the timed rounds")
    parser.add_argument("--parse-only", action="store_true", help="time the parse stage alone on --docs articles")
    args = parser.parse_args(argv)
    if args.smoke:
        args.docs, args.warm_up, args.no_latency = 2, 1, True
    if args.parse_only:
        write_json({"parse_only": parse_only(args.docs)}, args.out)
        return
    setup_django(offline=False)  # the bench starts the ingestion worker itself, as the server does

    from django.conf import settings

    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_ingest_embedder, get_reranker
    from kb.ingestion.worker import run_worker
    from kb.retrieval.compose import retrieval_params
    from kb.retrieval.pipeline import OneShotRetriever
    from kb.search import get_searcher

    client = _client()
    get_searcher()
    get_ingest_embedder().embed_passages(["warm-up"])
    stop = threading.Event()
    worker = threading.Thread(target=run_worker, name="docmind-ingest", daemon=True,
                              kwargs={"stop": stop, "sole_worker": True, "poll_seconds": settings.INGEST_POLL_SECONDS})
    worker.start()
    # Something to retrieve from, and every lazy start-up (parser, stores, models) out of the timed rounds.
    base = ingest_round(client, range(10_000, 10_000 + args.warm_up), "bench-base")
    clock = StageClock()
    instrument(clock)

    result: dict = {"docs": args.docs, "warm_up": {k: base[k] for k in ("documents", "child_chunks", "seconds")}}
    rounds = [("throughput", None)]
    if not args.no_latency:
        from kb.access import kb_default

        retriever = OneShotRetriever(searcher=get_searcher().scoped([kb_default().pk]), embedder=get_embedder(),
                                     reranker=get_reranker(), params=retrieval_params(ai_config.snapshot()))
        retriever.run(query="预热查询")
        rounds.append(("latency", retriever))
    for number, (name, retriever) in enumerate(rounds):
        clock.reset()
        idle = _probe(retriever, until=lambda: True, minimum=args.idle_queries) if retriever else []
        first = args.seed + number * 100_000
        run = ingest_round(client, range(first, first + args.docs), f"bench-{name}", retriever=retriever)
        stages = clock.report(run["documents"])
        alone = embed_alone(run.pop("texts"))
        during = run.pop("latencies")
        # The share of the round the embedder was working: immune to the machine's load drifting between the
        # round and the embedder-alone measurement (1.0: the pipeline ran at the embedder's speed).
        busy = round(stages.get("embed", {}).get("seconds", 0.0) / run["seconds"], 3)
        entry = {**run, "embedder_alone": alone, "ratio": round(run["chunks_per_s"] / alone["chunks_per_s"], 3),
                 "embedder_busy": busy, "stages": stages}
        if retriever is not None:
            idle_after = _probe(retriever, until=lambda: True, minimum=args.idle_queries)
            idle_all = idle + idle_after
            entry["queries"] = {"idle": _summary(idle_all), "during_ingestion": _summary(during),
                                "p95_ratio": round(percentile(during, 0.95) / percentile(idle_all, 0.95), 2)}
        result[name] = entry
        print(f"{name}: {run['documents']} documents, {run['child_chunks']} child chunks in {run['seconds']} s "
              f"= {run['chunks_per_s']} chunks/s; embedder alone {alone['chunks_per_s']} chunks/s; "
              f"ratio {entry['ratio']} (target >= 0.9); embedder busy {busy} of the round; statuses {run['statuses']}")
        if "queries" in entry:
            q = entry["queries"]
            print(f"  queries idle p95 {q['idle']['p95_ms']} ms, during ingestion p95 "
                  f"{q['during_ingestion']['p95_ms']} ms: {q['p95_ratio']} (target <= 1.5)")
        for stage, figures in stages.items():
            print(f"  {stage:24s} {figures['seconds']:8.2f} s  {figures['calls']:5d} calls  "
                  f"{figures['ms_per_document']:7.1f} ms/document")
        # After each round, so that a long run interrupted later keeps what it measured.
        write_json(result, args.out, echo=False)
    stop.set()
    from kb.ingestion.wakeup import wake_worker

    wake_worker()
    worker.join(timeout=30)
    clock.restore()
    write_json(result, args.out)


if __name__ == "__main__":
    main()
