"""The chat turn's two touch points with long-term memory: recall before the prompt, extraction after `done`."""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections, connections
from opentelemetry.trace import SpanContext

from docmind import backends
from docmind.telemetry import current_span_context, follow_up_span
from memory.backends import get_memory_cache, get_memory_index
from memory.commands import is_forget_request
from memory.extraction import MemoryExtractor, extract
from memory.models import MemorySource
from memory.recall import MemoryRecaller
from memory.selectors import memory_active_items, memory_items_from_db
from memory.services import memory_save, memory_touch
from memory.similarity import RAW, scale_for
from memory.style import AnswerStyle, parse_answer_style
from memory.types import MemoryParams, RecallResult

log = logging.getLogger(__name__)

TYPE_LABELS = {"preference": "偏好", "fact": "事实", "profile": "画像", "instruction": "要求"}
# Extraction is the answer's afterthought: one worker, so a burst of turns queues instead of competing.
_extract_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-extract")


@dataclass(frozen=True)
class TurnMemory:
    """What recall gives one turn: prompt lines, the user profile, the answer style, and the trace."""

    recall: RecallResult = field(default_factory=RecallResult)
    lines: tuple[str, ...] = ()
    profile: str = ""
    style: AnswerStyle = field(default_factory=AnswerStyle)
    # Memories that bear on a memory-aware question ("根据我的情况…"): the offline answer names them.
    applied: tuple[str, ...] = ()

    @property
    def cache_tag(self) -> str:
        """Part of the answer-cache scope: an answer made with other memories is not reused."""
        if not self.recall.memories:
            return ""
        ids = ",".join(str(i) for i in sorted(self.recall.ids))
        return ":m" + hashlib.sha1(ids.encode()).hexdigest()[:12]

    def as_log(self) -> dict[str, Any]:
        return {"recalled": [{"id": m.item.id, "type": m.item.memory_type, "score": m.score,
                              "from_index": m.from_index} for m in self.recall.memories],
                "degraded": self.recall.degraded, "trace": list(self.recall.trace),
                "style": {"language": self.style.language, "brevity": self.style.brevity}}


def build_recaller(params: MemoryParams) -> Any:
    embedder = backends.get_embedder()
    cache = get_memory_cache()
    try:
        index = get_memory_index()
    except Exception:
        log.exception("memory vector index unavailable: standing memories only")
        index = None
    return MemoryRecaller(
        embed_query=embedder.embed_query, index=index,
        load_active=lambda user_id: memory_active_items(user_id=user_id, cache=cache,
                                                        ttl_seconds=params.cache_ttl_seconds),
        scale=scale_for(embedder) if params.calibrate else RAW,
        top_k=params.recall_top_k, min_score=params.recall_min_score, margin=params.recall_margin)


def recall_for_turn(*, user_id: int, query: str, params: MemoryParams, memory_aware: bool = False,
                    recaller: Any = None) -> TurnMemory:
    """The user's memories for this question; any failure gives an empty TurnMemory, never a failed answer."""
    if not params.enabled:
        return TurnMemory()
    try:
        result: RecallResult = (recaller or build_recaller(params)).run(user_id=user_id, query=query)
    except Exception:
        log.exception("memory recall failed; answering without memories")
        return TurnMemory(recall=RecallResult(degraded="recall failed"))
    items = [m.item for m in result.memories]

    memory_touch(user_id=user_id, memory_ids=[m.item.id for m in result.memories if not m.from_index])
    lines = tuple(f"[{TYPE_LABELS.get(i.memory_type, i.memory_type)}] {i.content}" for i in items)
    profile = "；".join(i.content for i in items if i.memory_type == "profile")
    style = parse_answer_style([i.content for i in sorted(items, key=lambda i: i.created_at, reverse=True)])
    applied: tuple[str, ...] = ()
    if memory_aware:
        applied = tuple(m.item.content for m in result.memories if m.score is not None
                        or m.item.memory_type == "profile")
    return TurnMemory(recall=result, lines=lines, profile=profile, style=style, applied=applied)


def recall_tool(*, user_id: int, params: MemoryParams) -> Callable[[str], list[str]]:
    """The agentic loop's recall_memory: the user's relevant memories for a query, as short lines."""

    def run(query: str) -> list[str]:
        if not params.enabled:
            return []
        result = build_recaller(params).run(user_id=user_id, query=query, include_standing=False)
        return [f"[{TYPE_LABELS.get(m.item.memory_type, m.item.memory_type)}] {m.item.content}"
                for m in result.memories]

    return run


def schedule_extraction(*, user_id: int, message: str, hints: Sequence[str], params: MemoryParams,
                        chat_model: Any) -> Future | None:
    """Queue extraction of this turn's message; the answer has already been sent when it runs."""
    if not (params.enabled and params.extraction_enabled) or not message.strip() or is_forget_request(message):
        return None
    if chat_model is None and not hints:
        return None  # offline only explicit statements are kept, and understanding found none
    return _extract_pool.submit(_on_worker, extract_and_save, current_span_context(), user_id=user_id,
                                message=message, hints=list(hints), params=params, chat_model=chat_model)


def _on_worker(job: Callable[..., Any], turn_span: SpanContext | None, **kwargs: Any) -> Any:
    # The worker thread outlives requests: its connection is checked before and closed after.
    close_old_connections()
    try:
        # In the turn's trace: its model call is part of what the turn cost, though it runs after `done`.
        with follow_up_span("memory.extract", turn_span, {"docmind.user_id": kwargs.get("user_id")}):
            return job(**kwargs)
    finally:
        connections.close_all()


def extract_and_save(*, user_id: int, message: str, hints: Sequence[str], params: MemoryParams,
                     chat_model: Any) -> list[dict[str, Any]]:
    saved: list[dict[str, Any]] = []
    try:
        model = (MemoryExtractor(chat_model=chat_model, model=params.extract_model,
                                 structured_outputs=params.structured_outputs) if chat_model else None)
        existing = memory_items_from_db(user_id=user_id)
        candidates, how = extract(message=message, hints=hints, existing=existing, model=model)
        source = MemorySource.EXTRACTOR if how == "model" else MemorySource.EXPLICIT
        for candidate in candidates:
            outcome = memory_save(user_id=user_id, candidate=candidate, source=source, params=params)
            saved.append({"id": outcome.memory.pk if outcome.memory else None, "action": outcome.action,
                          "replaced": list(outcome.replaced), "extractor": how})
    except Exception:
        log.exception("memory extraction failed for user %s", user_id)
    return saved

