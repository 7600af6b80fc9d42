"""OpenAPI additions drf-spectacular cannot infer: the SSE chat endpoint is a plain async Django view."""
from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework import permissions, serializers

from chat.serializers import ChatRequestSerializer
from docmind.errors import error_response

ERROR_REF = {"$ref": "#/components/schemas/Error"}
_UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}

_EVENTS = ("understanding → routing → (agentic)* → (code_exec)* → retrieval → rerank → grader → start → "
           "(token)* → done, or error. Each event is an SSE `event:` line with a JSON `data:` line; "
           "the WebSocket /ws/chat/ sends the same events as {\"type\", \"data\"}.")


def _field_schema(field: serializers.Field) -> dict[str, Any]:
    if isinstance(field, serializers.ListField):
        schema: dict[str, Any] = {"type": "array", "items": _field_schema(field.child)}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.CharField):
        schema = {"type": "string"}
    else:
        schema = {}
    if getattr(field, "allow_null", False):
        schema["nullable"] = True
    return schema


def chat_request_schema() -> dict[str, Any]:
    """The request body, derived from the serializer the view validates with, so the two cannot drift."""
    fields = ChatRequestSerializer().fields
    return {
        "type": "object",
        "properties": {name: _field_schema(field) for name, field in fields.items()},
        "required": [name for name, field in fields.items() if field.required],
    }


class DocMindAutoSchema(AutoSchema):
    """drf-spectacular's schema plus the errors an operation can answer with, which it does not infer.

    What each view declares wins; the rest follow from the operation's shape: a request body can be
    invalid (400), too large (413) or of a type no parser reads (415); a signed-in operation can be
    refused (401, and 403 for a write or a role check, CSRF included); an `{id}` or a page can be
    missing (404).
    """

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, description in self._standard_errors():
            if code not in responses:
                responses[code] = self._get_response_for_code(error_response(description), code)
        return responses

    def _standard_errors(self) -> list[tuple[str, str]]:
        errors = []
        has_body = self.method in ("PUT", "PATCH", "POST") and self.get_request_serializer() is not None
        if has_body:
            errors += [("400", "invalid request: `fields` names each problem"),
                       ("413", "the request body is too large"),
                       ("415", "the request body's content type is not accepted")]
        open_to_all = any(issubclass(p, permissions.AllowAny) for p in self.view.permission_classes)
        if not open_to_all:
            errors.append(("401", "authentication required"))
            checks_roles = any(p is not permissions.IsAuthenticated for p in self.view.permission_classes)
            if self.method in _UNSAFE or checks_roles:
                errors.append(("403", "not allowed for this user (or a session request without its CSRF token)"))
        paginated = self.method == "GET" and self._is_list_view() and self._get_paginator() is not None
        if "{" in self.path or paginated:
            errors.append(("404", "not found, or not the caller's to see" if "{" in self.path else "no such page"))
        return errors


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def add_chat_stream(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: documents `POST /api/chat/`."""
    result.setdefault("paths", {})["/api/chat/"] = {"post": {
        "operationId": "chat_stream",
        "summary": "Ask a question; the answer streams as server-sent events.",
        "tags": ["chat"],
        "security": [{"tokenAuth": []}, {"cookieAuth": []}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": chat_request_schema()}}},
        "responses": {
            "200": {"description": _EVENTS, "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            "400": _error("invalid request: `fields` names each problem"),
            "401": _error("authentication required"),
            "403": _error("a session request without its CSRF token"),
            "404": _error("the conversation, document or knowledge base is not the caller's"),
            "405": _error("only POST"),
            "413": _error("the request body is too large"),
            "503": _error("too many turns running (see Retry-After) or the database is unavailable"),
        },
    }}
    return result

