"""Writes of curated answers: create, change, delete, import from CSV/XLSX; each embeds the question it stores."""
from __future__ import annotations

import csv
import io
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from django.core.cache import cache
from django.db import transaction

from curation.models import QaPair, QaSource
from curation.selectors import VERSION_KEY, pairs_to_embed
from docmind import backends
from kb.models import Document, KnowledgeBase

log = logging.getLogger(__name__)
cache_log = logging.getLogger("docmind.cache")

MAX_QUESTION_CHARS = 1000
MAX_ANSWER_CHARS = 20_000
MAX_IMPORT_ROWS = 5000


class CurationError(ValueError):
    """Input refused (empty question, unknown document, unreadable file…); the message is shown to the user."""


def curation_version_bump() -> None:
    """Every process reloads its matrix of curated questions at its next chat turn (best-effort, like every
    cache use: when the cache is down, turns read the table each time)."""
    try:
        cache.set(VERSION_KEY, time.time_ns(), None)
    except Exception:  # noqa: BLE001
        cache_log.warning("curation_version_bump: the cache failed", exc_info=True)


def _embed(question: str) -> tuple[list[float], str]:
    embedder = backends.get_embedder()
    vector = embedder.embed_query(question)
    return [float(x) for x in vector.reshape(-1)], embedder.name


def _clean(question: str, answer: str) -> tuple[str, str]:
    question, answer = (question or "").strip(), (answer or "").strip()
    if not question:
        raise CurationError("the question must not be empty")
    if not answer:
        raise CurationError("the answer must not be empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise CurationError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    if len(answer) > MAX_ANSWER_CHARS:
        raise CurationError(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    return question, answer


def _documents(kb: KnowledgeBase, document_ids: Iterable[int]) -> list[Document]:
    """The documents a pair may cite: those of its own base (a reader of the answer may read them)."""
    wanted = set(document_ids)
    found = list(Document.objects.filter(pk__in=wanted, kb=kb))
    if len(found) != len(wanted):
        raise CurationError("documents must be documents of the same knowledge base")
    return found


def qa_pair_create(*, kb: KnowledgeBase, question: str, answer: str, author: Any = None,
                   document_ids: Sequence[int] = (), source: str = QaSource.MANUAL) -> QaPair:
    """A new curated answer of `kb`; the caller checked that `author` may edit `kb`."""
    question, answer = _clean(question, answer)
    documents = _documents(kb, document_ids)
    vector, embedder = _embed(question)
    with transaction.atomic():
        pair = QaPair.objects.create(kb=kb, question=question, answer=answer, vector=vector, embedder=embedder,
                                     source=source, author=author if getattr(author, "is_authenticated", False)
                                     else None)
        if documents:
            pair.documents.set(documents)
        transaction.on_commit(curation_version_bump, robust=True)
    return pair


def qa_pair_update(*, pair: QaPair, question: str | None = None, answer: str | None = None,
                   document_ids: Sequence[int] | None = None, is_active: bool | None = None,
                   author: Any = None) -> QaPair:
    """Change a pair; a new question is embedded again. The author becomes whoever changed it last."""
    new_question, new_answer = _clean(pair.question if question is None else question,
                                      pair.answer if answer is None else answer)
    documents = _documents(pair.kb, document_ids) if document_ids is not None else None
    if new_question != pair.question or not pair.vector:
        pair.vector, pair.embedder = _embed(new_question)
    pair.question, pair.answer = new_question, new_answer
    if is_active is not None:
        pair.is_active = is_active
    if getattr(author, "is_authenticated", False):
        pair.author = author
    with transaction.atomic():
        pair.save()
        if documents is not None:
            pair.documents.set(documents)
        transaction.on_commit(curation_version_bump, robust=True)
    return pair


def qa_pair_delete(*, pair: QaPair) -> None:
    with transaction.atomic():
        pair.delete()
        transaction.on_commit(curation_version_bump, robust=True)


def qa_pairs_embed_missing(*, limit: int = 500) -> int:
    """Embed active pairs that lack a vector of the current embedder (after the embedder changed)."""
    name = backends.get_embedder().name
    count = 0
    for pair in pairs_to_embed(embedder_name=name)[:limit]:
        pair.vector, pair.embedder = _embed(pair.question)
        pair.save(update_fields=["vector", "embedder"])
        count += 1
    if count:
        curation_version_bump()
    return count


def qa_pairs_import(*, kb: KnowledgeBase, name: str, data: bytes, author: Any = None) -> list[QaPair]:
    """Pairs from a CSV or XLSX file: a `question` and an `answer` column (a header row naming them, or the
    first two columns). All rows or none: a bad row is refused with its number and nothing is stored."""
    rows = _rows(name, data)
    if not rows:
        raise CurationError("the file holds no question/answer rows")
    if len(rows) > MAX_IMPORT_ROWS:
        raise CurationError(f"the file holds more than {MAX_IMPORT_ROWS} rows")
    header = [str(c or "").strip().lower() for c in rows[0]]
    if "question" in header and "answer" in header:
        q, a = header.index("question"), header.index("answer")
        body, first = rows[1:], 2
    else:
        q, a, body, first = 0, 1, rows, 1
    cleaned = []
    for number, row in enumerate(body, start=first):
        cells = [str(c).strip() if c is not None else "" for c in row]
        if not any(cells):
            continue
        try:
            cleaned.append(_clean(cells[q] if q < len(cells) else "", cells[a] if a < len(cells) else ""))
        except CurationError as exc:
            raise CurationError(f"row {number}: {exc}") from None

    embedder = backends.get_embedder()
    matrix = [embedder.embed_query(question) for question, _ in cleaned]
    owner = author if getattr(author, "is_authenticated", False) else None
    with transaction.atomic():
        pairs = QaPair.objects.bulk_create([
            QaPair(kb=kb, question=question, answer=answer, vector=[float(x) for x in vector.reshape(-1)],
                   embedder=embedder.name, source=QaSource.IMPORT, author=owner)
            for (question, answer), vector in zip(cleaned, matrix, strict=True)])
        transaction.on_commit(curation_version_bump, robust=True)
    return pairs


def _rows(name: str, data: bytes) -> list[list[Any]]:
    lower = (name or "").lower()
    if lower.endswith(".xlsx"):
        # heavy: openpyxl (about 0.4 s) loads only for an .xlsx import; django.setup() loads this module
        from openpyxl import load_workbook

        try:
            book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except Exception as exc:  # noqa: BLE001 - any unreadable workbook is the same refusal
            raise CurationError(f"not a readable XLSX file ({exc.__class__.__name__})") from None
        sheet = book.worksheets[0]
        rows = [list(row) for _, row in zip(range(MAX_IMPORT_ROWS + 2), sheet.iter_rows(values_only=True),
                                            strict=False)]
        book.close()
        return rows
    if lower.endswith(".csv"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                text = data.decode("gb18030")
            except UnicodeDecodeError:
                raise CurationError("the CSV file is neither UTF-8 nor GB18030 text") from None
        return [row for _, row in zip(range(MAX_IMPORT_ROWS + 2), csv.reader(io.StringIO(text)), strict=False)]
    raise CurationError("import takes a .csv or .xlsx file")
