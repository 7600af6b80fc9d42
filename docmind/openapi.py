"""OpenAPI additions drf-spectacular cannot infer: the SSE chat endpoint is a plain async Django view."""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from chat.serializers import ChatRequestSerializer

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


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "string"}, "code": {"type": "string"}}}}}}


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
            "400": _error("invalid request (the fields are named)"),
            "401": _error("authentication required"),
            "404": _error("the conversation or document is not the caller's"),
        },
    }}
    return result
