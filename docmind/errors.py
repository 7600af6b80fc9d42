"""The API's error shape, shared by every app: `{error, code?, fields?}`, and reading DRF's nested errors."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


def first_error(errors: Any, path: str = "") -> tuple[str, str]:
    """The first message in DRF's nested errors and where it is (`kb.1`), as plain text.

    Errors of a list field are keyed by the failing item's index (`{"kb": {1: [...]}}`), so neither
    `[0]` nor `str()` of a level may be assumed to reach a message.
    """
    if isinstance(errors, dict):
        for key, value in errors.items():
            if value:
                return first_error(value, f"{path}.{key}" if path else str(key))
    elif isinstance(errors, (list, tuple)):
        for value in errors:
            if value:
                return first_error(value, path)
    elif errors:
        return path, str(errors)
    return path, ""


class ErrorSerializer(serializers.Serializer):
    """The body of every error answer under /api/ (published as the `Error` component)."""

    error = serializers.CharField(help_text="What went wrong, in the caller's language.")
    code = serializers.CharField(required=False, help_text="A stable machine-readable reason, where there is one.")
    fields = serializers.DictField(required=False, help_text="An invalid request's messages by field "
                                   "(`non_field_errors` for the request as a whole).")


def error_response(description: str) -> OpenApiResponse:
    """An error answer for `@extend_schema(responses=…)`: the shared `Error` body with its own description."""
    return OpenApiResponse(ErrorSerializer, description=description)
