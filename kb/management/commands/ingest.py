"""manage.py ingest PATH… [--domain D] [--kb NAME] [--title T]: queue files/folders and wait until they are indexed."""
from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kb.access import kb_default
from kb.ingestion.parsers import SUPPORTED_TYPES
from kb.ingestion.worker import process_pending_documents
from kb.management.commands._kbcommand import open_index
from kb.models import Document, DocumentStatus, KnowledgeBase
from kb.selectors import child_chunk_count
from kb.services import IngestError, document_ingest_path


def allowed_roots() -> list[Path]:
    """DOCMIND_INGEST_ROOTS (os.pathsep-separated), default: the current directory and the data dir."""
    raw = os.environ.get("DOCMIND_INGEST_ROOTS", "").strip()
    roots = [Path(p) for p in raw.split(os.pathsep) if p.strip()] if raw else [Path.cwd(), Path(settings.DATA_DIR)]
    return [root.resolve() for root in roots]


def collect_files(paths: list[str], roots: list[Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if not any(path == root or path.is_relative_to(root) for root in roots):
            raise CommandError(f"{raw} is outside the allowed roots ({', '.join(map(str, roots))}); "
                               "set DOCMIND_INGEST_ROOTS to allow it")
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*")
                                if p.is_file() and p.suffix.lower().lstrip(".") in SUPPORTED_TYPES))
        elif path.is_file():
            files.append(path)
        else:
            raise CommandError(f"{raw} does not exist")
    return files


class Command(BaseCommand):
    help = ("Ingest files or folders (recursively, supported types only) and wait until they are indexed. Paths must "
            "lie under the current directory or the data dir, or under DOCMIND_INGEST_ROOTS (separated by ':').")

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--domain", default="general")
        parser.add_argument("--title", default=None, help="title (only with a single file)")
        parser.add_argument("--kb", default=None, help="knowledge base (name or id); the default one when absent")

    def handle(self, *args, paths: list[str], domain: str, title: str | None, kb: str | None = None,
               **options) -> None:
        target = _knowledge_base(kb)
        files = collect_files(paths, allowed_roots())
        if title and len(files) != 1:
            raise CommandError("--title needs exactly one file")
        open_index()
        created, duplicates, failed = [], 0, []
        for path in files:
            try:
                document, is_new = document_ingest_path(path=path, domain=domain, title=title, kb=target)
            except IngestError as exc:
                failed.append((path, str(exc)))
                continue
            if is_new:
                created.append(document.pk)
            else:
                duplicates += 1
                self.stdout.write(f"duplicate: {path} is already document {document.pk} ({document.title})")
        process_pending_documents()
        chunks = ready = 0
        for document in Document.objects.filter(pk__in=created):
            if document.status == DocumentStatus.READY:
                ready += 1
                chunks += child_chunk_count(document=document)
            else:
                failed.append((Path(document.file.name).name, document.error or document.status))
        for path, reason in failed:
            self.stderr.write(f"failed: {path}: {reason}")
        self.stdout.write(f"created {len(created)}, ready {ready}, duplicates {duplicates}, failed {len(failed)}, "
                          f"child chunks {chunks}")


def _knowledge_base(value: str | None):
    if not value:
        return kb_default()
    found = KnowledgeBase.objects.filter(name=value).first()
    if found is None and value.isdigit():
        found = KnowledgeBase.objects.filter(pk=int(value)).first()
    if found is None:
        raise CommandError(f"no knowledge base named {value!r}")
    return found
