"""Login lockout: which address a request comes from, and what a locked-out client is told."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str:
    """The client address, read like DRF's throttles read it: the socket's peer, or with N trusted
    proxies the N-th address from the right of X-Forwarded-For (the ones left of it are the client's word)."""
    proxies = int(getattr(settings, "TRUSTED_PROXIES", 0))
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        addrs = [a.strip() for a in forwarded.split(",") if a.strip()]
        if addrs:
            return addrs[-min(proxies, len(addrs))]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def lockout_response(request: HttpRequest, *args: Any) -> HttpResponse:
    """429 for a locked-out login: JSON for the API, the login page with a notice for browsers.
    (axes passes either (response, credentials) or just credentials: neither is needed here.)"""
    minutes = int(getattr(settings, "LOGIN_LOCKOUT_MINUTES", 15))
    message = f"too many failed logins; try again in {minutes} minutes"
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"error": message, "code": "locked_out"}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"minutes": minutes}, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response
