"""Writes of the review queue: an item per weak or unhelpful answer, and an editor's decision on it."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from chat.models import FeedbackRating, Message, MessageFeedback, MessageRole, MessageStatus
from curation.models import QaPair, QaSource
from curation.services import CurationError, qa_pair_create
from evals.models import EvalItem, EvalSet
from evals.services import default_set, item_from_answer
from kb.models import Document, KnowledgeBase
from review.models import ReviewItem, ReviewReason, ReviewStatus

# Bands that put an answer in the queue by themselves: answered under the low label, or not found.
FLAGGED_BANDS = {"low": ReviewReason.LOW, "none": ReviewReason.NOT_FOUND}


class ReviewError(ValueError):
    """A decision refused (curate without an answer…); the message is shown to the editor."""


class ReviewAction:
    RESOLVE, DISMISS, CURATE = "resolve", "dismiss", "curate"
    ALL = (RESOLVE, DISMISS, CURATE)


def review_item_for_answer(*, message: Message) -> ReviewItem | None:
    """Queue an answer flagged low or not found (an answer made again replaces the item's text)."""
    if message.role != MessageRole.ASSISTANT or message.status != MessageStatus.COMPLETE:
        return None
    reason = FLAGGED_BANDS.get(message.confidence_band)
    existing = ReviewItem.objects.filter(message=message).first()
    if reason is None:
        if (existing is not None and existing.status == ReviewStatus.OPEN
                and existing.reason != ReviewReason.THUMBS_DOWN):
            existing.delete()  # answered again, now well: nothing left to review
        return None
    return _upsert(message, reason=reason, comment=None)


def review_item_for_feedback(*, feedback: MessageFeedback) -> ReviewItem | None:
    """Queue an answer a reader marked unhelpful, with the reader's reason; a resolved item opens again."""
    if feedback.rating != FeedbackRating.DOWN:
        return None
    return _upsert(feedback.message, reason=ReviewReason.THUMBS_DOWN, comment=feedback.comment, reopen=True)


def _upsert(message: Message, *, reason: str, comment: str | None, reopen: bool = False) -> ReviewItem | None:
    fields = _snapshot(message)
    if fields is None:
        return None
    with transaction.atomic():
        item = ReviewItem.objects.select_for_update().filter(message=message).first()
        if item is None:
            return ReviewItem.objects.create(message=message, reason=reason, comment=comment or "", **fields)
        for name, value in fields.items():
            setattr(item, name, value)
        # A reader's verdict outranks the system's flag.
        if reason == ReviewReason.THUMBS_DOWN or item.reason != ReviewReason.THUMBS_DOWN:
            item.reason = reason
        if comment is not None:
            item.comment = comment
        if reopen and item.status != ReviewStatus.OPEN:
            item.status, item.resolved_by, item.resolved_at = ReviewStatus.OPEN, None, None
        item.save()
        return item


def _snapshot(message: Message) -> dict[str, Any] | None:
    """Question, answer, evidence and confidence of an answer, and the bases it belongs to; None when it
    touched no knowledge base (a greeting, a web-only turn of a user without bases)."""
    log = message.retrieval_log or {}
    question = (Message.objects.filter(conversation_id=message.conversation_id, role=MessageRole.USER,
                                       pk__lt=message.pk).order_by("-pk").values_list("content", flat=True).first())
    evidence = [card for card in log.get("kb_chunks") or [] if isinstance(card, dict)]
    document_ids = [card.get("document_id") for card in evidence if isinstance(card.get("document_id"), int)]
    bases = dict(Document.objects.filter(pk__in=document_ids).values_list("pk", "kb_id"))
    evidence_kbs = [bases[d] for d in document_ids if d in bases]
    searched = [k for k in log.get("kb_ids") or [] if isinstance(k, int)]
    kb_id = evidence_kbs[0] if evidence_kbs else _home_of(searched)
    if kb_id is None:
        return None
    return {"kb_id": kb_id, "kbs": sorted(set(evidence_kbs) | {kb_id}), "question": question or "",
            "answer": message.content, "evidence": evidence, "confidence_score": message.confidence_score,
            "confidence_band": message.confidence_band}


def _home_of(searched: list[int]) -> int | None:
    """Where an unanswered question goes: the one base searched, else the default base if it was searched,
    else the first base searched."""
    if not searched:
        return None
    if len(searched) == 1:
        return searched[0]
    default = KnowledgeBase.objects.filter(pk__in=searched, is_default=True).values_list("pk", flat=True).first()
    return default if default is not None else min(searched)


def review_resolve(*, item: ReviewItem, action: str, user: Any, answer: str | None = None) -> ReviewItem:
    """An editor's decision: resolved (fixed at the source), dismissed (nothing wrong), or curated (the right
    answer written, which answers this question from now on). The caller checked that `user` edits the base."""
    if action not in ReviewAction.ALL:
        raise ReviewError(f"action must be one of {', '.join(ReviewAction.ALL)}")
    pair: QaPair | None = None
    if action == ReviewAction.CURATE:
        if not (answer or "").strip():
            raise ReviewError("curating needs the correct answer")
        cited = [card["document_id"] for card in item.evidence
                 if isinstance(card, dict) and isinstance(card.get("document_id"), int)]
        in_base = list(Document.objects.filter(pk__in=cited, kb_id=item.kb_id).values_list("pk", flat=True))
        try:
            pair = qa_pair_create(kb=item.kb, question=item.question, answer=answer or "", author=user,
                                  document_ids=in_base, source=QaSource.REVIEW)
        except CurationError as exc:
            raise ReviewError(str(exc)) from None
    status = {ReviewAction.RESOLVE: ReviewStatus.RESOLVED, ReviewAction.DISMISS: ReviewStatus.DISMISSED,
              ReviewAction.CURATE: ReviewStatus.CURATED}[action]
    with transaction.atomic():
        item.status, item.resolved_by, item.resolved_at = status, user, timezone.now()
        if pair is not None:
            item.qa_pair = pair
        item.save(update_fields=["status", "resolved_by", "resolved_at", "qa_pair", "updated_at"])
    return item


def review_to_eval(*, item: ReviewItem, user: Any, eval_set: EvalSet | None = None,
                   answers: list[Any] | tuple[Any, ...] = ()) -> EvalItem:
    """The item's question as an evaluation item, with the documents its answer cited (those of the set's base
    that `user` reads), in `eval_set` or the default set of the item's base. The caller checked that `user`
    edits the item's base and, when given, the set's; raises what `evals.services.item_from_answer` raises."""
    citations = item.message.citations if isinstance(item.message.citations, list) else []
    cited = [c.get("document_id") for c in citations if isinstance(c, dict)]
    target = eval_set if eval_set is not None else default_set(kb=item.kb, created_by=user)
    return item_from_answer(user=user, question=item.question, document_ids=cited, kb_ids=[item.kb_id],
                            eval_set=target, answers=answers)
