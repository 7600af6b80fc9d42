"""Document profiling for the knowledge map: from a document's title and opening text, the model names 2–6
business scenarios it covers and one sentence on when to retrieve it. The reply is one JSON object,
`DocumentProfileReply`; the caller cleans the tags and derives the profile offline when either field is empty."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, field_validator

SYSTEM = ("你为知识库文档生成检索元数据。只输出 JSON：{\"covers\": [2-6 个简短的业务场景标签], "
          "\"when_to_retrieve\": \"一句话：用户问到什么时应检索这篇文档\"}。不要输出其它内容。")


def user_message(*, title: str, text: str) -> str:
    return f"标题：{title}\n\n正文：\n{text}"


def _text(value: Any) -> str:
    """A scalar as text (a number is a usable phrase); null is no text."""
    return "" if value is None else str(value)


class DocumentProfileReply(BaseModel):
    # Tags are a list; each item is taken as text (a bare string would be split into characters, so it is refused).
    covers: list[str] = []
    when_to_retrieve: str = ""

    @field_validator("covers", mode="before")
    @classmethod
    def _covers(cls, value: Any) -> Any:
        return [_text(tag) for tag in value] if isinstance(value, list) else value

    @field_validator("when_to_retrieve", mode="before")
    @classmethod
    def _when(cls, value: Any) -> str:
        return _text(value)
