"""`AgenticSearchOrchestrator`: our bounded tool-calling loop, then finalize() over the union of its chunks."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Executor, Future, wait
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from threading import Event
from typing import Any, Protocol

from chat.agentic.search import DocSearch
from chat.agentic.tools import NEVER_OFFERED, ToolContext, ToolSpec, offered_tools, parse_arguments
from chat.agentic.tracker import RetrievedDocTracker, retrieved_doc_tracker
from chat.agentic.types import AgenticCancelled, AgenticEmpty, AgenticResult, ToolCallRecord, ToolOutcome
from chat.events import AGENTIC, CODE_EXEC, ChatEvent
from chat.offline.planner import OfflinePlanner
from docmind.fairshare import FairShareExecutor
from docmind.llm.base import ChatModel, ToolCall
from docmind.prompts import agentic as prompts
from docmind.prompts import tool_results as texts
from docmind.sandbox import PythonSandbox
from docmind.telemetry import in_context, set_attributes, span
from docmind.tokens import estimate_tokens, truncate_to_tokens
from docmind.websearch import WebSearch
from kb.retrieval.types import Evidence, ScoredChunk, Source

# Shared by all turns: tool calls of one round run in parallel, bounded across the process; one user's
# calls hold at most half the threads, so another user's turn never waits behind all of them.
_POOL = FairShareExecutor(max_workers=6, per_owner=3, thread_name_prefix="agentic-tool")


class Finisher(Protocol):
    """The shared retrieval tail (kb.retrieval.finisher.EvidenceFinisher): rerank the union once,
    MMR, parents, compression, grade; web compensation only when `allow_web`."""

    def run(self, *, query: str, candidates: Sequence[ScoredChunk], allow_web: bool = True,
            trace: Sequence[str] = ()) -> Evidence: ...


# How often a wait for tool results looks at the cancel flag.
CANCEL_POLL_SECONDS = 0.05


def _check(cancel: Event | None, where: str) -> None:
    if cancel is not None and cancel.is_set():
        raise AgenticCancelled(f"client left during the agentic loop ({where})")


def _result(job: Future[ToolOutcome], *, timeout: float, cancel: Event | None) -> ToolOutcome:
    """`job.result(timeout)`, but a cancel ends the wait at once (the tool's thread finishes on its own)."""
    deadline = time.monotonic() + timeout
    while True:
        _check(cancel, "waiting for a tool")
        left = deadline - time.monotonic()
        if left <= 0:
            raise FutureTimeout
        done, _ = wait([job], timeout=min(left, CANCEL_POLL_SECONDS))
        if done:
            return job.result()


class ToolFailed(RuntimeError):
    """A retrieval tool's backend failed: the turn falls back to one-shot retrieval."""


Emit = Callable[[ChatEvent], None]


class AgenticSearchOrchestrator:
    """At most `max_iterations` rounds; a round without tool calls ends the loop.

    Exit conditions, in order: the client left (`AgenticCancelled`); the planner answered
    without tool calls; the round limit. A retrieval backend failure raises `ToolFailed` and an
    empty final result raises `AgenticEmpty`: the caller answers with one-shot retrieval.
    """

    def __init__(self, *, planner: ChatModel | None, model: str, docs: DocSearch, finisher: Finisher,
                 max_iterations: int, knowledge_map: str = "", web: WebSearch | None = None,
                 sandbox: PythonSandbox | None = None, tracker: RetrievedDocTracker | None = None, k: int = 6,
                 result_max_tokens: int = 900, tool_timeout: float = 30.0,
                 executor: Executor | None = None, owner: Hashable | None = None,
                 on_worker_thread: Callable[[], None] | None = None,
                 extra_tools: Sequence[ToolSpec] = (), notes: Sequence[str] = ()) -> None:
        if max_iterations <= 0:
            raise ValueError("max_iterations must be positive")
        if k <= 0 or result_max_tokens <= 50:
            raise ValueError("k must be positive and result_max_tokens above 50")
        self.planner_kind = "llm" if planner is not None else "offline"
        self.planner: ChatModel = planner if planner is not None else OfflinePlanner()
        self.model = model
        self.docs, self.finisher, self.web, self.sandbox = docs, finisher, web, sandbox
        self.max_iterations = max_iterations
        self.knowledge_map = knowledge_map
        self.tracker = tracker or retrieved_doc_tracker
        self.k, self.result_max_tokens = k, result_max_tokens
        self.tool_timeout = tool_timeout
        # `owner` (the asking user) is held to its share of the shared pool.
        self.executor = executor or _POOL.for_owner(owner)
        # Run in the pool thread around each tool call (the composition layer drops stale DB
        # connections there: pool threads outlive requests). The loop itself knows no ORM.
        self.on_worker_thread = on_worker_thread
        builtin = offered_tools(web_enabled=web is not None, sandbox_enabled=sandbox is not None)
        # External MCP tools come after ours and can never take a built-in name (store_memory…).
        names = {t.name for t in builtin} | set(NEVER_OFFERED)
        self.tools: tuple[ToolSpec, ...] = (*builtin, *(t for t in extra_tools if t.name not in names))
        self.notes = tuple(notes)

    def system_prompt(self) -> str:
        return prompts.system_prompt(tools=self.tools, knowledge_map=self.knowledge_map,
                                     max_iterations=self.max_iterations)

    def run(self, *, question: str, classification: Any = None, history: Any = None, emit: Emit | None = None,
            cancel: Event | None = None, session_id: str | None = None,
            recall_memory: Callable[[str], list[str]] | None = None) -> AgenticResult:
        started = time.perf_counter()
        emit = emit or (lambda event: None)
        # `history` is not replayed to the planner: the classifier's rewrite already resolves it.
        rewritten = str(getattr(classification, "rewritten", "") or "").strip()
        user = prompts.user_message(question, rewritten)
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt()},
                                          {"role": "user", "content": user}]
        schemas = [t.schema() for t in self.tools]
        chunks: list[ScoredChunk] = []
        records: list[ToolCallRecord] = []
        computations: list[dict[str, Any]] = []
        trace: list[str] = [f"planner: {self.planner_kind}; tools: {', '.join(t.name for t in self.tools)}",
                            *self.notes]
        used_web, rounds, stop_reason = False, 0, "max_iterations"
        # One tracker session per turn: cleared on return, error or cancellation alike.
        with self.tracker.session(session_id) as sid:
            ctx = ToolContext(session_id=sid, tracker=self.tracker, docs=self.docs, web=self.web,
                              sandbox=self.sandbox, k=self.k, result_max_tokens=self.result_max_tokens,
                              memory=recall_memory)
            for rnd in range(1, self.max_iterations + 1):
                _check(cancel, "between rounds")
                with span("agentic.round", {"docmind.round": rnd, "docmind.planner": self.planner_kind}):
                    reply = self.planner.complete(messages, model=self.model, tools=schemas, temperature=0.0)
                    if not reply.tool_calls:
                        stop_reason = "planner stopped"
                        break
                    rounds = rnd
                    calls = [replace(c, id=c.id or f"call_{rnd}_{i}") for i, c in enumerate(reply.tool_calls)]
                    emit(ChatEvent(AGENTIC, {"round": rnd, "planner": self.planner_kind,
                                             "tool_calls": [{"id": c.id, "name": c.name, "arguments": _shown(c)}
                                                           for c in calls]}))
                    outcomes = self._run_round(ctx, rnd, calls, records, cancel)
                messages.append({"role": "assistant", "content": reply.content or None,
                                 "tool_calls": [_echo(c) for c in calls]})
                for call, outcome in zip(calls, outcomes, strict=True):
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.text})
                    chunks.extend(outcome.chunks)
                    used_web = used_web or outcome.used_web
                    if outcome.computation is not None:
                        computations.append(outcome.computation)
                trace.append(f"round {rnd}: " + "; ".join(_summary(r) for r in records if r.round == rnd))
        trace.append(f"stop: {stop_reason} after {rounds} tool round(s), {len(records)} call(s)")
        _check(cancel, "before the final rerank")
        for comp in computations:  # protocol order: all agentic events, then the code_exec ones
            emit(ChatEvent(CODE_EXEC, comp))
        evidence = self.finalize(question=rewritten or question, chunks=chunks, used_web=used_web, trace=trace)
        return AgenticResult(
            evidence=evidence, rounds=rounds, stop_reason=stop_reason, used_web=used_web,
            tool_calls=tuple(r.as_dict() for r in records), computations=self._computation_blocks(computations),
            trace=evidence.trace, planner=self.planner_kind,
            timings_ms={**evidence.timings_ms, "agentic_total": round((time.perf_counter() - started) * 1000, 2)})

    def finalize(self, *, question: str, chunks: Sequence[ScoredChunk], used_web: bool,
                 trace: Sequence[str] = ()) -> Evidence:
        """Union of every call's chunks → the shared tail, once (it dedupes by key, best score winning).

        Rerank scores from different calls (and KB vs web) are not comparable, so the union is
        reranked on one scale. Web compensation only when the loop never touched the web: the
        model could have searched it and chose not to, so a second web search would override its judgement.
        """
        kb = sum(1 for c in chunks if c.source == Source.KB)
        notes = [*trace, f"finalize: union of {len(chunks)} chunks (KB {kb}, web {len(chunks) - kb})"]
        if used_web:
            notes.append("web compensation off: the loop already searched the web")
        evidence = self.finisher.run(query=question, candidates=chunks, allow_web=not used_web, trace=notes)
        if not evidence.chunks:
            raise AgenticEmpty("the agentic loop found no evidence")
        summary = (f"evidence: KB {len(evidence.kb_chunks)}, web {len(evidence.web_chunks)}, "
                   f"grade {evidence.grade.grade.value}")
        return replace(evidence, trace=(*evidence.trace, summary))

    def _run_round(self, ctx: ToolContext, rnd: int, calls: list[ToolCall],
                   records: list[ToolCallRecord], cancel: Event | None = None) -> list[ToolOutcome]:
        offered = {t.name: t for t in self.tools}
        started = time.perf_counter()
        pending: list[tuple[ToolCall, dict[str, Any] | str, Any]] = []
        for call in calls:
            spec = offered.get(call.name)
            if spec is None:  # store_memory and kb_meta land here too: they are not offered
                pending.append((call, call.arguments, ToolOutcome(text=texts.unknown_tool(call.name, offered),
                                                                  error="unknown tool")))
                continue
            try:
                args = parse_arguments(spec, call.arguments)
            except ValueError as exc:
                pending.append((call, call.arguments, ToolOutcome(text=texts.invalid_arguments(call.name, str(exc)),
                                                                  error=f"bad arguments: {exc}")))
                continue
            job = self.executor.submit(in_context(_on_worker), spec, ctx, args, self.on_worker_thread)
            pending.append((call, args, job))
        outcomes: list[ToolOutcome] = []
        for call, args, job in pending:
            if isinstance(job, ToolOutcome):
                outcome = job
            else:
                try:
                    outcome = _result(job, timeout=self.tool_timeout, cancel=cancel)
                except FutureTimeout:
                    outcome = ToolOutcome(text=texts.timed_out(call.name), error="timeout")
                except AgenticCancelled:
                    raise
                except Exception as exc:
                    raise ToolFailed(f"{call.name} failed: {exc.__class__.__name__}: {exc}") from exc
            outcome = self._bounded(outcome)
            outcomes.append(outcome)
            records.append(ToolCallRecord(
                round=rnd, call_id=call.id, name=call.name, arguments=args, result_count=len(outcome.chunks),
                document_ids=tuple(dict.fromkeys(c.document_id for c in outcome.chunks if c.document_id is not None)),
                filtered=outcome.filtered, error=outcome.error, duration_ms=(time.perf_counter() - started) * 1000))
        return outcomes

    def _bounded(self, outcome: ToolOutcome) -> ToolOutcome:
        """No tool result may exceed the per-result budget, whatever the tool did."""
        if estimate_tokens(outcome.text) <= self.result_max_tokens:
            return outcome
        return replace(outcome, text=truncate_to_tokens(outcome.text, self.result_max_tokens - 12) + texts.RESULT_CUT)

    @staticmethod
    def _computation_blocks(computations: list[dict[str, Any]]) -> tuple[str, ...]:
        """Sandbox runs as prompt blocks; the prompt assembler owns their budget and drops whole blocks to fit."""
        return tuple(texts.computation_block(code=comp["code"], exit_code=comp["exit_code"],
                                             timed_out=comp["timed_out"], stdout=comp["stdout"])
                     for comp in computations)


def _on_worker(spec: ToolSpec, ctx: ToolContext, args: dict[str, Any],
               hook: Callable[[], None] | None) -> ToolOutcome:
    if hook is not None:
        hook()
    try:
        with span("agentic.tool", {"docmind.tool": spec.name}):
            outcome = spec.run(ctx, args)
            set_attributes({"docmind.tool.results": len(outcome.chunks), "docmind.tool.error": outcome.error or None})
            return outcome
    finally:
        if hook is not None:
            hook()


def _shown(call: ToolCall) -> dict[str, Any] | str:
    try:
        value = json.loads(call.arguments)
    except (json.JSONDecodeError, TypeError):
        return call.arguments
    return value if isinstance(value, dict) else call.arguments


def _echo(call: ToolCall) -> dict[str, Any]:
    # Malformed arguments are echoed as "{}": providers reject a history holding invalid JSON.
    args = call.arguments if isinstance(_shown(call), dict) else "{}"
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": args}}


def _summary(record: ToolCallRecord) -> str:
    arg = record.arguments.get("query", "") if isinstance(record.arguments, dict) else "<malformed>"
    tail = f"error {record.error}" if record.error else f"{record.result_count} result(s)"
    if record.filtered:
        tail += f", {record.filtered} already retrieved"
    return f"{record.name}({str(arg)[:60]}) → {tail}"
