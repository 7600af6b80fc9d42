"""OpenAPI additions drf-spectacular cannot infer: the SSE chat endpoint is a plain async Django view."""
from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework import permissions, serializers

from chat.event_schema import PAYLOADS, chat_event_adapter
from chat.serializers import ChatRequestSerializer
from config_admin.conf import ai_config
from config_admin.registry import spec
from docmind.errors import error_response
from docmind.pagination import PAGE_SIZE

COMPONENTS = "#/components/schemas/"
ERROR_REF = {"$ref": f"{COMPONENTS}Error"}
_UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}

_EVENTS = ("understanding → routing → (agentic)* → (code_exec)* → retrieval → rerank → grader → start → "
           "(token)* → done, or error. Each server-sent event is a `ChatServerSentEvent`: its `event:` line names "
           "the type, its `data:` line is that type's payload as JSON (`TokenData` for `token`…). The WebSocket "
           "/ws/chat/ sends the same events as `ChatEvent` JSON frames, {\"type\", \"data\"}. While the model is "
           "silent SSE sends `: keepalive` comment lines, which carry no event.")
CHAT_EVENT = "ChatEvent"
CHAT_SSE_EVENT = "ChatServerSentEvent"


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
        if paginated or any(getattr(p, "name", None) == PAGE_SIZE for p in self.get_override_parameters()):
            errors.append(("400", "a bad `page_size`: `fields` names it"))
        if "{" in self.path or paginated:
            errors.append(("404", "not found, or not the caller's to see" if "{" in self.path else "no such page"))
        return errors


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def chat_event_components() -> dict[str, dict[str, Any]]:
    """The chat event contract (chat.event_schema) as OpenAPI 3.0 components: `ChatEvent`, the union of every event
    by its `type` (a WebSocket frame), the models it names, and `ChatServerSentEvent`, the same events as SSE
    carries them."""
    schema = chat_event_adapter.json_schema(ref_template=f"{COMPONENTS}{{model}}")
    components = {name: _openapi_30(part) for name, part in schema.pop("$defs").items()}
    components[CHAT_EVENT] = _openapi_30(schema)
    components[CHAT_SSE_EVENT] = {
        "description": "One chat event as an SSE parser reads it: `event` and the `data` text.",
        "oneOf": [_sse_event(kind, payload.__name__) for kind, payload in PAYLOADS.items()]}
    return components


def _sse_event(kind: str, payload: str) -> dict[str, Any]:
    # OpenAPI 3.0 cannot say that a string holds JSON of a schema (3.1's contentMediaType and contentSchema):
    # the same keywords are given as extensions, for readers and tools that follow them.
    return {"type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", "enum": [kind]},
        "data": {"type": "string", "description": f"The event's payload as JSON: a `{payload}`.",
                 "x-contentMediaType": "application/json", "x-contentSchema": {"$ref": f"{COMPONENTS}{payload}"}}}}


def _openapi_30(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic writes JSON Schema 2020-12; OpenAPI 3.0 has no null type, no `const` and no siblings beside a
    `$ref`: null becomes `nullable`, a constant a one-value `enum`, a described `$ref` an `allOf` of one."""
    schema = dict(schema)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [_openapi_30(option) for option in schema[key]]
            if {"type": "null"} in options:
                options = [option for option in options if option != {"type": "null"}]
                schema["nullable"] = True
            if len(options) == 1 and key == "anyOf":
                del schema[key]
                schema = {**options[0], **schema}
            else:
                schema[key] = options
    if "const" in schema:
        schema["enum"] = [schema.pop("const")]
    if "properties" in schema:
        # Pydantic titles each field after its name ("Citationcoverage"): noise beside the name itself.
        schema["properties"] = {name: {k: v for k, v in _openapi_30(part).items() if k != "title"}
                                for name, part in schema["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            schema[key] = _openapi_30(schema[key])
    if "$ref" in schema and len(schema) > 1:
        schema = {"allOf": [{"$ref": schema.pop("$ref")}], **schema}
    return schema


def _text_limit(key: str) -> int:
    """The live limit of a text a request carries (a configuration row), so the schema says what is enforced now."""
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
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    events = chat_event_components()
    clash = sorted(name for name, part in events.items() if schemas.get(name, part) != part)
    if clash:
        raise ValueError(f"chat event components clash with the API's own: {', '.join(clash)}")
    schemas.update(events)
    body = chat_request_schema()
    body["properties"]["message"].update(_question(_text_limit("chat.max_message_chars")))
    result.setdefault("paths", {})["/api/chat/"] = {"post": {
        "operationId": "chat_stream",
        "summary": "Ask a question; the answer streams as server-sent events.",
        "tags": ["chat"],
        "security": [{"tokenAuth": []}, {"cookieAuth": []}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {"description": _EVENTS, "content": {"text/event-stream": {
                "schema": {"$ref": f"{COMPONENTS}{CHAT_SSE_EVENT}"}}}},
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

