"""Ask an evaluation set through `ChatPipeline` as a member of the team would, and record what they saw."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from chat.evaluation.scoring import STATEMENT, EvalQuestion, Outcome, Scored, score


def ingest_files(paths: Iterable[Path], *, domain: str) -> dict[str, int]:
    """File name → document id; a file ingested before (same content) is reused. Waits until indexed."""
    from django.core.files import File

    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_create

    ids: dict[str, int] = {}
    for path in paths:
        with path.open("rb") as handle:
            document, _ = document_create(uploaded_file=File(handle, name=path.name), title=None, domain=domain)
        ids[path.name] = document.pk
    process_pending_documents()
    return ids


def eval_user(username: str):
    """A new member (an earlier run's user, its conversations and memories are deleted first): memories from
    another run would shape this run's answers. What a member reads is what the evaluation answers from."""
    from django.contrib.auth import get_user_model

    from docmind.roles import MEMBER, ensure_roles, user_set_role
    from memory.services import memory_forget_all

    ensure_roles()
    for old in get_user_model().objects.filter(username=username):
        memory_forget_all(user_id=old.pk)
        old.delete()
    user = get_user_model().objects.create(username=username)
    user_set_role(user=user, role=MEMBER)
    return user


class Asker:
    """Runs questions through the pipeline; conversation turns go to the same conversation, in order.

    The semantic answer cache is off: a set asks near-duplicate phrasings on purpose, and a cached answer to
    one would score as the other's."""

    def __init__(self, *, user: Any, names_by_id: dict[int, str], overrides: dict[str, Any] | None = None) -> None:
        from chat.pipeline import ChatPipeline
        from chat.pipeline.stages import build_stages

        values = {"cache.semantic.enabled": False, **(overrides or {})}
        self.user = user
        self.names_by_id = names_by_id
        self.pipeline = ChatPipeline(stages_factory=lambda snapshot, kb_ids: build_stages(
            kb_ids=kb_ids, snapshot={**snapshot, **values}))
        self.conversations: dict[str, int] = {}

    def ask(self, question: EvalQuestion) -> Outcome:
        conversation_id = self.conversations.get(question.conversation) if question.conversation else None
        outcome = Outcome()
        events: dict[str, dict] = {}
        for event in self.pipeline.run(user=self.user, message=question.question, conversation_id=conversation_id,
                                       cancel=threading.Event()):
            events.setdefault(event.type, event.data)
            if event.type in ("done", "error"):
                events[event.type] = event.data
        if "done" not in events:
            outcome.error = str(events.get("error", {}).get("code", "no done event"))
            return outcome
        done, start = events["done"], events.get("start", {})
        if question.conversation:
            self.conversations[question.conversation] = done["conversation_id"]
        names = self.names_by_id
        outcome.answer = done.get("answer") or ""
        outcome.citations = tuple(done.get("citations", []))
        outcome.cited = tuple(dict.fromkeys(names.get(c.get("document_id"), "") for c in done.get("citations", [])))
        kb_chunks = events.get("retrieval", {}).get("kb_chunks", [])
        outcome.retrieved = tuple(dict.fromkeys(names.get(c.get("document_id"), "") for c in kb_chunks))
        outcome.band = done.get("confidenceBand") or ""
        outcome.score = done.get("confidenceScore")
        outcome.no_evidence = bool(start.get("noEvidence"))
        outcome.low_confidence = bool(start.get("lowConfidence"))
        outcome.rewritten = events.get("understanding", {}).get("rewritten", "")
        return outcome


def run_set(questions: Sequence[EvalQuestion], asker: Asker, statements: Asker | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Scored]:
    """Every question once, conversations turn by turn in file order. Statements go to `statements` (another
    user) when given: "I prefer short answers" would otherwise shape every later answer of the run."""
    rows = []
    ordered = sorted(questions, key=lambda q: (q.conversation, q.turn) if q.conversation else ("", 0))
    keep = {id(q): i for i, q in enumerate(questions)}
    for n, question in enumerate(ordered, 1):
        by = statements if statements is not None and question.category == STATEMENT else asker
        rows.append(score(question, by.ask(question)))
        if progress:
            progress(n, len(ordered))
    return sorted(rows, key=lambda r: keep[id(r.question)])
