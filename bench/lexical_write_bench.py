"""The cost of writing child chunks to the BM25 store on a Milvus Lite file, as ingestion writes them.

Run (a throw-away Lite file; writes JSON; --smoke: a few texts):
  .venv/bin/python -m bench.lexical_write_bench --articles 400 --rounds 2 --out /tmp/lexical.json

Short Chinese articles (bench/articles.py) are cut into child-sized pieces and written in small batches (`--batch`,
a short document's children) to `MilvusLexicalIndex` with its in-process copy loaded, as the ingestion worker does.
The figure is the process's CPU per text: Milvus Lite's BM25 function, the gRPC round trip inside the process and
the in-process copy's update. It is what each child chunk of a many-small-documents upload costs outside the embedder
on this store, and it moves with the tokenising and hashing of each text.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.articles import article
from bench.common import arguments, write_json

CHILD_CHARS = 240


def texts(articles: int) -> list[str]:
    out: list[str] = []
    for seed in range(articles):
        body = article(1000 + seed)[1]
        out += [body[i:i + CHILD_CHARS] for i in range(0, len(body), CHILD_CHARS)]
    return out


def one_round(pieces: list[str], batch: int, directory: Path) -> dict:
    # heavy: pymilvus and the Lite server load with the first client
    from pymilvus import MilvusClient

    from docmind.indexes.lexical import MilvusLexicalIndex

    uri = str(directory / "lexical.db")
    client = MilvusClient(uri=uri)
    try:
        index = MilvusLexicalIndex(client=client, lite_path=uri, in_process=True)
        index._local.warm_up(wait=True)  # loaded (empty), so each write is applied to the copy at once
        index.add(ids=[0], texts=["预热"], document_ids=[0], domains=["bench"], kb_ids=[1])
        cpu, wall = time.process_time(), time.perf_counter()
        for start in range(0, len(pieces), batch):
            part = pieces[start:start + batch]
            ids = list(range(start + 1, start + 1 + len(part)))
            index.add(ids=ids, texts=part, document_ids=[start + 1] * len(part), domains=["bench"] * len(part),
                      kb_ids=[1] * len(part))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        found = index.search("报销", k=3)
        index.retire()
    finally:
        client.close()
    return {"texts": len(pieces), "cpu_ms_per_text": round(cpu * 1000 / len(pieces), 3),
            "wall_ms_per_text": round(wall * 1000 / len(pieces), 3), "searchable": bool(found)}


def main(argv: list[str] | None = None) -> dict:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--articles", type=int, default=400)
    parser.add_argument("--batch", type=int, default=3, help="texts a write (a short document's children)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    articles, rounds = (4, 1) if args.smoke else (args.articles, args.rounds)
    pieces = texts(articles)
    results = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="lexical-bench-") as directory:
            results.append(one_round(pieces, args.batch, Path(directory)))
    result = {"articles": articles, "batch": args.batch, "load_average": list(os.getloadavg()), "rounds": results}
    write_json(result, args.out)
    return result


if __name__ == "__main__":
    main()
