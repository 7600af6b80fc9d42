"""OpenAPI additions drf-spectacular cannot infer: the SSE chat endpoint is a plain async Django view."""
from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework import permissions, serializers

from chat.events import EVENT_TYPES
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
        if not field.allow_empty:
            schema["minItems"] = 1
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
        if field.min_value is not None:
            schema["minimum"] = field.min_value
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

    def _map_serializer(self, serializer: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        """A request serializer may state which of its optional fields must be present: `openapi_required`
        (all of them, even in a PATCH), `openapi_any_of` (at least one) or `openapi_one_of` (exactly one)."""
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        if direction != "request":
            return schema
        required = getattr(serializer, "openapi_required", ())
        if required:
            schema["required"] = sorted(set(schema.get("required", ())) | set(required))
        for keyword, attribute in (("anyOf", "openapi_any_of"), ("oneOf", "openapi_one_of")):
            names = getattr(serializer, attribute, ())
            if names:
                schema[keyword] = [{"required": [name]} for name in names]
        return schema

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body = super()._get_request_body(direction)
        serializer = self.get_request_serializer() if body else None
        if any(getattr(serializer, name, ()) for name in ("openapi_required", "openapi_any_of", "openapi_one_of")):
            body["required"] = True  # an empty PATCH names none of the fields it must have
        if isinstance(serializer, dict) and any(isinstance(schema, dict) and schema.get("required")
                                                for schema in serializer.values()):
            body["required"] = True  # a schema written out by hand that names required properties needs a body
        return body

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


# One server-sent event as an SSE parser reads it: its type and its JSON payload as text.
_SSE_EVENT = {"type": "object", "required": ["event", "data"], "properties": {
    "event": {"type": "string", "enum": list(EVENT_TYPES)},
    "data": {"type": "string", "description": "the event's payload, a JSON object"}}}


def _text_limit(key: str) -> int:
    """The live limit of a text a request carries (a configuration row), so the schema says what is enforced now."""
    from config_admin.conf import ai_config
    from config_admin.registry import spec

    try:
        return int(ai_config.get(key))
    except Exception:  # no database yet (a schema built at deploy time): the row's default
        return int(spec(key).default)


def _question(max_length: int) -> dict[str, Any]:
    # Leading and trailing white space is dropped first; what is left must not be empty.
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": r"\S"}


def add_chat_stream(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: documents `POST /api/chat/` and the live limits of questions."""
    retrieve = result.get("components", {}).get("schemas", {}).get("RetrieveRequest")
    if retrieve is not None:
        retrieve["properties"]["query"].update(_question(_text_limit("retrieval.query_max_chars")))
    body = chat_request_schema()
    body["properties"]["message"].update(_question(_text_limit("chat.max_message_chars")))
    result.setdefault("paths", {})["/api/chat/"] = {"post": {
        "operationId": "chat_stream",
        "summary": "Ask a question; the answer streams as server-sent events.",
        "tags": ["chat"],
        "security": [{"tokenAuth": []}, {"cookieAuth": []}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {"description": _EVENTS, "content": {"text/event-stream": {"schema": _SSE_EVENT}}},
            "400": _error("invalid request: `fields` names each problem"),
            "401": _error("authentication required"),
            "403": _error("a session request without its CSRF token"),
            "404": _error("the conversation, document or knowledge base is not the caller's"),
            "405": _error("only POST"),
            "413": _error("the request body is too large"),
            "429": _error("the caller already has their share of turns running (see Retry-After)"),
            "503": _error("too many turns running (see Retry-After) or the database is unavailable"),
        },
    }}
    return result

