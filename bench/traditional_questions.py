"""Write a question set's Chinese questions in Traditional characters (OpenCC s2t; s2twp with --taiwan).

Run: .venv/bin/python -m bench.traditional_questions eval/corpus/questions.jsonl /tmp/questions-hant.jsonl
then `manage.py eval_answers /tmp/questions-hant.jsonl --docs eval/corpus/docs`.

`--taiwan` also uses Taiwan words (軟體 for 软件, 印表機 for 打印机), which character conversion does not undo.

The documents stay Simplified and the gold answers too (an answer quotes the document), so the run shows
what a reader who writes Traditional Chinese gets from a Simplified knowledge base. Questions without Chinese
and conversations (whose turns depend on each other's wording) are left out.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import opencc

from bench.common import arguments, write_json

_CJK = re.compile(r"[\u4e00-\u9fff]")
SMOKE_ROWS = 5


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--taiwan", action="store_true", help="Taiwan words too (s2twp)")
    args = parser.parse_args(argv)

    convert = opencc.OpenCC("s2twp" if args.taiwan else "s2t").convert
    rows = []
    lines = args.source.read_text(encoding="utf-8").splitlines()
    for line in lines[:SMOKE_ROWS] if args.smoke else lines:
        row = json.loads(line) if line.strip() else None
        if not row or row.get("conversation") or not _CJK.search(row["question"]):
            continue
        hant = convert(row["question"])
        if hant != row["question"]:
            rows.append({**row, "id": f"{row['id']}-hant", "question": hant})
    args.target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    write_json({"source": str(args.source), "target": str(args.target), "questions": len(rows),
                "taiwan": args.taiwan}, args.out)


if __name__ == "__main__":
    main()
