"""Work done once when a server process starts: the ingestion and evaluation workers and the knowledge map."""
from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections

from docmind import backends, bilingual
from evals.worker import start_background_worker as start_eval_worker
from kb.domains.service import build_domain_service

log = logging.getLogger(__name__)


def on_server_start() -> None:
    _warm_up_indexes()
    if settings.INGEST_WORKER:
        # heavy: the worker's pipeline loads scipy (about 0.3 s); only when the worker runs
        from kb.ingestion.worker import start_background_worker

        start_background_worker()
    if settings.EVAL_WORKER:
        start_eval_worker()
    _load_knowledge_index()


def _warm_up_indexes() -> None:
    """Start loading the in-process search indexes (Milvus Lite), the bilingual dictionary and the embedder's
    language means now rather than on the first question; until the indexes are ready Milvus answers searches,
    and writes never wait for them."""
    threading.Thread(target=warm_up, name="docmind-warm-up", daemon=True).start()


def warm_up(*, wait: bool = False) -> None:
    """What the server's warm-up thread loads; `wait`: return once the indexes are loaded too (else each loads
    in a thread of its own). Errors are logged, never raised: whatever failed loads on first use instead."""
    try:
        # heavy: the indexes load scipy (about 0.3 s), on the warm-up thread rather than at the server's start
        from docmind.indexes.stores import get_lexical_index, get_vector_store

        get_vector_store().warm_up(wait=wait)
        get_lexical_index().warm_up(wait=wait)
    except Exception:  # a store that cannot open is reported by /healthz and the first request
        log.exception("search indexes not warmed up")
    try:
        bilingual.get_lexicon()  # about a second of parsing that the first cross-language question would pay
    except Exception:  # without it a cross-language question loads it itself (or searches untranslated)
        log.exception("bilingual dictionary not loaded")
    try:
        # One batch of short passages the first question in another language than its answer would wait for.
        backends.get_language_means().means()
    except Exception:  # an embedder that cannot be built is reported by the first question that needs it
        log.exception("the embedder's language means not measured")


def _load_knowledge_index() -> None:
    """Seed 003: load the knowledge-domain index, generating domains without a row — in the
    background, since with a model configured each missing domain costs LLM calls."""
    def work() -> None:
        try:
            generated = build_domain_service().load_index()
            if generated:
                log.info("knowledge map: generated domains %s", ", ".join(generated))
        except Exception:  # e.g. not migrated yet: the map is an aid, the server still starts
            log.exception("knowledge map index not loaded")
        finally:
            close_old_connections()

    threading.Thread(target=work, name="knowledge-index", daemon=True).start()
