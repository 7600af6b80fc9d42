"""WebSocket origin check that compares scheme-default ports too, as Django's CSRF check does for HTTP.

Channels' AllowedHostsOriginValidator matches the Origin's host name against ALLOWED_HOSTS and
ignores its port; cookies are not port-scoped, so any other program served on the same host
(http://127.0.0.1:9999) could open an authenticated socket to the app. Here the Origin must be the
very origin the socket was opened on (host and port of the Host header) or a CSRF trusted origin.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def origin_allowed(*, origin: str | None, host: str | None) -> bool:
    if not origin or not host:
        return False
    try:
        parsed = urlsplit(origin)
        origin_port = parsed.port or _DEFAULT_PORTS.get(parsed.scheme)
    except ValueError:
        return False
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.hostname:
        return False
    normalised = f"{parsed.scheme}://{parsed.hostname}:{origin_port}"
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        t = urlsplit(trusted)
        if f"{t.scheme}://{t.hostname}:{t.port or _DEFAULT_PORTS.get(t.scheme)}" == normalised:
            return True
    host_name, host_port = split_domain_port(host)
    if not host_name or not validate_host(host_name, settings.ALLOWED_HOSTS):
        return False
    # The Host header has no port when the client used the default one of the page's scheme.
    expected_port = int(host_port) if host_port else _DEFAULT_PORTS[parsed.scheme]
    return parsed.hostname == host_name.strip("[]") and origin_port == expected_port


class SameOriginValidator:
    """ASGI middleware: deny a WebSocket whose Origin is not the app's own origin (or a trusted one)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(origin=_header(scope, b"origin"),
                                                               host=_header(scope, b"host")):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
