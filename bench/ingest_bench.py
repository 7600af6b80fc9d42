"""Ingestion throughput (child chunks/s) against the embedder's own throughput on the same texts.

Run: .venv/bin/python bench/ingest_bench.py [--docs 8] — uses a throw-away data dir.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["DOCMIND_DATA_DIR"] = tempfile.mkdtemp(prefix="docmind-bench-")
os.environ["DOCMIND_INGEST_WORKER"] = "false"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docmind.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

SENTENCES = ["知识库系统把文档切分为父块和子块。", "子块用于检索，父块用于给模型提供上下文。",
             "向量检索与关键词检索并行执行，然后用倒数排名融合。", "Hybrid retrieval combines BM25 with dense vectors.",
             "员工每年享有十五天带薪年假，需要提前一周申请。", "差旅报销需要在出差结束后三十天内提交发票。"]


def make_text(seed: int, chars: int = 6000) -> str:
    parts, i = [], seed
    while sum(map(len, parts)) < chars:
        parts.append(f"第{i}条：" + SENTENCES[i % len(SENTENCES)])
        i += 7
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=8)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)

    from docmind.backends import get_embedder
    from kb.ingestion.worker import process_pending_documents
    from kb.models import Chunk, ChunkLevel
    from kb.search import get_searcher
    from kb.services import document_ingest_text

    embedder = get_embedder()
    get_searcher()  # open Milvus once, outside the timed part
    embedder.embed_passages(["warm-up"])
    for i in range(args.docs):
        document_ingest_text(title=f"doc {i}", text=make_text(i * 1000), domain="bench")
    start = time.perf_counter()
    process_pending_documents()
    pipeline_s = time.perf_counter() - start
    texts = list(Chunk.objects.filter(level=ChunkLevel.CHILD).order_by("id").values_list("content", flat=True))

    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_passages(texts[i:i + 32])
    embed_s = time.perf_counter() - start
    pipeline_rate, embed_rate = len(texts) / pipeline_s, len(texts) / embed_s
    print(f"child chunks: {len(texts)} in {args.docs} documents")
    print(f"ingestion pipeline: {pipeline_rate:.1f} chunks/s ({pipeline_s:.1f} s)")
    print(f"embedder alone:     {embed_rate:.1f} chunks/s ({embed_s:.1f} s)")
    print(f"ratio: {pipeline_rate / embed_rate:.3f} (target >= 0.9)")


if __name__ == "__main__":
    main()
