"""Offline answerer alone: each trial question answered with its own passage as the only evidence.

Run: .venv/bin/python -m bench.extractive_bench [--out out.json] [--smoke]

Retrieval is out of the way (no ingestion, no index, a few seconds), so this measures only which sentences
the extractive answerer quotes: how often the answer contains a gold answer, and how long what it quotes is
(characters after the lead line). A gain bought by quoting more text shows in the length.
"""
from __future__ import annotations

import argparse
import json
import statistics

from bench.common import arguments, eval_file, write_json
from chat.offline.extractive import ExtractiveAnswerer
from kb.retrieval.types import ScoredChunk

SMOKE_QUESTIONS = 6


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    args = parser.parse_args(argv)
    # The answerer is plain Python: no settings, database or index is needed.
    answerer = ExtractiveAnswerer()
    rows = []
    for article in json.loads(eval_file().read_text(encoding="utf-8"))["data"]:
        title = article.get("title") or ""
        for para in article["paragraphs"]:
            chunk = ScoredChunk(chunk_id=para["id"], content=para["context"], score=1.0, document_title=title,
                                context=title)
            for qa in para["qas"]:
                if not qa["question"].strip():
                    continue
                gold = [a["text"] for a in qa["answers"] if a["text"]]
                answer = answerer.run(question=qa["question"], chunks=[chunk])
                quoted = answer.split("\n\n", 1)[1] if "\n\n" in answer else answer
                rows.append({"q": qa["question"], "hit": any(g in answer for g in gold), "chars": len(quoted),
                             "answer": quoted})
        if args.smoke and len(rows) >= SMOKE_QUESTIONS:
            break
    report = {"n": len(rows), "answer_hit": round(sum(r["hit"] for r in rows) / len(rows), 3),
              "mean_answer_chars": round(statistics.mean(r["chars"] for r in rows), 1),
              "median_answer_chars": statistics.median(r["chars"] for r in rows)}
    write_json({"report": report, "rows": rows}, args.out, echo=report)


if __name__ == "__main__":
    main()
