"""Shared API plumbing: an exception handler that turns every failure into a clear JSON error."""
from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import NotAcceptable, NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config_admin.registry import ConfigValueError, UnknownConfigKey
from docmind.errors import first_error

log = logging.getLogger(__name__)


class JsonFallbackNegotiation(DefaultContentNegotiation):
    """A client whose Accept header names no format the view offers gets the view's first one (JSON),
    not a 406: a browser's `text/html` on an API URL should show the answer, error or not."""

    def select_renderer(self, request: Any, renderers: list, format_suffix: str | None = None) -> tuple:
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type


def _as_fields(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {"non_field_errors": data}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Http404) and str(exc).endswith("matches the given query."):
        # Django's get_object_or_404 names the model in English ("No Document matches the given query."); the
        # caller learns the same from a 404 in its language.
        exc = NotFound()
    response = drf_exception_handler(exc, context)
    if response is not None:
        data = response.data
        if isinstance(data, dict) and "detail" in data and len(data) == 1:
            response.data = {"error": first_error(data["detail"])[1]}
        elif not (isinstance(data, dict) and "error" in data):
            fields = _as_fields(data)
            where, message = first_error(fields)
            # The first problem in words, so a client that shows only `error` still says what to fix.
            summary = f"{where}: {message}" if where and where != "non_field_errors" else message
            response.data = {"error": summary or _("Invalid request."), "fields": fields}
        return response
    if isinstance(exc, (UnknownConfigKey, ConfigValueError, ValidationError)):
        message = exc.messages[0] if isinstance(exc, ValidationError) else str(exc)
        return Response({"error": message}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, PermissionDenied):
        return Response({"error": str(exc) or _("Permission denied.")}, status=status.HTTP_403_FORBIDDEN)
    log.exception("unhandled API error")
    return Response({"error": _("Internal error; the request was not applied.")}, status=500)
