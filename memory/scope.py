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
from memory.turn import TYPE_LABELS, extract_and_save
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
    """The MEMORY scope: list what is remembered, explain it, forget one / all, or remember a statement."""
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
    if forgotten or remembered:
        items = memory_items_from_db(user_id=user_id)
    shown = [(TYPE_LABELS.get(m.memory_type, m.memory_type), m.content, m.access_count) for m in items]
    return MemoryScopeAnswerer().run(message=message, command=command, memories=shown, forgotten=forgotten,
                                     remembered=remembered)
