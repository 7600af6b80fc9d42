"""/healthz: each backend probed by a read and a write; `down` (503) when the answer path cannot work,
`degraded` (200) when only an optional backend fails, `ok` otherwise.

Core (a failure means questions cannot be answered): the database (users, conversations, config)
and the vector store (both retrievers live in Milvus). Optional: the cache (answers are recomputed)
and the data dir as such (uploads fail; if the database or Milvus Lite live in it, their own
write probes fail too and make the state `down`). A remote model is probed by listing its models
(`GET …/models`, free of charge) under a short timeout, the result kept for LLM_PROBE_TTL_SECONDS: when it
does not answer, every answer times out, so the state is `degraded` (offline answers need no model).

When directory sign-in is on (DOCMIND_LDAP_URI), the directory is probed by a bind as the service account
(sso.directory_probe: bounded, its answer kept briefly); one that does not take it is `degraded`, since local
accounts still sign in.

Only staff see the details (backends, vendors, model names, sandbox): anyone else, anonymous load
balancers included, gets the state alone with the same status code.
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.http import JsonResponse
from rest_framework.authentication import TokenAuthentication

from config_admin.conf import ai_config
from docmind import backends
from docmind.sandbox import runner_status
from sso.directory_probe import directory_status

log = logging.getLogger(__name__)

CORE = ("database", "vector_store")
OPTIONAL = ("cache", "data_dir", "llm", "directory")
# The model probe: a health check must answer quickly, and a monitor polling every few seconds must not
# turn into a request stream against the model's API.
LLM_PROBE_TIMEOUT_SECONDS = 3.0
LLM_PROBE_TTL_SECONDS = 30.0
_llm_probe_lock = threading.Lock()
_llm_probe_cache: dict[str, tuple[float, dict[str, Any]]] = {}


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
    # heavy: the indexes load scipy (about 0.3 s) with the first probe, not when the URL conf imports this module
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
    if not backends.llm_is_remote():
        return {"mode": "offline", "answers": "extractive"}
    try:
        model = ai_config.get("llm.main_model")
    except Exception:
        model = None
    return {"mode": "remote", "model": model, **_llm_reachability()}


def _llm_reachability() -> dict[str, Any]:
    """{"ok", "reachable", ["error"]}: does the model's API answer at all, within a few seconds?"""
    base = (settings.OPENAI_BASE_URL or "https://api.openai.com/v1").rstrip("/")
    # Keyed by endpoint and key (hashed): a changed setting is probed afresh.
    key = hashlib.sha256(f"{base}\0{settings.OPENAI_API_KEY}".encode()).hexdigest()
    with _llm_probe_lock:  # one probe at a time: concurrent health checks wait for it, then read the result
        cached = _llm_probe_cache.get(key)
        if cached is not None and time.monotonic() - cached[0] < LLM_PROBE_TTL_SECONDS:
            return cached[1]
        result = _probe_llm(base)
        _llm_probe_cache.clear()
        _llm_probe_cache[key] = (time.monotonic(), result)
        return result


def _probe_llm(base: str) -> dict[str, Any]:
    try:
        response = httpx2.get(f"{base}/models", headers={"Authorization": f"Bearer {settings.OPENAI_API_KEY}"},
                             timeout=LLM_PROBE_TIMEOUT_SECONDS)
    except httpx2.TimeoutException:
        log.warning("health: the model API did not answer within %s s", LLM_PROBE_TIMEOUT_SECONDS)
        return {"ok": False, "reachable": False, "error": "timeout"}
    except Exception as exc:
        log.warning("health: the model API is unreachable: %s", exc)
        return {"ok": False, "reachable": False, "error": _failure(exc)}
    if response.status_code in (401, 403):
        return {"ok": False, "reachable": True, "error": f"HTTP {response.status_code}: the API key is refused"}
    # A server without a model list (404, 405, 501) still answered; other server errors mean it cannot answer.
    if response.status_code >= 500 and response.status_code != 501:
        return {"ok": False, "reachable": True, "error": f"HTTP {response.status_code}"}
    return {"ok": True, "reachable": True}


def _directory() -> dict[str, Any]:
    config = getattr(settings, "DOCMIND_LDAP", None)
    if config is None:
        return {"enabled": False}

    return {"enabled": True, **directory_status(config)}


def _sandbox() -> dict[str, Any]:
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
    body["directory"] = _directory()
    body["sandbox"] = _sandbox()
    down = [name for name in CORE if not body[name]["ok"]]
    # llm and directory: only a remote model and a configured directory have "ok"
    degraded = [name for name in OPTIONAL if not body[name].get("ok", True)]
    body["status"] = "down" if down else "degraded" if degraded else "ok"
    body["failing"] = down + degraded
    if not _is_staff(request):
        return JsonResponse({"status": body["status"]}, status=503 if down else 200)
    return JsonResponse(body, status=503 if down else 200)


def _is_staff(request) -> bool:
    """A staff session or `Authorization: Token` of a staff user; anything that fails (the database being
    down) reads as anonymous. The flag is read from the user this request already loaded, not through
    kb.access.is_staff, which reads the database again: the details matter most when the database is down."""
    try:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return bool(user.is_staff)

        found = TokenAuthentication().authenticate(request)
        return bool(found and found[0].is_staff)
    except Exception:  # noqa: BLE001 - an unreadable credential is no credential
        return False
