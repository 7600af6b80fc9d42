"""Reads of curated answers: the lists the API and the admin show, and the vectors a chat turn compares with.

The vectors of every active pair are kept in each process as one matrix, reloaded when the curation version
(a stamp in the cache framework, changed by every write) moves, so that matching a chat question costs one
cache read and one matrix product instead of a query and a decode per pair.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import QuerySet

from curation.matcher import CuratedCandidates
from curation.models import QaPair

log = logging.getLogger(__name__)
cache_log = logging.getLogger("docmind.cache")

VERSION_KEY = "curation:version"


def qa_pair_list(*, kb_ids: Collection[int], kb: int | None = None) -> QuerySet[QaPair]:
    pairs = QaPair.objects.filter(kb_id__in=list(kb_ids)).select_related("kb", "author").prefetch_related("documents")
    if kb is not None:
        pairs = pairs.filter(kb_id=kb)
    return pairs.order_by("-updated_at", "-id")


def qa_pair_served(*, pair_id: int, kb_ids: Collection[int]) -> QaPair | None:
    """An active pair of one of `kb_ids` (the asker's readable bases), with its author."""
    return (QaPair.objects.filter(pk=pair_id, kb_id__in=list(kb_ids), is_active=True)
            .select_related("author").first())


def cited_documents(*, pair: QaPair, kb_ids: Collection[int]) -> list[tuple[int, str]]:
    """(id, title) of the pair's documents the asker may read: the others are not named to them."""
    return list(pair.documents.filter(kb_id__in=list(kb_ids)).order_by("title", "id").values_list("id", "title"))


@dataclass(frozen=True)
class _Loaded:
    version: object
    embedder: str
    ids: np.ndarray
    kb_ids: np.ndarray
    questions: tuple[str, ...]
    matrix: np.ndarray


_lock = threading.Lock()
_loaded: _Loaded | None = None


def curation_version() -> object:
    """The stamp every write to curated answers changes; None when the cache cannot say (then reload)."""
    try:
        return cache.get(VERSION_KEY)
    except Exception:  # noqa: BLE001 - a cache outage makes every turn read the table, never a stale answer
        cache_log.warning("curation version: the cache failed", exc_info=True)
        return None


def curated_candidates(*, kb_ids: Collection[int], embedder_name: str, dim: int) -> CuratedCandidates:
    """Active pairs of `kb_ids` embedded by `embedder_name`, with unit vectors."""
    global _loaded
    version = curation_version()
    loaded = _loaded
    if loaded is None or version is None or loaded.version != version or loaded.embedder != embedder_name:
        with _lock:
            loaded = _load(version, embedder_name, dim)
            _loaded = loaded
    if not len(loaded.ids):
        return CuratedCandidates.empty(dim)
    mask = np.isin(loaded.kb_ids, np.fromiter(kb_ids, dtype=np.int64))
    picked = np.flatnonzero(mask)
    return CuratedCandidates(tuple(int(i) for i in loaded.ids[picked]),
                             tuple(loaded.questions[i] for i in picked), loaded.matrix[picked])


def _load(version: object, embedder_name: str, dim: int) -> _Loaded:
    rows = list(QaPair.objects.filter(is_active=True, embedder=embedder_name, vector__isnull=False)
                .values_list("id", "kb_id", "question", "vector"))
    rows = [r for r in rows if isinstance(r[3], list) and len(r[3]) == dim]
    matrix = np.asarray([r[3] for r in rows], dtype=np.float32).reshape(len(rows), dim)
    if len(rows):
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return _Loaded(version, embedder_name, np.asarray([r[0] for r in rows], dtype=np.int64),
                   np.asarray([r[1] for r in rows], dtype=np.int64), tuple(r[2] for r in rows), matrix)


def pairs_to_embed(*, embedder_name: str) -> QuerySet[QaPair]:
    """Active pairs without a vector of the current embedder (embedded by another model, or not yet)."""
    return QaPair.objects.filter(is_active=True).exclude(embedder=embedder_name, vector__isnull=False)
