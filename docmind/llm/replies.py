"""The JSON object inside a model reply: models wrap it in code fences or chatter, so take the outermost braces."""
from __future__ import annotations

import re

from pydantic import BaseModel, ValidationError

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def json_object_text(reply: str | None, *, what: str = "reply") -> str:
    """The text from the first `{` to the last `}`; ValueError naming `what` when there is none."""
    found = _JSON_OBJECT.search(reply or "")
    if not found:
        raise ValueError(f"no JSON object in the {what}")
    return found.group(0)


def parse_reply[M: BaseModel](schema: type[M], reply: str | None, *, what: str = "reply") -> M:
    """The reply's JSON object validated by `schema`; ValueError naming `what` when there is no object, it does
    not parse or it does not fit (the model's text is never put in the message: it may hold the user's words)."""
    text = json_object_text(reply, what=what)
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        raise ValueError(f"{what} does not fit the schema: {exc.error_count()} error(s)") from None
