"""What an administrator-registered MCP server may be given: which secrets, which addresses, which commands.

A registration is checked when it is saved and again on every call (a row can be written by other means,
and a host name can resolve elsewhere tomorrow):
- credentials only from environment variables named `DOCMIND_MCP_SECRET_*`, so no registration can send
  the model key, the database URL or the admin password anywhere;
- URLs only to public addresses, unless the operator sets `DOCMIND_MCP_ALLOW_PRIVATE_URLS` (a tools server
  on the LAN): loopback, link-local (cloud metadata), private and reserved ranges reach this machine's own
  services;
- stdio servers (a command run as the service user) only when the operator sets `DOCMIND_MCP_STDIO`.
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from django.conf import settings

SECRET_PREFIX = "DOCMIND_MCP_SECRET_"


class McpPolicyError(ValueError):
    """A registration that the operator's settings do not allow; the message says which setting."""


def secret_names_ok(names: Iterable[str]) -> bool:
    return all(isinstance(n, str) and n.startswith(SECRET_PREFIX) and len(n) > len(SECRET_PREFIX) for n in names)


def check_secret_names(*, header_env: Mapping[str, str], env_names: Iterable[str]) -> None:
    if not secret_names_ok(header_env.values()) or not secret_names_ok(env_names):
        raise McpPolicyError(f"credentials come only from environment variables named {SECRET_PREFIX}*")


def stdio_allowed() -> bool:
    return bool(getattr(settings, "MCP_STDIO_ENABLED", False))


def check_stdio() -> None:
    if not stdio_allowed():
        raise McpPolicyError("stdio servers are off; the operator enables them with DOCMIND_MCP_STDIO=1")


def private_urls_allowed() -> bool:
    return bool(getattr(settings, "MCP_ALLOW_PRIVATE_URLS", False))


def _public(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _host(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise McpPolicyError("the URL must be http:// or https:// with a host")
    return parts.hostname


def check_url_literal(url: str) -> None:
    """At registration: refuse a URL whose host is a non-public address or a local name, without a DNS look-up
    (the saving machine may not resolve the name; every call checks what it resolves to)."""
    host = _host(url)
    if private_urls_allowed():
        return
    local_name = host == "localhost" or host.endswith((".localhost", ".local", ".internal")) or "." not in host
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        if local_name:
            raise McpPolicyError(_PRIVATE) from None
        return
    if not _public(host):
        raise McpPolicyError(_PRIVATE)


def check_url_resolved(url: str) -> None:
    """Before a call: every address the host resolves to must be public (unless the operator allows private)."""
    host = _host(url)
    if private_urls_allowed():
        return
    port = urlsplit(url).port or (443 if urlsplit(url).scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise McpPolicyError(f"the host does not resolve ({type(exc).__name__})") from None
    if not infos or not all(_public(str(info[4][0])) for info in infos):
        raise McpPolicyError(_PRIVATE)


_PRIVATE = ("the URL points to a loopback, link-local, private or reserved address; the operator allows such "
            "URLs with DOCMIND_MCP_ALLOW_PRIVATE_URLS=1")
