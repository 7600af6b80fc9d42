"""Django's error views for paths under /api/: the API's JSON error shape there, the HTML pages elsewhere.

Django answers some requests before any API view runs — an id that does not match the URL pattern
(`/api/kbs/abc/`), a body it refuses to read, an exception outside DRF — and its default pages are
HTML, which an API client cannot parse.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views import defaults

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def json_error(message: str, status: int, code: str, **headers: str) -> JsonResponse:
    response = JsonResponse({"error": message, "code": code}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def bad_request(request: HttpRequest, exception: Exception, **kwargs: Any) -> HttpResponse:
    if is_api(request):
        return json_error(_("Invalid request."), 400, "bad_request")
    return defaults.bad_request(request, exception, **kwargs)


def permission_denied(request: HttpRequest, exception: Exception, **kwargs: Any) -> HttpResponse:
    if is_api(request):
        return json_error(_("Permission denied."), 403, "permission_denied")
    return defaults.permission_denied(request, exception, **kwargs)


def page_not_found(request: HttpRequest, exception: Exception, **kwargs: Any) -> HttpResponse:
    if is_api(request):
        return json_error(_("Not found."), 404, "not_found")
    return defaults.page_not_found(request, exception, **kwargs)


def server_error(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    if is_api(request):
        return json_error(_("Internal error; the request was not applied."), 500, "server_error")
    return defaults.server_error(request, **kwargs)


def method_not_allowed(request: HttpRequest, allowed: list[str]) -> JsonResponse:
    """405 for a plain Django view under /api/ (DRF views answer their own)."""
    return json_error(_("Method “%(method)s” not allowed.") % {"method": request.method}, 405, "method_not_allowed",
                      Allow=", ".join(allowed))
