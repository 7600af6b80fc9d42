"""Bounds on a request body checked before anything parses it: size (413) and JSON nesting depth (400).

Python's JSON decoder recurses once per nesting level, so a body of 100,000 `[` ends in a
RecursionError deep inside a parser — a 500 (an HTML page outside DRF) for one small request.
The middleware refuses such bodies with a JSON error before DRF, the SSE chat view or a form
parser sees them; the WebSocket consumer and the MCP mount call the same check on their frames.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import gettext as _

# The deepest JSON any DocMind endpoint takes is an eval set's `answers: [[…]]` inside `items`
# (depth 4); 64 leaves room for any client's envelope and stays far below the recursion limit.
MAX_JSON_DEPTH = 64

# A JSON string (escapes included): its brackets are text, not structure.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.__getitem__


def json_depth(raw: bytes | str) -> int:
    """The deepest nesting of arrays and objects in `raw`, without parsing it (malformed text too).

    Linear and free of recursion: strings are cut out by one regular expression, everything but
    brackets is deleted, and the running depth is summed in C (`accumulate`).
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP, brackets)), default=0)


def too_deep(raw: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """json_depth(raw) > limit, without the scan when there are not even `limit` opening brackets."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    return json_depth(data) > limit


def too_large_response() -> JsonResponse:
    return JsonResponse({"error": _("The request body is too large."), "code": "body_too_large"}, status=413)


def too_deep_response() -> JsonResponse:
    return JsonResponse({"error": _("The JSON nests too deeply (at most %(depth)d levels).")
                         % {"depth": MAX_JSON_DEPTH}, "code": "body_too_deep"}, status=400)


def _is_multipart(request: HttpRequest) -> bool:
    # Uploads stream to disk under their own limit (DOCMIND_MAX_UPLOAD_MB); they are never read whole here.
    return (request.content_type or "").startswith("multipart/")


def _refusal(request: HttpRequest) -> HttpResponse | None:
    if request.method in ("GET", "HEAD", "OPTIONS") or _is_multipart(request):
        return None
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is not None and length > limit:
        return too_large_response()
    try:
        raw = request.body  # cached on the request: the view's parser reads the same bytes
    except RequestDataTooBig:
        return too_large_response()
    if raw and too_deep(raw):
        return too_deep_response()
    return None


@sync_and_async_middleware
def request_limits_middleware(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    """Refuses an oversized or too deeply nested body with JSON (413 / 400) before any view parses it.

    Both sync and async, so the streaming chat view is not pushed through a thread adapter; the
    body is already in memory under ASGI (Django reads it before the middleware runs).
    """
    if iscoroutinefunction(get_response):
        async def async_middleware(request: HttpRequest) -> HttpResponse:
            return _refusal(request) or await get_response(request)
        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        return _refusal(request) or get_response(request)
    return middleware

