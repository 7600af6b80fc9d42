"""Write RGB's Chinese set as documents and a question set for `manage.py eval_answers`: answerable questions with
their passages, and held-back ones whose on-topic passages do not answer them.

Run: .venv/bin/python -m bench.rgb_questions /tmp/rgb   (writes /tmp/rgb/docs/*.txt and /tmp/rgb/questions.jsonl)
then `manage.py eval_answers /tmp/rgb/questions.jsonl --docs /tmp/rgb/docs`.

RGB (Chen et al., 2024) pairs each news question with passages that answer it and on-topic passages that do not.
Every `--holdout-every`-th question keeps only the passages that do not answer it: it is asked as unanswerable, and
the answer should say the documents do not answer it (a flag). The others keep both kinds. Questions alternate
between the tune and the check split. Every passage is one document; the documents are data the answerer never
saw, from another domain (news) and another source than the development corpus.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.common import arguments, eval_file, write_json

RGB_ZH = "rgb_zh_refine.jsonl"
SMOKE_QUESTIONS = 6


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("target", type=Path, help="folder for docs/ and questions.jsonl")
    parser.add_argument("--questions", type=int, default=120, help="the first N questions of the set")
    parser.add_argument("--passages", type=int, default=3, help="at most this many of each kind per question")
    parser.add_argument("--holdout-every", type=int, default=3)
    args = parser.parse_args(argv)

    rows = [json.loads(line) for line in eval_file(RGB_ZH).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:SMOKE_QUESTIONS if args.smoke else args.questions]
    docs = args.target / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    questions, held_back, documents = [], 0, 0
    for n, row in enumerate(rows):
        held = n % args.holdout_every == args.holdout_every - 1
        kinds = [("n", row.get("negative", []))] + ([] if held else [("p", row.get("positive", []))])
        names = []
        for kind, passages in kinds:
            for k, passage in enumerate(passages[:args.passages]):
                name = f"rgb-{row['id']}-{kind}{k}.txt"
                (docs / name).write_text(passage.strip() + "\n", encoding="utf-8")
                documents += 1
                if kind == "p":
                    names.append(name)
        split = "tune" if n % 2 == 0 else "check"
        if held:
            held_back += 1
            questions.append({"id": f"rgb-{row['id']}", "split": split, "category": "unanswerable",
                              "question": row["query"], "answers": [], "documents": []})
        else:
            answers = [a for a in row["answer"] if isinstance(a, str)] or \
                [a for alt in row["answer"] for a in (alt if isinstance(alt, list) else [alt])]
            questions.append({"id": f"rgb-{row['id']}", "split": split, "category": "news", "question": row["query"],
                              "answers": answers, "documents": names})
    (args.target / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    write_json({"questions": len(questions), "held_back": held_back, "documents": documents,
                "target": str(args.target)}, args.out)


if __name__ == "__main__":
    main()
