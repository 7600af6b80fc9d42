"""The reader's time zone: dates are stored in UTC and shown in the zone the browser reports in a cookie."""
from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from inspect import iscoroutinefunction

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.decorators import sync_and_async_middleware

# Set by static/docmind/timezone.js from Intl.DateTimeFormat().resolvedOptions().timeZone on every page.
TIMEZONE_COOKIE = "docmind_tz"


def zone_from_cookie(value: str) -> zoneinfo.ZoneInfo | None:
    """The IANA zone named by `value`, or None for anything else (the cookie is the client's to forge)."""
    if not value or len(value) > 64:
        return None
    try:
        return zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


@sync_and_async_middleware
def browser_timezone_middleware(get_response: Callable) -> Callable:
    """Activates the browser's zone for the request, or the server's TIME_ZONE until the browser has said.

    Both sync and async, so the streaming chat view is not pushed through a thread adapter."""

    def _activate(request: HttpRequest) -> None:
        zone = zone_from_cookie(request.COOKIES.get(TIMEZONE_COOKIE, ""))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)

    if iscoroutinefunction(get_response):
        async def async_middleware(request: HttpRequest) -> HttpResponse:
            _activate(request)
            try:
                return await get_response(request)
            finally:
                timezone.deactivate()
        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        _activate(request)
        try:
            return get_response(request)
        finally:
            timezone.deactivate()
    return middleware
