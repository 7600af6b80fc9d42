"""Where the embedder puts Chinese and English text, and what comparing texts less each language's mean changes.

Run after `manage.py eval_answers` has ingested the corpus into the same data dir:
  DOCMIND_DATA_DIR=… .venv/bin/python -m bench.language_means [--split tune] [--out out.json] [--smoke]

Three measures, on the stored vectors of the knowledge base's child chunks:
- `direction`: the cosine between the knowledge base's own language direction (mean of its Chinese chunks less
  mean of its English chunks) and that of the means the product uses (docmind.crosslingual.PARALLEL_PASSAGES).
- `vector_only`: every chunk ranked against each answerable question of the split by one vector score alone, no
  words: the raw cosine with the reranker's cross-language shift added to other-language chunks, the cosine of the
  question and chunk each less its language's mean (the product's means), and the same with the knowledge base's
  own means. Per kind of question (cross-language or not): the share whose gold document is first, and among the
  first five documents.
- `sentence_choice`: for cross-language questions, every quotable sentence of the gold document ranked against the
  question by the raw and by the centred cosine: the share where a sentence holding a gold answer is first, and
  among the first two (how `chat.offline.extractive` chooses the quote across languages).
"""
from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

import numpy as np

from bench.common import ROOT, arguments, setup_django, write_json

SMOKE_QUESTIONS = 5


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=-1, keepdims=True), 1e-12)


def _documents_in_order(scores: np.ndarray, titles: list[str]) -> list[str]:
    order: list[str] = []
    for i in np.argsort(-scores, kind="stable"):
        if titles[i] not in order:
            order.append(titles[i])
    return order


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--questions", type=Path, default=ROOT / "eval" / "corpus" / "questions.jsonl")
    parser.add_argument("--split", default="tune", help="tune, check or all")
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("DOCMIND_DATA_DIR"),
                        help="the data dir `manage.py eval_answers` ingested into (default: $DOCMIND_DATA_DIR)")
    args = parser.parse_args(argv)
    setup_django(data_dir=args.data_dir, offline=False, migrate=False)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.evaluation.scoring import load_questions, normalise
    from chat.offline.extractive import quotable
    from docmind.backends import get_embedder, get_language_means
    from docmind.indexes.stores import get_vector_store
    from docmind.language import is_chinese
    from docmind.rerank import CROSS_LANGUAGE_SHIFT
    from kb.models import Chunk, ChunkLevel

    embedder, store, means = get_embedder(), get_vector_store(), get_language_means().means()
    rows = list(Chunk.objects.filter(level=ChunkLevel.CHILD).select_related("document")
                .values_list("id", "context", "content", "document__title"))
    vectors = store.fetch([pk for pk, *_ in rows])
    rows = [r for r in rows if r[0] in vectors]
    if not rows or means is None:
        write_json({"error": "no stored chunk vectors or no language means"}, args.out)
        return
    matrix = _unit(np.asarray([vectors[pk] for pk, *_ in rows], dtype=np.float64))
    chinese = np.asarray([is_chinese(f"{context}\n{content}") for _, context, content, _ in rows])
    titles = [title for *_, title in rows]
    product = tuple(np.asarray(m, dtype=np.float64) for m in means)
    corpus = (matrix[chinese].mean(axis=0), matrix[~chinese].mean(axis=0)) if chinese.any() and (~chinese).any() \
        else None

    def direction(pair: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return _unit(pair[0] - pair[1])

    ranked: dict[str, Counter] = {"cross": Counter(), "same": Counter()}
    sentences: Counter = Counter()
    asked = 0
    for q in load_questions([args.questions]):
        if (args.split != "all" and q.split != args.split) or not q.answerable or q.category in ("followup",):
            continue
        if args.smoke and asked >= SMOKE_QUESTIONS:
            break
        asked += 1
        gold = {Path(name).stem for name in q.documents}
        asks_chinese = is_chinese(q.question)
        query = np.asarray(embedder.embed_query(q.question), dtype=np.float64)
        other = chinese != asks_chinese
        kind = "cross" if q.category == "crosslang" else "same"
        scores = {"raw_shifted": matrix @ query + np.where(other, CROSS_LANGUAGE_SHIFT, 0.0)}
        for name, pair in (("centred", product), ("centred_own_means", corpus)):
            if pair is None:
                continue
            centred_query = _unit(query - pair[0 if asks_chinese else 1])
            centred = _unit(matrix - np.where(chinese[:, None], pair[0], pair[1]))
            scores[name] = centred @ centred_query
        ranked[kind]["n"] += 1
        for name, values in scores.items():
            order = _documents_in_order(values, titles)
            ranked[kind][f"{name}@1"] += order[0] in gold
            ranked[kind][f"{name}@5"] += bool(gold & set(order[:5]))
        if kind != "cross" or len(gold) != 1:
            continue
        units = [(context, text) for _, context, content, title in rows if title in gold for text in quotable(content)]
        holds = [any(normalise(a) in normalise(text) for a in q.answers) for _, text in units]
        if len(units) < 2 or not any(holds):
            continue
        embedded = np.asarray(embedder.embed_passages([f"{c} {t}".strip() for c, t in units]), dtype=np.float64)
        written_in_chinese = is_chinese(units[0][1])
        sentences["n"] += 1
        centred_query = _unit(query - product[0 if asks_chinese else 1])
        for name, values in (("raw", embedded @ query),
                             ("centred", _unit(embedded - product[0 if written_in_chinese else 1]) @ centred_query)):
            order = np.argsort(-values, kind="stable")
            sentences[f"{name}@1"] += holds[order[0]]
            sentences[f"{name}@2"] += holds[order[0]] or holds[order[1]]

    def shares(counts: Counter) -> dict:
        n = counts["n"]
        return {"n": n, **{k: round(v / n, 3) for k, v in sorted(counts.items()) if k != "n" and n}}

    result = {"split": args.split, "chunks": {"chinese": int(chinese.sum()), "other": int((~chinese).sum())},
              "direction": {"own_vs_product_means": round(float(direction(corpus) @ direction(product)), 3)}
              if corpus is not None else None,
              "vector_only": {kind: shares(counts) for kind, counts in ranked.items()},
              "sentence_choice": shares(sentences)}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
