"""/healthz: each backend probed by a read and a write; `down` (503) when the answer path cannot work,
`degraded` (200) when only an optional backend fails, `ok` otherwise.

Core (a failure means questions cannot be answered): the database (users, conversations, config)
and the vector store (both retrievers live in Milvus). Optional: the cache (answers are recomputed)
and the data dir as such (uploads fail; if the database or Milvus Lite live in it, their own
write probes fail too and make the state `down`). The LLM mode is reported, not probed: offline
mode answers without one, and probing a paid API on every health check would cost money.
"""
from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.http import JsonResponse

log = logging.getLogger(__name__)

CORE = ("database", "vector_store")
OPTIONAL = ("cache", "data_dir")


def _failure(exc: BaseException) -> str:
    # The type only: messages can carry paths, hosts or credentials; the log has the detail.
    return type(exc).__name__


def _check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        log.warning("health: database unreachable: %s", exc)
        return {"ok": False, "vendor": connection.vendor, "read": False, "write": False, "error": _failure(exc)}
    try:
        # A write that changes nothing, rolled back: it still needs the write lock, which a
        # read-only SQLite file, a read-only MariaDB or a full disk refuses.
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("UPDATE django_migrations SET app = app WHERE id = 0")
            transaction.set_rollback(True)
    except Exception as exc:
        log.warning("health: database refuses writes: %s", exc)
        return {"ok": False, "vendor": connection.vendor, "read": True, "write": False, "error": _failure(exc)}
    return {"ok": True, "vendor": connection.vendor, "read": True, "write": True}


def _check_cache() -> dict[str, Any]:
    backend = type(cache).__name__
    try:
        probe, value = f"healthz:{uuid.uuid4().hex}", uuid.uuid4().hex
        cache.set(probe, value, 5)
        ok = cache.get(probe) == value
        cache.delete(probe)
    except Exception as exc:
        log.warning("health: cache unavailable: %s", exc)
        return {"ok": False, "backend": backend, "error": _failure(exc)}
    return {"ok": ok, "backend": backend} if ok else {"ok": False, "backend": backend, "error": "read-back mismatch"}


def _check_vector_store() -> dict[str, Any]:
    from docmind.indexes.stores import get_vector_store

    try:
        store = get_vector_store()
    except Exception as exc:
        log.warning("health: vector store cannot be opened: %s", exc)
        return {"ok": False, "error": _failure(exc)}
    backend = type(store).__name__
    if not store.ping():
        return {"ok": False, "backend": backend, "error": "ping failed"}
    probe_write = getattr(store, "probe_write", None)
    if probe_write is not None:
        try:
            probe_write()
        except Exception as exc:
            log.warning("health: vector store refuses writes: %s", exc)
            return {"ok": False, "backend": backend, "write": False, "error": _failure(exc)}
    return {"ok": True, "backend": backend, "write": probe_write is not None}


def _check_data_dir() -> dict[str, Any]:
    for directory in (Path(settings.DATA_DIR), Path(settings.MEDIA_ROOT)):
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _write_and_read_back(directory)
        except Exception as exc:
            log.warning("health: %s is not writable: %s", directory, exc)
            name = "media" if directory == Path(settings.MEDIA_ROOT) else "data"
            return {"ok": False, "writable": False, "failed": name, "error": _failure(exc)}
    return {"ok": True, "writable": True}


def _write_and_read_back(directory: Path) -> None:
    path = directory / f".healthz-{uuid.uuid4().hex}"
    payload = uuid.uuid4().bytes
    try:
        with open(path, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if path.read_bytes() != payload:
            raise OSError("read-back mismatch")
    finally:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _llm_mode() -> dict[str, Any]:
    from config_admin.conf import ai_config
    from docmind.backends import llm_is_remote

    if not llm_is_remote():
        return {"mode": "offline", "answers": "extractive"}
    try:
        return {"mode": "remote", "model": ai_config.get("llm.main_model")}
    except Exception:
        return {"mode": "remote", "model": None}


def _sandbox() -> dict[str, Any]:
    from docmind.sandbox import runner_status

    try:
        return runner_status().describe()
    except Exception as exc:
        return {"available": False, "reason": _failure(exc)}


def healthz(request) -> JsonResponse:
    body: dict[str, Any] = {
        "database": _check_database(),
        "cache": _check_cache(),
        "vector_store": _check_vector_store(),
        "data_dir": _check_data_dir(),
    }
    body["llm"] = _llm_mode() if body["database"]["ok"] else {"mode": "unknown"}
    body["sandbox"] = _sandbox()
    down = [name for name in CORE if not body[name]["ok"]]
    degraded = [name for name in OPTIONAL if not body[name]["ok"]]
    body["status"] = "down" if down else "degraded" if degraded else "ok"
    body["failing"] = down + degraded
    return JsonResponse(body, status=503 if down else 200)
