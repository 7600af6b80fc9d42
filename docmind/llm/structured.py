"""The OpenAI `response_format` asking for a reply that fits a pydantic schema: strict when the schema allows it."""
from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from openai.lib import type_to_response_format_param
from pydantic import BaseModel

# Keywords OpenAI's strict mode rejects: a schema using one is sent with strict false (the model is guided, not
# constrained), never silently loosened.
_NOT_STRICT = frozenset({
    "minLength", "maxLength", "patternProperties", "unevaluatedProperties", "propertyNames", "minProperties",
    "maxProperties", "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems", "prefixItems",
})


@functools.cache
def response_format_for(schema: type[BaseModel]) -> dict[str, Any]:
    """`{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}` for `schema`.

    The SDK's own converter (the one `chat.completions.parse` uses) closes every object and requires every field, as
    strict mode needs. When the result still holds something strict mode cannot express, the plain pydantic schema
    goes out with strict false. Cached: the schemas are module-level classes. Callers must not mutate the result.
    """
    param: dict[str, Any] = dict(type_to_response_format_param(schema))
    strict_schema = param["json_schema"]["schema"]
    nodes = list(_subschemas(strict_schema))
    if all(_fits_strict(node) for node in nodes):
        # Strict mode requires every field, so a default can never apply; some OpenAI-compatible services
        # reject the keyword in strict schemas.
        for node in nodes:
            node.pop("default", None)
        return param
    loose = {"name": param["json_schema"]["name"], "schema": schema.model_json_schema(), "strict": False}
    return {"type": "json_schema", "json_schema": loose}


def _fits_strict(node: dict[str, Any]) -> bool:
    if _NOT_STRICT.intersection(node):
        return False
    is_object = node.get("type") == "object" or "properties" in node
    return not is_object or node.get("additionalProperties") is False


def _subschemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema inside `node`, itself included, by position (a property named "default" is not a keyword)."""
    if not isinstance(node, dict):
        return
    yield node
    for key in ("properties", "$defs", "definitions"):
        for child in (node.get(key) or {}).values():
            yield from _subschemas(child)
    for key in ("items", "additionalProperties", "not"):
        yield from _subschemas(node.get(key))
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for child in node.get(key) or ():
            yield from _subschemas(child)
