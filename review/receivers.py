"""The chat app saves answers and verdicts; these receivers put the weak and unhelpful ones in the queue.

A failure here is logged and never fails the chat turn or the feedback request that saved the row."""
from __future__ import annotations

import logging

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from chat.models import Message, MessageFeedback
from review import services

log = logging.getLogger(__name__)


def _safely(call, what: str) -> None:
    def run() -> None:
        try:
            call()
        except Exception:  # noqa: BLE001 - the queue is an aid; the answer and the verdict stay saved
            log.exception("review queue: could not record %s", what)

    transaction.on_commit(run, robust=True)


@receiver(post_save, sender=Message, dispatch_uid="review-answer")
def answer_saved(sender, instance: Message, raw: bool = False, **kwargs) -> None:
    if raw:
        return
    _safely(lambda: services.review_item_for_answer(message=instance), f"answer {instance.pk}")


@receiver(post_save, sender=MessageFeedback, dispatch_uid="review-feedback")
def feedback_saved(sender, instance: MessageFeedback, raw: bool = False, **kwargs) -> None:
    if raw:
        return
    _safely(lambda: services.review_item_for_feedback(feedback=instance), f"feedback {instance.pk}")
