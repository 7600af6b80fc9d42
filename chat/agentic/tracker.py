"""`RetrievedDocTracker`: documents already returned to the loop in one chat turn are not returned again."""
from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from kb.retrieval.types import ScoredChunk

T = TypeVar("T", bound=ScoredChunk)


def doc_key(chunk: ScoredChunk) -> str:
    """A document's identity: its id for KB chunks (stable across renames and moves), its URL for web pages."""
    if chunk.document_id is not None:
        return f"doc:{chunk.document_id}"
    return f"{chunk.source.value.lower()}:{chunk.url or chunk.chunk_id}"


class RetrievedDocTracker:
    """Per-session sets of returned documents, so later tool rounds bring new documents instead of repeats.

    A session is one chat turn: every tool round answering one question. Use `session()` so the
    set is dropped when the turn ends, also on error or cancellation. Bounded: at most
    `max_sessions` sessions (least recently used evicted — a turn that leaked its session can't
    grow memory forever) and `max_docs_per_session` documents per session. Thread-safe.
    """

    def __init__(self, *, max_sessions: int = 1024, max_docs_per_session: int = 512) -> None:
        if max_sessions <= 0 or max_docs_per_session <= 0:
            raise ValueError("limits must be positive")
        self.max_sessions = max_sessions
        self.max_docs_per_session = max_docs_per_session
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()

    @contextmanager
    def session(self, session_id: str | None = None) -> Iterator[str]:
        """A fresh session id for one turn; its record is cleared however the block exits."""
        sid = session_id or uuid.uuid4().hex
        try:
            yield sid
        finally:
            self.clear_session(sid)

    def is_already_retrieved(self, session_id: str, key: str) -> bool:
        with self._lock:
            docs = self._sessions.get(session_id)
            return docs is not None and key in docs

    def mark_retrieved(self, session_id: str, keys: Iterable[str]) -> None:
        with self._lock:
            docs = self._touch(session_id)
            for key in keys:
                docs[key] = None
                docs.move_to_end(key)
                while len(docs) > self.max_docs_per_session:
                    docs.popitem(last=False)

    def filter_new(self, session_id: str, chunks: Sequence[T]) -> list[T]:
        """Chunks whose document was not returned earlier in the session, then marks those documents.

        Several chunks of one new document may come back together: dedup is across calls, not
        within one result list.
        """
        # Check and mark under one lock: parallel calls of one round must not both get a document.
        with self._lock:
            docs = self._touch(session_id)
            seen = set(docs)
            fresh = [c for c in chunks if doc_key(c) not in seen]
            for key in dict.fromkeys(doc_key(c) for c in fresh):
                docs[key] = None
                while len(docs) > self.max_docs_per_session:
                    docs.popitem(last=False)
        return fresh

    def clear_session(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def session_count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def _touch(self, session_id: str) -> OrderedDict[str, None]:
        docs = self._sessions.get(session_id)
        if docs is None:
            docs = self._sessions[session_id] = OrderedDict()
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_id)
        return docs


# One per process: tool calls of one turn run on pool threads, so the state can't live in a thread-local.
retrieved_doc_tracker = RetrievedDocTracker()
