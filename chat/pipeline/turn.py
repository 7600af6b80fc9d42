"""One chat turn: validated input, the saved question, and what is persisted when the turn ends."""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from chat import selectors, services
from chat.models import Conversation, Message, MessageRole, MessageStatus
from chat.pipeline import observe
from chat.pipeline.record import TurnRecord
from chat.types import ConversationContext
from kb import selectors as kb_selectors
from kb.access import KbNotFound, key_scope, readable_kb_ids, requested_kb_ids
from kb.models import Document


class ChatInputError(Exception):
    """Bad input caught before any work starts: a 4xx over HTTP, an `error` event over WebSocket."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


class TurnCancelled(Exception):
    """The client left or pressed cancel; the partial answer is saved as cancelled."""


@dataclass
class ChatTurn:
    user: Any
    question: str
    conversation: Conversation
    question_message: Message
    snapshot: Mapping[str, Any]
    # The knowledge bases this turn may read, computed once when it starts: every store filters on them.
    kb_ids: frozenset[int] = frozenset()
    document_id: int | None = None
    document_title: str = ""
    history: list[dict[str, str]] = field(default_factory=list)
    # The last answered turn (question, rewrite, answer, cited documents): what a follow-up refers to.
    context: ConversationContext = field(default_factory=ConversationContext)
    started: float = field(default_factory=time.monotonic)
    # A regenerated turn: the answer row the new answer replaces (None when the last one was never saved).
    replaces: Message | None = None
    regenerate: bool = False
    # Filled while the turn runs; whatever is here is saved, on success or failure.
    answer: str = ""
    record: TurnRecord = field(default_factory=TurnRecord)

    def __post_init__(self) -> None:
        self.record.kb_ids = sorted(self.kb_ids)

    def elapsed_ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 1)

    def ids(self) -> dict[str, int]:
        return {"conversation_id": self.conversation.pk, "question_id": self.question_message.pk}


def begin_turn(*, user: Any, message: Any, conversation_id: Any, document_id: Any,
               snapshot: Mapping[str, Any], kb: Any = None, regenerate: bool = False,
               edit: bool = False) -> ChatTurn:
    """Validate the request and save the question; raises ChatInputError before anything is written."""
    if not getattr(user, "is_authenticated", False):
        raise ChatInputError("unauthenticated", _("Please sign in first."), status=401)
    if not isinstance(message, str) or not message.strip():
        raise ChatInputError("empty_message", _("The question must not be empty."))
    limit = int(snapshot["chat.max_message_chars"])
    question = message.strip()
    if len(question) > limit:
        raise ChatInputError("message_too_long",
                             _("The question is too long: at most %(limit)d characters, this one has %(length)d.")
                             % {"limit": limit, "length": len(question)})
    kb_ids = _kb_ids(user, kb)
    if _through_key(user):
        # A key is shared by all its callers (a widget's visitors): none continues another's conversation, and
        # none reads or writes its creator's long-term memories.
        if conversation_id not in (None, ""):
            raise ChatInputError("conversation_not_found", _("No such conversation."), status=404)
        snapshot = {**snapshot, "memory.enabled": False, "memory.extraction.enabled": False}
    conversation = _conversation(user, conversation_id)
    document_title = ""
    if document_id is not None:
        # Reading one whole document is reading its original: a view grant does not reach it.
        document_id, document_title = _document(document_id, kb_ids & _original_kb_ids(user))
    if regenerate or edit:
        return _regenerated_turn(user=user, question=question, conversation=conversation, snapshot=snapshot,
                                 kb_ids=kb_ids, document_id=document_id, document_title=document_title, edit=edit)
    history = [] if conversation is None else selectors.conversation_history(conversation=conversation)
    context = ConversationContext() if conversation is None else \
        selectors.conversation_context(conversation=conversation, kb_ids=kb_ids)
    if conversation is None:
        conversation = services.conversation_start(user=user, question=question)
    saved = services.message_add_question(conversation=conversation, content=question)
    return ChatTurn(user=user, question=question, conversation=conversation, question_message=saved,
                    snapshot=snapshot, kb_ids=kb_ids, document_id=document_id, document_title=document_title,
                    history=history,
                    context=context)


def _regenerated_turn(*, user: Any, question: str, conversation: Conversation | None, snapshot: Mapping[str, Any],
                      kb_ids: frozenset[int], document_id: int | None, document_title: str,
                      edit: bool = False) -> ChatTurn:
    """Answer the conversation's last question again: its question row is reused and its answer replaced,
    and the model sees the conversation as it was before that question (not the answer being redone).
    An edit first gives that question row the new text, so the conversation keeps one question per answer."""
    last = None if conversation is None else (
        Message.objects.filter(conversation=conversation, role=MessageRole.USER).order_by("-created_at", "-id")
        .first())
    if edit and last is not None and last.content != question:
        last = services.message_edit_question(message=last, content=question)
    if last is None or last.content != question:
        raise ChatInputError("nothing_to_regenerate", _("Only the last question can be answered again."))
    replaces = (Message.objects.filter(conversation=conversation, role=MessageRole.ASSISTANT, pk__gt=last.pk)
                .order_by("created_at", "id").first())
    return ChatTurn(user=user, question=question, conversation=conversation, question_message=last,
                    snapshot=snapshot, kb_ids=kb_ids, document_id=document_id, document_title=document_title,
                    history=selectors.conversation_history(conversation=conversation, before_id=last.pk),
                    context=selectors.conversation_context(conversation=conversation, kb_ids=kb_ids,
                                                           before_id=last.pk),
                    replaces=replaces, regenerate=True)


def finish_turn(turn: ChatTurn, *, status: str = MessageStatus.COMPLETE, error: str = "",
                citations: list[dict] | None = None, confidence_score: float | None = None,
                confidence_band: str = "") -> Message:
    turn.record.timings_ms["total"] = turn.elapsed_ms()
    turn.record.usage = observe.usage_log(turn.snapshot)
    fields = dict(content=turn.answer, status=status, error=error, citations=citations,
                  retrieval_log=turn.record.as_log(), confidence_score=confidence_score,
                  confidence_band=confidence_band)
    if turn.replaces is not None:
        saved = services.message_replace_answer(message=turn.replaces, **fields)
    else:
        saved = services.message_add_answer(conversation=turn.conversation, **fields)
    observe.after_finish(turn, saved, status)
    return saved


def _id(value: Any, what: str) -> int:
    # bool is an int subclass; `true` is never a valid id.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ChatInputError(f"invalid_{what}", _("%(field)s must be an integer.") % {"field": what})
    try:
        return int(value)
    except ValueError:
        raise ChatInputError(f"invalid_{what}", _("%(field)s must be an integer.") % {"field": what}) from None


def _conversation(user: Any, conversation_id: Any) -> Conversation | None:
    if conversation_id is None or conversation_id == "":
        return None
    try:
        return selectors.conversation_get(user=user, conversation_id=_id(conversation_id, "conversation_id"))
    except Conversation.DoesNotExist:
        # Same answer for "someone else's" and "unknown": never reveal that an id exists.
        raise ChatInputError("conversation_not_found", _("No such conversation."), status=404) from None


def _kb_ids(user: Any, kb: Any) -> frozenset[int]:
    try:
        return requested_kb_ids(user, kb, ask=True)
    except KbNotFound:
        raise ChatInputError("kb_not_found", _("No such knowledge base."), status=404) from None
    except ValueError as exc:
        raise ChatInputError("invalid_kb", f"kb: {exc}") from None


def _through_key(user: Any) -> bool:
    return key_scope(user) is not None


def select_named_document(turn: ChatTurn, text: str) -> bool:
    """Select the document `text` names by its title ("总结一下差旅管理办法"), as if it had been picked in the chat,
    when none is selected and the user may read its original; whether one was. A summary of a named document then
    reads that document, not whichever passages of others a search ranks near its words."""
    if turn.document_id is not None:
        return False
    named = kb_selectors.document_named_in(text=text, kb_ids=turn.kb_ids & _original_kb_ids(turn.user))
    if named is None:
        return False
    turn.document_id, turn.document_title = named
    return True


def _original_kb_ids(user: Any) -> frozenset[int]:
    return readable_kb_ids(user)


def _document(document_id: Any, kb_ids: frozenset[int]) -> tuple[int, str]:
    pk = _id(document_id, "document_id")
    try:
        # A document outside the readable knowledge bases answers like one that does not exist.
        document = kb_selectors.ready_document(document_id=pk, kb_ids=kb_ids)
    except Document.DoesNotExist:
        raise ChatInputError("document_not_found", _("No such document, or it has not finished processing."),
                             status=404) from None
    return document.pk, document.title
