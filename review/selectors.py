"""Reads of the review queue, cut to what a user may see: items of bases it edits whose evidence it can read."""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from kb.access import editable_kb_ids, is_kb_admin, readable_kb_ids
from review.models import ReviewItem, ReviewStatus


def review_items_for(user: Any) -> QuerySet[ReviewItem]:
    """An admin sees every item; an editor the items of bases it edits, minus any whose evidence came from a
    base it cannot read (the question and answer quote that evidence); a member none."""
    items = ReviewItem.objects.select_related("kb", "resolved_by", "qa_pair")
    if is_kb_admin(user):
        return items
    editable = editable_kb_ids(user)
    if not editable:
        return items.none()
    items = items.filter(kb_id__in=editable)
    readable = readable_kb_ids(user)
    hidden = [pk for pk, kbs in items.values_list("pk", "kbs") if not set(kbs or ()) <= readable]
    return items.exclude(pk__in=hidden) if hidden else items


def open_count_for(user: Any) -> int:
    return review_items_for(user).filter(status=ReviewStatus.OPEN).count()
