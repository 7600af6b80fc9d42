"""Reads of the audit trail: the filters the admin and the API share, and the CSV export."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.db.models import QuerySet

from audit.models import AuditEntry

ACTIONS = {"create": AuditEntry.Action.CREATE, "update": AuditEntry.Action.UPDATE,
           "delete": AuditEntry.Action.DELETE, "access": AuditEntry.Action.ACCESS}
CSV_COLUMNS = ["id", "timestamp", "actor", "action", "event", "object_type", "object_id", "object", "changes",
               "remote_addr"]


def audit_entries(*, actor: str | None = None, action: str | None = None, since: datetime | None = None,
                  until: datetime | None = None, model: str | None = None) -> QuerySet[AuditEntry]:
    """Entries newest first; `actor` is a username, `action` one of ACTIONS, `model` "app_label.model"."""
    entries = AuditEntry.objects.select_related("actor", "content_type")
    if actor:
        entries = entries.filter(actor__username=actor)
    if action:
        entries = entries.filter(action=ACTIONS[action])
    if since is not None:
        entries = entries.filter(timestamp__gte=since)
    if until is not None:
        entries = entries.filter(timestamp__lt=until)
    if model:
        app_label, _, name = model.partition(".")
        entries = entries.filter(content_type__app_label=app_label, content_type__model=name.lower())
    return entries.order_by("-timestamp", "-id")


def entry_row(entry: AuditEntry) -> dict:
    return {
        "id": entry.pk, "timestamp": entry.timestamp.isoformat(),
        "actor": entry.actor.get_username() if entry.actor_id and entry.actor else None,
        "action": entry.get_action_display() and next(k for k, v in ACTIONS.items() if v == entry.action),
        "event": (entry.additional_data or {}).get("event", "") if isinstance(entry.additional_data, dict) else "",
        "object_type": f"{entry.content_type.app_label}.{entry.content_type.model}",
        "object_id": entry.object_pk, "object": entry.object_repr,
        "changes": entry.changes if isinstance(entry.changes, dict) else {},
        "remote_addr": entry.remote_addr,
    }


def csv_lines(entries: Iterable[AuditEntry]) -> Iterator[str]:
    """The entries as CSV text, a line at a time (an export of a million rows never sits in memory whole)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    yield flush()
    for entry in entries:
        row = entry_row(entry)
        row["changes"] = json.dumps(row["changes"], ensure_ascii=False)
        writer.writerow([_safe_cell(row[c]) for c in CSV_COLUMNS])
        yield flush()


def _safe_cell(value: object) -> object:
    """A spreadsheet runs a cell starting with = + - @ as a formula: audit values are user text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
