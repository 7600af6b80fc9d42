"""`Authorization: Bearer <key>` for DRF: the key's creator, cut to the key's scope, on the views that take keys.

A view takes keys by naming, per HTTP method, the key scopes it accepts (`api_key_scopes`); every other
view refuses a key with 403, whatever its creator may do there (staff pages, uploads, grants, keys). Whether
the key's scope is among them is kb.access.key_allows's answer, as it is for the MCP tools.
"""
from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from apikeys import services
from apikeys.tickets import TICKET_HEADER
from kb.access import key_allows

KEYWORD = "Bearer"


def _scoped_method(method: str) -> str:
    """The method whose key scopes apply: HEAD is a GET without its body (Django answers it with the GET
    handler), so a key that may GET may HEAD."""
    method = (method or "").lower()
    return "get" if method == "head" else method


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid Bearer header: give exactly one API key.")
        try:
            user, key = services.authenticate_key(parts[1].decode("latin-1"),
                                                  widget_ticket=request.META.get(TICKET_HEADER))
        except services.KeyInvalid:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked API key.") from None
        view = (getattr(request, "parser_context", None) or {}).get("view")
        accepted = getattr(view, "api_key_scopes", {}).get(_scoped_method(request.method), ())
        if not key_allows(user, accepted):
            raise exceptions.PermissionDenied("This API key cannot be used here.")
        return user, key

    def authenticate_header(self, request: Any) -> str:
        return KEYWORD
