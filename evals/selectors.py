"""Reads of the evaluation app that are more than one ORM line."""
from __future__ import annotations

from pathlib import PurePosixPath

from kb.models import Document


def document_aliases(kb_id: int) -> dict[str, str]:
    """Names a set may use for a document of base `kb_id` (title, file name, title with its type) → its title."""
    aliases: dict[str, str] = {}
    for title, file, file_type in Document.objects.filter(kb_id=kb_id).values_list("title", "file", "file_type"):
        for name in (title, PurePosixPath(file or "").name, f"{title}.{file_type}" if file_type else ""):
            if name:
                aliases.setdefault(name.casefold(), title)
    return aliases
