"""Shared API plumbing: an exception handler that turns every failure into a clear JSON error."""
from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config_admin.registry import ConfigValueError, UnknownConfigKey
from docmind.errors import first_error

log = logging.getLogger(__name__)


def _as_fields(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {"non_field_errors": data}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is not None:
        data = response.data
        if isinstance(data, dict) and "detail" in data and len(data) == 1:
            response.data = {"error": first_error(data["detail"])[1]}
        elif not (isinstance(data, dict) and "error" in data):
            response.data = {"error": _("Invalid request."), "fields": _as_fields(data)}
        return response
    if isinstance(exc, (UnknownConfigKey, ConfigValueError, ValidationError)):
        message = exc.messages[0] if isinstance(exc, ValidationError) else str(exc)
        return Response({"error": message}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, PermissionDenied):
        return Response({"error": str(exc) or _("Permission denied.")}, status=status.HTTP_403_FORBIDDEN)
    log.exception("unhandled API error")
    return Response({"error": _("Internal error; the request was not applied.")}, status=500)
