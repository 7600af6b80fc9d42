"""The MEMORY scope of the chat: list, explain, forget one or all, remember — over the memory services."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from docmind import backends
from memory.backends import get_memory_index
from memory.commands import Command, MemoryCommandParser, MemoryScopeAnswerer
from memory.selectors import memory_items_from_db
from memory.services import memory_forget, memory_forget_all
from memory.similarity import RAW, scale_for
from memory.turn import TYPE_LABELS, build_recaller, extract_and_save
from memory.types import MemoryParams

log = logging.getLogger(__name__)

# Calibrated similarity a memory must reach to be the one "忘掉……这条" means, when no words match.
FORGET_MATCH_MIN = 0.6


def _norm(text: str) -> str:
    return re.sub(r"\W", "", text.lower())


def _match_forget_target(*, user_id: int, target: str, items: Sequence[Any], params: MemoryParams) -> list[Any]:
    """Memories the user named: those containing their words, else the closest one by meaning."""
    wanted = _norm(target)
    if not wanted:
        return []
    literal = [m for m in items if wanted in _norm(m.content) or _norm(m.content) in wanted]
    if literal:
        return literal

    embedder = backends.get_embedder()
    scale = scale_for(embedder) if params.calibrate else RAW
    try:
        hits = get_memory_index().search(embedder.embed_passages([target])[0], user_id=user_id, k=1)
    except Exception:
        log.exception("memory forget: similarity search failed")
        return []
    by_id = {m.id: m for m in items}
    return [by_id[pk] for pk, cos in hits if pk in by_id and scale.passages(cos) >= FORGET_MATCH_MIN]


def memory_scope_reply(*, user_id: int, message: str, hints: Sequence[str], params: MemoryParams,
                       chat_model: Any = None) -> str:
    """The MEMORY scope: list what is remembered, explain it, forget one / all, remember a statement, or answer a
    question about the user from what they said."""
    command = MemoryCommandParser().run(message=message)
    items = memory_items_from_db(user_id=user_id)
    forgotten: list[str] = []
    remembered: list[str] = []
    if command.command is Command.FORGET_ALL:
        forgotten = [m.content for m in items]
        memory_forget_all(user_id=user_id)
    elif command.command is Command.FORGET:
        for item in _match_forget_target(user_id=user_id, target=command.target, items=items, params=params):
            if memory_forget(user_id=user_id, memory_id=item.id):
                forgotten.append(item.content)
    elif command.command is Command.REMEMBER and params.enabled:
        saved = extract_and_save(user_id=user_id, message=message, hints=hints, params=params, chat_model=chat_model)
        ids = [s["id"] for s in saved if s["id"]]
        remembered = [m.content for m in memory_items_from_db(user_id=user_id) if m.id in ids]
    elif command.command is Command.ABOUT_ME:
        # The memories that bear on the question as a turn's recall finds them, the closest first; the rest are not
        # the answer.
        try:
            recalled = build_recaller(params).run(user_id=user_id, query=message, include_standing=False)
        except Exception:
            log.exception("memory scope: recall for a question about the user failed")
            recalled = None
        by_id = {m.id: m for m in items}
        items = [by_id[m.item.id] for m in (recalled.memories if recalled is not None else ()) if m.item.id in by_id]
    if forgotten or remembered:
        items = memory_items_from_db(user_id=user_id)
    shown = [(TYPE_LABELS.get(m.memory_type, m.memory_type), m.content, m.access_count) for m in items]
    return MemoryScopeAnswerer().run(message=message, command=command, memories=shown, forgotten=forgotten,
                                     remembered=remembered)
