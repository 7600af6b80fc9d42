"""How far the embedder scores a question below its answer when they are in different languages.

Run after `manage.py eval_answers` has ingested the corpus into the same data dir:
  DOCMIND_DATA_DIR=… .venv/bin/python -m bench.cross_language_gap [--split tune] [--out out.json] [--smoke]

For every answerable question of the split with one gold document: the best cosine between the question
(query-embedded) and the stored vectors of that document's chunks. The gap is the median over same-language
pairs minus the median over cross-language pairs (a Chinese question over an English document or the
reverse): the shift `LocalReranker` adds to a cross-language cosine so that both read on one scale. Fit it
on the tune split only; the check split shows whether the gap is a property of the model or of the
questions.
"""
from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

import numpy as np

from bench.common import ROOT, arguments, setup_django, write_json

SMOKE_QUESTIONS = 5


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--questions", type=Path, default=ROOT / "eval" / "corpus" / "questions.jsonl")
    parser.add_argument("--split", default="tune")
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("DOCMIND_DATA_DIR"),
                        help="the data dir `manage.py eval_answers` ingested into (default: $DOCMIND_DATA_DIR)")
    args = parser.parse_args(argv)
    setup_django(data_dir=args.data_dir, offline=False, migrate=False)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.evaluation.scoring import load_questions
    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_vector_store
    from docmind.language import is_chinese
    from kb.models import Chunk, ChunkLevel, Document

    embedder, store = get_embedder(), get_vector_store()
    by_name = {d.title: d.pk for d in Document.objects.all()}
    best: dict[str, list[float]] = {"same": [], "cross": []}
    asked = 0
    for q in load_questions([args.questions]):
        if q.split != args.split or not q.answerable or len(q.documents) != 1:
            continue
        if args.smoke and asked >= SMOKE_QUESTIONS:
            break
        asked += 1
        document = by_name.get(Path(q.documents[0]).stem)
        if document is None:
            continue
        chunks = list(Chunk.objects.filter(document_id=document, level=ChunkLevel.CHILD).values_list("id", "content"))
        vectors = store.fetch([pk for pk, _ in chunks])
        if not vectors:
            continue
        query = embedder.embed_query(q.question)
        text = " ".join(content for _, content in chunks)
        cosines = [float(np.dot(query, v) / (np.linalg.norm(query) * np.linalg.norm(v))) for v in vectors.values()]
        best["cross" if is_chinese(text) != is_chinese(q.question) else "same"].append(max(cosines))
    medians = {k: round(statistics.median(v), 4) for k, v in best.items() if v}
    result = {"split": args.split, "n": {k: len(v) for k, v in best.items()}, "median_best_cosine": medians,
              "quartiles": {k: [round(x, 4) for x in statistics.quantiles(v, n=4)] for k, v in best.items()
                            if len(v) > 1},
              "gap": round(medians["same"] - medians["cross"], 4) if len(medians) == 2 else None}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
