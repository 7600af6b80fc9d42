"""/healthz: the state of database, cache, vector store and LLM mode; 503 when the database is down."""
from __future__ import annotations

import logging
import uuid

from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse

log = logging.getLogger(__name__)


def _check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return {"ok": True, "vendor": connection.vendor}
    except Exception as exc:
        log.warning("health: database unreachable: %s", exc)
        return {"ok": False, "vendor": connection.vendor, "error": type(exc).__name__}


def _check_cache() -> dict:
    backend = type(cache).__name__
    try:
        probe = f"healthz:{uuid.uuid4().hex}"
        cache.set(probe, "1", 5)
        ok = cache.get(probe) == "1"
        cache.delete(probe)
        return {"ok": ok, "backend": backend}
    except Exception as exc:
        return {"ok": False, "backend": backend, "error": type(exc).__name__}


def _check_vector_store() -> dict:
    from docmind.backends import get_vector_store

    try:
        store = get_vector_store()
        return {"ok": store.ping(), "backend": type(store).__name__}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}


def _llm_mode() -> dict:
    from config_admin.conf import ai_config
    from docmind.backends import llm_is_remote

    if not llm_is_remote():
        return {"mode": "offline", "answers": "extractive"}
    try:
        return {"mode": "remote", "model": ai_config.get("llm.main_model")}
    except Exception:
        return {"mode": "remote", "model": None}


def healthz(request) -> JsonResponse:
    database = _check_database()
    body = {
        "database": database,
        "cache": _check_cache(),
        "vector_store": _check_vector_store(),
        "llm": _llm_mode() if database["ok"] else {"mode": "unknown"},
    }
    body["status"] = "ok" if database["ok"] else "unavailable"
    return JsonResponse(body, status=200 if database["ok"] else 503)
