"""`/mcp/` in the ASGI app: DRF token authentication, then the SDK's Streamable HTTP session manager.

Stateless JSON mode: every request stands alone, so several server processes behind one
address need no shared MCP session store. The session manager needs a running task group;
daphne does not speak the ASGI lifespan protocol, so it is started on the first request of
each event loop and lives as long as that loop.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.transport_security import TransportSecuritySettings
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from apikeys import services as keys
from kb.access import key_scope
from project.mcp.server import DISCONNECTED_SCOPE_KEY, KEY_SCOPE_KEY, USER_SCOPE_KEY, build_server

PATH = "/mcp"
# A stateless server has no stream to offer on GET and no session to end on DELETE: the spec's answer
# to both is 405 (the SDK would otherwise hold a GET open as an SSE stream that never sends).
STATELESS_REFUSED = frozenset({"GET", "DELETE"})

Scope = dict[str, Any]


def is_mcp_path(path: str) -> bool:
    return path == PATH or path.startswith(PATH + "/")


def _token_user_id(headers: list[tuple[bytes, bytes]]) -> tuple[int | None, Any, str]:
    """(user id, None, "") for a valid `Authorization: Token <key>` (DRF's own check), (creator id, its
    kb.access.KeyScope, "") for a valid `Authorization: Bearer <API key>`, else (None, None, reason)."""
    raw = next((v for k, v in headers if k.lower() == b"authorization"), b"").decode("latin-1").split()
    if len(raw) != 2 or raw[0].lower() not in ("token", "bearer"):
        return None, None, "Authorization: Token <key> or Bearer <API key> required"
    close_old_connections()
    try:
        if raw[0].lower() == "bearer":
            user, _ = keys.authenticate_key(raw[1])
            return user.pk, key_scope(user), ""
        user, _ = TokenAuthentication().authenticate_credentials(raw[1])
    except keys.KeyInvalid:
        return None, None, "Invalid, expired or revoked API key."
    except exceptions.AuthenticationFailed as exc:
        return None, None, str(exc.detail)
    finally:
        close_old_connections()
    return user.pk, None, ""


class McpMount:
    """Routes `/mcp` and `/mcp/...` to the MCP server, everything else to `fallback` (Django)."""

    def __init__(self, fallback: Any) -> None:
        self.fallback = fallback
        self._managers: dict[asyncio.AbstractEventLoop, tuple[Any, asyncio.Event]] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not is_mcp_path(scope.get("path", "")):
            await self.fallback(scope, receive, send)
            return
        if scope.get("method") in STATELESS_REFUSED:
            await _reply(send, 405, {"error": "This MCP endpoint is stateless: send requests with POST.",
                                     "code": "method_not_allowed"}, headers=[(b"allow", b"POST")])
            return
        if _declared_length(scope) > _max_body():
            # Refused before the SDK reads the body into memory (it has no limit of its own), as Django's
            # endpoints refuse theirs (docmind.requestlimits).
            await _reply(send, 413, {"error": "The request body is too large.", "code": "body_too_large"})
            return
        user_id, key, reason = await sync_to_async(_token_user_id, thread_sensitive=False)(scope.get("headers", []))
        if user_id is None:
            await _refuse(send, reason)
            return
        manager = await self._manager()
        disconnected = asyncio.Event()
        receive, watcher = _watch_disconnect(receive, disconnected, max_body=_max_body())
        try:
            # The SDK's endpoint is one path: /mcp and /mcp/ are the same endpoint.
            await manager.handle_request({**scope, "path": PATH, USER_SCOPE_KEY: user_id, KEY_SCOPE_KEY: key,
                                          DISCONNECTED_SCOPE_KEY: disconnected}, receive, send)
        finally:
            watcher.cancel()

    async def _manager(self) -> Any:
        loop = asyncio.get_running_loop()
        if loop not in self._managers:
            manager = _build_manager()
            ready = asyncio.Event()
            self._managers = {lp: m for lp, m in self._managers.items() if not lp.is_closed()}
            self._managers[loop] = (manager, ready)
            loop.create_task(_serve(manager, ready), name="mcp-session-manager")
        manager, ready = self._managers[loop]
        await ready.wait()
        return manager


def _watch_disconnect(receive: Any, disconnected: asyncio.Event,
                      max_body: int) -> tuple[Any, asyncio.Task[None]]:
    """A `receive` for the SDK, and a task that sets `disconnected` when the client goes away.

    In JSON mode the SDK stops reading once it has the body, so nothing would notice a client that
    leaves while a tool runs (a long `ask`); the watcher goes on reading and tells the tool. A body
    sent without a Content-Length that grows past `max_body` reads as a disconnect: the SDK stops there.
    """
    body_read = asyncio.Event()
    received = 0

    async def tracked() -> dict[str, Any]:
        nonlocal received
        if body_read.is_set():  # the watcher owns the channel now
            await disconnected.wait()
            return {"type": "http.disconnect"}
        message = await receive()
        if message["type"] == "http.disconnect":
            disconnected.set()
            return message
        received += len(message.get("body", b""))
        if received > max_body:
            disconnected.set()
            return {"type": "http.disconnect"}
        if not message.get("more_body", False):
            body_read.set()
        return message

    async def watch() -> None:
        await body_read.wait()
        while (await receive())["type"] != "http.disconnect":
            pass
        disconnected.set()

    return tracked, asyncio.get_running_loop().create_task(watch(), name="mcp-disconnect-watch")


async def _serve(manager: Any, ready: asyncio.Event) -> None:
    async with manager.run():
        ready.set()
        await asyncio.Event().wait()  # until the loop ends


def _build_manager() -> Any:
    server = build_server()
    hosts = list(settings.ALLOWED_HOSTS)
    # DNS-rebinding protection with Django's own host list. "*" (the operator opted out) and
    # ".example.com" (subdomains, which the SDK cannot express) leave it to the token check alone.
    wildcard = any(h == "*" or h.startswith(".") for h in hosts)
    security = (TransportSecuritySettings(enable_dns_rebinding_protection=False) if wildcard else
                TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                          allowed_hosts=[p for h in hosts for p in (h, f"{h}:*")],
                                          allowed_origins=[f"{s}://{h}{p}" for h in hosts for s in ("http", "https")
                                                           for p in ("", ":*")]))
    server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True,
                               transport_security=security)
    return server.session_manager


async def _refuse(send: Any, reason: str) -> None:
    await _reply(send, 401, {"error": reason}, [(b"www-authenticate", b"Token")])


async def _reply(send: Any, status: int, payload: dict[str, Any],
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def _max_body() -> int:
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0) or 2**63


def _declared_length(scope: Scope) -> int:
    raw = next((v for k, v in scope.get("headers", []) if k.lower() == b"content-length"), b"0")
    try:
        return int(raw)
    except ValueError:
        return 0
