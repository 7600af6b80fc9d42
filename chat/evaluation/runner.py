"""Ask an evaluation set through `ChatPipeline` as a member of the team would, and record what they saw."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files import File

from chat.evaluation.scoring import PERSONAL, EvalQuestion, Outcome, Scored, score
from chat.pipeline import ChatPipeline
from chat.pipeline.stages import build_stages
from docmind.roles import MEMBER, ensure_roles, user_set_role
from kb.services import document_create
from memory.services import memory_forget_all


def ingest_files(paths: Iterable[Path], *, domain: str) -> dict[str, int]:
    """File name → document id; a file ingested before (same content) is reused. Waits until indexed."""
    # heavy: the worker's pipeline and indexes load scipy (about 0.3 s); the URL conf imports this module
    from kb.ingestion.worker import process_pending_documents

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

    def __init__(self, *, user: Any, names_by_id: dict[int, str], overrides: dict[str, Any] | None = None,
                 kb: Sequence[int] | None = None, cancel: threading.Event | None = None,
                 pause: Callable[[], None] | None = None,
                 budget: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        """`kb`: the knowledge bases asked (None: every one `user` reads), checked as a chat turn checks them.
        `pause` is called between the pipeline's steps, so a caller can hold an evaluation back while users
        wait for answers; `cancel` ends the question being asked; `budget` is entered around each question
        (the model-call budget a chat turn runs under)."""
        values = {"cache.semantic.enabled": False, **(overrides or {})}
        self.user = user
        self.names_by_id = names_by_id
        self.kb = list(kb) if kb is not None else None
        self.cancel = cancel or threading.Event()
        self.pause = pause
        self.budget = budget
        self.pipeline = ChatPipeline(stages_factory=lambda snapshot, kb_ids: build_stages(
            kb_ids=kb_ids, snapshot={**snapshot, **values}))
        self.conversations: dict[str, int] = {}

    def _events(self, message: str, conversation_id: int | None) -> dict[str, dict]:
        events: dict[str, dict] = {}
        stream = self.pipeline.run(user=self.user, message=message, conversation_id=conversation_id, kb=self.kb,
                                   cancel=self.cancel)
        for event in stream:
            events.setdefault(event.type, event.data)
            if event.type in ("done", "error"):
                events[event.type] = event.data
            if self.pause is not None:
                self.pause()
        return events

    def ask(self, question: EvalQuestion) -> Outcome:
        with self.budget() if self.budget is not None else nullcontext():
            return self._ask(question)

    def _ask(self, question: EvalQuestion) -> Outcome:
        conversation_id = self.conversations.get(question.conversation) if question.conversation else None
        outcome = Outcome()
        for earlier in question.history:
            if self.cancel.is_set():
                break
            done = self._events(earlier, conversation_id).get("done")
            if done is None:
                outcome.error = "history turn not answered"
                return outcome
            conversation_id = done["conversation_id"]
        started = time.perf_counter()
        events = self._events(question.question, conversation_id)
        outcome.latency_ms = round((time.perf_counter() - started) * 1000, 1)
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
        outcome.band = done.get("confidence_band") or ""
        outcome.score = done.get("confidence_score")
        outcome.no_evidence = bool(start.get("no_evidence"))
        outcome.low_confidence = bool(start.get("low_confidence"))
        outcome.rewritten = events.get("understanding", {}).get("rewritten", "")
        return outcome


def ask_all(questions: Sequence[EvalQuestion], asker: Asker, statements: Asker | None = None) -> Iterator[Scored]:
    """Every question once, scored as soon as it is answered: conversations turn by turn in file order.
    Statements, and questions asking back what the user said, go to `statements` (another user) when given: "I
    prefer short answers" would otherwise shape every later answer of the run."""
    ordered = sorted(questions, key=lambda q: (q.conversation, q.turn) if q.conversation else ("", 0))
    for question in ordered:
        by = statements if statements is not None and question.category in PERSONAL else asker
        yield score(question, by.ask(question))


def run_set(questions: Sequence[EvalQuestion], asker: Asker, statements: Asker | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Scored]:
    """`ask_all` collected, in the order of `questions`."""
    rows = []
    keep = {id(q): i for i, q in enumerate(questions)}
    for n, row in enumerate(ask_all(questions, asker, statements), 1):
        rows.append(row)
        if progress:
            progress(n, len(questions))
    return sorted(rows, key=lambda r: keep[id(r.question)])
