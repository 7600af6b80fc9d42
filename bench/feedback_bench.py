"""The feedback loop's figures: curated answers served, chunk edits seen by retrieval, the audit table at size.

Run: .venv/bin/python -m bench.feedback_bench [--pairs 1000] [--turns 40] [--edits 10] [--audit-rows 1000000]
     [--out bench-feedback.json] [--smoke]   (throw-away data dir, SQLite + Milvus Lite, offline; DATABASE_URL=mysql://…
     runs the audit part on MariaDB instead — that database is used as it is, so name a scratch one)

1. Curated answers: `--pairs` curated pairs in one knowledge base; whole offline chat turns (ChatPipeline, from
   the saved question to `done`) for paraphrases and exact repeats of curated questions, and the curated probe
   alone (embedding + matrix product + one row read). Goal: a curated answer in ≤ 50 ms p50.
2. Chunk edits: a small ingested document; each edit is a new sentence with an invented word; the time from
   calling the edit service (as the API does, commit included) until both the BM25 and the vector search of
   the base return that chunk for the new word. Goal: ≤ 5 s.
3. Audit: `--audit-rows` entries (50 actors, 4 actions, 8 object types, spread over a year) bulk-inserted, then
   the API's queries timed: newest page, by actor, by action, since a date, all three, and their counts.
   Goal: each well under a second at 1 M rows (indexed, no full scans).
"""
from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from datetime import timedelta

from bench.common import arguments, bench_user, percentile, setup_django, write_json


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50_ms": round(statistics.median(values), 2) if values else 0.0,
            "p95_ms": round(percentile(values, 0.95), 2) if values else 0.0,
            "max_ms": round(max(values), 2) if values else 0.0}


def users():
    return bench_user("bench-editor", "kb_editor"), bench_user("bench-reader", "member")


def curated(pairs: int, turns: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.pipeline import ChatPipeline
    from chat.pipeline.curated_answers import curated_probe
    from chat.pipeline.turn import ChatTurn
    from chat.services import conversation_start, message_add_question
    from chat.types import QueryClassification
    from curation.services import qa_pairs_import
    from kb.models import KnowledgeBase

    editor, reader = users()
    kb = KnowledgeBase.objects.default()
    rng = random.Random(7)
    topics = ["年假", "病假", "报销", "差旅", "VPN", "邮箱", "打印机", "门禁", "食堂", "体检", "社保", "公积金",
              "加班", "调休", "入职", "离职", "绩效", "培训", "会议室", "快递"]
    asks = ["怎么申请", "有多少天", "需要什么材料", "找谁审批", "多久到账", "在哪里办理", "有什么规定", "怎么查询"]
    rows = ["question,answer"] + [f"{topics[i % 20]}{asks[(i // 20) % 8]}（第{i}条）,答案{i}" for i in range(pairs - 8)]
    rows += [f"{t}{a},{t}{a}的官方答案" for t, a in zip(topics[:8], asks, strict=False)]
    started = time.perf_counter()
    qa_pairs_import(kb=kb, name="bench.csv", data="\n".join(rows).encode(), author=editor)
    import_s = time.perf_counter() - started
    exact = [f"{t}{a}" for t, a in zip(topics[:8], asks, strict=False)]
    paraphrased = [f"请问{q}？" for q in exact]
    pipeline = ChatPipeline()

    def turn_ms(question: str) -> tuple[float, bool]:
        began = time.perf_counter()
        events = list(pipeline.run(user=reader, message=question, cancel=threading.Event()))
        took = (time.perf_counter() - began) * 1000
        start = next(e for e in events if e.type == "start")
        return took, "curated" in start.data

    turn_ms(exact[0])  # load the embedder and the matrix once, as a running server has
    whole, hits = [], 0
    for i in range(turns):
        took, hit = turn_ms(rng.choice(exact if i % 2 else paraphrased))
        whole.append(took)
        hits += hit
    conversation = conversation_start(user=reader, question="bench")
    question = message_add_question(conversation=conversation, content=exact[0])
    probe = []
    for _ in range(turns):
        text = rng.choice(exact + paraphrased)
        turn = ChatTurn(user=reader, question=text, conversation=conversation, question_message=question,
                        snapshot={}, kb_ids=frozenset({kb.pk}))
        began = time.perf_counter()
        curated_probe(turn, QueryClassification(rewritten=text))
        probe.append((time.perf_counter() - began) * 1000)
    miss = []
    for i in range(max(4, turns // 4)):
        took, hit = turn_ms(f"北极熊第{i}次冬眠多久？")
        miss.append(took)
    return {"pairs": pairs, "import_s": round(import_s, 2), "curated_turn": summary(whole),
            "served_curated": f"{hits}/{turns}", "probe_only": summary(probe),
            "uncurated_offline_turn_for_comparison": summary(miss)}


def chunk_edits(edits: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.db import transaction

    from docmind.backends import get_embedder
    from kb.editing import chunk_edit
    from kb.ingestion.worker import process_pending_documents
    from kb.models import Chunk, ChunkLevel
    from kb.search import get_searcher
    from kb.services import document_ingest_text, kb_create

    editor, _ = users()
    kb = kb_create(name=f"bench-edits-{time.time_ns()}", owner=editor)
    text = "\n\n".join(f"第{i}节。退款申请提交后，系统在{i + 2}个工作日内原路退回，超过期限请联系客服。"
                         for i in range(30))
    document, _ = document_ingest_text(title="退款规则", text=text, kb=kb, user=editor)
    process_pending_documents()
    children = list(Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).order_by("ordinal"))
    searcher = get_searcher().scoped([kb.pk])
    embedder = get_embedder()
    latencies, lexical_ms, dense_ms = [], [], []
    for i in range(edits):
        chunk = children[i % len(children)]
        word = f"紫晶{i}号钱包"
        new = f"退款会退回到{word}，到账时间为十个工作日。"
        began = time.perf_counter()
        with transaction.atomic():
            chunk_edit(chunk=chunk, content=new, user=editor)
        seen_lexical = seen_dense = None
        while seen_lexical is None or seen_dense is None:
            now = (time.perf_counter() - began) * 1000
            if now > 10_000:
                break
            if seen_lexical is None and any(h.chunk_id == str(chunk.pk) for h in searcher.lexical_search(word, k=3)):
                seen_lexical = now
            if seen_dense is None:
                hits = searcher.vector_search(embedder.embed_query(new), k=1)
                if hits and hits[0].chunk_id == str(chunk.pk):
                    seen_dense = (time.perf_counter() - began) * 1000
        lexical_ms.append(seen_lexical if seen_lexical is not None else float("inf"))
        dense_ms.append(seen_dense if seen_dense is not None else float("inf"))
        latencies.append(max(lexical_ms[-1], dense_ms[-1]))
    return {"edits": edits, "edit_to_both_indexes": summary(latencies), "bm25": summary(lexical_ms),
            "vectors": summary(dense_ms), "chunks_in_document": len(children)}


def audit(rows: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.contrib.auth import get_user_model
    from django.contrib.contenttypes.models import ContentType
    from django.db import connection
    from django.utils import timezone

    from audit.models import AuditEntry
    from audit.selectors import audit_entries

    model = get_user_model()
    actors = [model.objects.get_or_create(username=f"bench-actor-{i}")[0] for i in range(50)]
    types = list(ContentType.objects.all()[:8])
    now = timezone.now()
    rng = random.Random(11)
    AuditEntry.objects.filter(object_repr__startswith="bench ").delete()
    started = time.perf_counter()
    batch = []
    for i in range(rows):
        batch.append(AuditEntry(content_type=types[i % len(types)], object_pk=str(i), object_id=i,
                                object_repr=f"bench {i}", action=rng.randrange(4), actor=actors[rng.randrange(50)],
                                changes={"field": ["a", "b"]},
                                timestamp=now - timedelta(seconds=rng.randrange(365 * 24 * 3600))))
        if len(batch) == 20_000:
            AuditEntry.objects.bulk_create(batch)
            batch = []
    if batch:
        AuditEntry.objects.bulk_create(batch)
    insert_s = time.perf_counter() - started
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    actor = actors[3].username
    since = now - timedelta(days=7)
    queries = {
        "newest_page": {},
        "by_actor": {"actor": actor},
        "by_action": {"action": "delete"},
        "since_7_days": {"since": since},
        "actor_action_since_30_days": {"actor": actor, "action": "update", "since": now - timedelta(days=30)},
    }
    results = {}
    for name, filters in queries.items():
        page_ms, count_ms = [], []
        for _ in range(5):
            began = time.perf_counter()
            list(audit_entries(**filters)[:100])
            page_ms.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            count = audit_entries(**filters).count()
            count_ms.append((time.perf_counter() - began) * 1000)
        results[name] = {"page_of_100_ms": round(statistics.median(page_ms), 2),
                         "count_ms": round(statistics.median(count_ms), 2), "rows_matching": count}
    return {"rows": AuditEntry.objects.count(), "database": connection.vendor, "insert_s": round(insert_s, 1),
            "queries": results}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--audit-rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    if args.smoke:
        args.pairs, args.turns, args.edits, args.audit_rows = 20, 2, 1, 100
    setup_django()
    report = {"curated": curated(args.pairs, args.turns), "chunk_edits": chunk_edits(args.edits),
              "audit": audit(args.audit_rows)}
    write_json(report, args.out)


if __name__ == "__main__":
    main()
