"""manage.py eval_answers FILE… : answer quality per category and split, through the chat pipeline."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chat.evaluation.runner import Asker, eval_user, ingest_files, run_set
from chat.evaluation.scoring import load_questions, report, rows_as_dicts, table
from config_admin.registry import spec
from docmind.bilingual import get_lexicon
from docmind.database import unapplied_migrations


class Command(BaseCommand):
    help = ("Ask question sets (JSON lines: question, category, split, answers, documents) through the chat "
            "pipeline and report answer-hit, cites-gold, false 'not found', wrong-and-unflagged and the "
            "reliability of each confidence band, per category and split.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--docs", type=Path, default=None,
                            help="folder of the documents the questions name (default: docs/ beside the first file)")
        parser.add_argument("--split", default=None, help="ask only this split (tune or check)")
        parser.add_argument("--category", action="append", default=[], help="ask only these categories")
        parser.add_argument("--limit", type=int, default=None, help="ask only the first N questions")
        parser.add_argument("--domain", default="eval-answers", help="knowledge domain of the documents")
        parser.add_argument("--json", type=Path, default=None, help="write the report and every answer here")
        parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                            help="override an AI config value for this run only")

    def handle(self, *args: Any, **options: Any) -> None:
        for path in options["files"]:
            if not path.is_file():
                raise CommandError(f"{path} is not a file")
        questions = load_questions(options["files"])
        if options["split"]:
            questions = [q for q in questions if q.split == options["split"]]
        if options["category"]:
            questions = [q for q in questions if q.category in options["category"]]
        if options["limit"]:
            questions = questions[: options["limit"]]
        if not questions:
            raise CommandError("no question to ask")
        docs = options["docs"] or options["files"][0].parent / "docs"
        wanted = sorted({name for q in questions for name in q.documents})
        missing = [name for name in wanted if not (docs / name).is_file()]
        if missing:
            raise CommandError(f"documents missing from {docs}: {', '.join(missing[:5])} "
                               "(eval/corpus/build.py writes the corpus's)")
        if unapplied_migrations():
            raise CommandError("the database is not migrated: run `manage.py migrate` with the same settings first")
        files = sorted(p for p in docs.iterdir() if p.is_file()) if docs.is_dir() else []
        self.stdout.write(f"ingesting {len(files)} documents from {docs}…")
        ids = ingest_files(files, domain=options["domain"])
        offline = not os.environ.get("OPENAI_API_KEY")

        get_lexicon()  # loaded before the first question, as a server's start-up does, so no answer pays for it
        self.stdout.write(f"asking {len(questions)} questions ({'offline' if offline else 'with the model'})")
        names, overrides = {v: k for k, v in ids.items()}, self._overrides(options["set"])
        asker = Asker(user=eval_user("eval-answers"), names_by_id=names, overrides=overrides)
        statements = Asker(user=eval_user("eval-answers-statements"), names_by_id=names, overrides=overrides)
        rows = run_set(questions, asker, statements)
        result = report(rows)
        self.stdout.write(table("overall", result["overall"]))
        for split, part in result["splits"].items():
            self.stdout.write(table(f"[{split}]", part["overall"]))
            for category, stats in part["categories"].items():
                self.stdout.write(table(f"[{split}] {category}", stats))
            bands = ", ".join(f"{b} {v['right']} of {v['n']}" for b, v in part["reliability"].items())
            self.stdout.write(f"[{split}] right per band: {bands}")
        if options["json"]:
            options["json"].write_text(json.dumps({"mode": "offline" if offline else "model", "report": result,
                                                   "rows": rows_as_dicts(rows)}, ensure_ascii=False, indent=1),
                                       encoding="utf-8")

    @staticmethod
    def _overrides(items: list[str]) -> dict[str, Any]:
        values = {}
        for item in items:
            key, _, raw = item.partition("=")
            try:
                values[key] = spec(key).parse(raw)
            except Exception as exc:
                raise CommandError(f"--set {item}: {exc}") from exc
        return values
