"""The JSON object inside a model reply: models wrap it in code fences or chatter, so take the outermost braces."""
from __future__ import annotations

import json
import re
from typing import Any

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def json_object_text(reply: str | None, *, what: str = "reply") -> str:
    """The text from the first `{` to the last `}`; ValueError naming `what` when there is none."""
    found = _JSON_OBJECT.search(reply or "")
    if not found:
        raise ValueError(f"no JSON object in the {what}")
    return found.group(0)


def json_object_from_reply(reply: str | None, *, what: str = "reply") -> dict[str, Any]:
    """The first JSON object in a model reply, parsed; ValueError when there is none or it does not parse."""
    data = json.loads(json_object_text(reply, what=what))
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not a JSON object")
    return data
