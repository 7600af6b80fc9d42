"""How far the embedder scores a question below its answer when they are in different languages.

Run after `manage.py eval_answers` has ingested the corpus into the same data dir:
  DOCMIND_DATA_DIR=… .venv/bin/python bench/cross_language_gap.py [--split tune] [--json out.json]

For every answerable question of the split with one gold document: the best cosine between the question
(query-embedded) and the stored vectors of that document's chunks. The gap is the median over same-language
pairs minus the median over cross-language pairs (a Chinese question over an English document or the
reverse): the shift `LocalReranker` adds to a cross-language cosine so that both read on one scale. Fit it
on the tune split only; the check split shows whether the gap is a property of the model or of the
questions.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "eval" / "corpus" / "questions.jsonl")
    parser.add_argument("--split", default="tune")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docmind.settings")
    os.environ.setdefault("DOCMIND_INGEST_WORKER", "false")
    import django

    django.setup()
    from chat.evaluation.scoring import load_questions
    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_vector_store
    from docmind.language import is_chinese
    from kb.models import Chunk, ChunkLevel, Document

    embedder, store = get_embedder(), get_vector_store()
    by_name = {d.title: d.pk for d in Document.objects.all()}
    best: dict[str, list[float]] = {"same": [], "cross": []}
    for q in load_questions([args.questions]):
        if q.split != args.split or not q.answerable or len(q.documents) != 1:
            continue
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
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
