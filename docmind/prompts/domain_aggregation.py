"""A knowledge domain's retrieval note: from its documents' titles, retrieval notes and scenario tags, the model
writes a short description and one or two sentences on when to search the domain. The reply is one JSON object,
`DomainAggregationReply`; the caller merges offline when `when_to_retrieve` is empty."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, field_validator

SYSTEM = ("你为知识库的一个知识域写检索说明。根据各文档的检索时机，只输出 JSON："
          "{\"description\": \"不超过 30 字的域描述\", \"when_to_retrieve\": \"一两句话：用户问到什么时检索本域；"
          "优先检索一次，勿重复\"}。不要输出其它内容。")


def user_message(*, domain_id: str, docs: Sequence[tuple[str, str, Sequence[str]]]) -> str:
    """`docs`: (title, when_to_retrieve, covers) of each document, one line each."""
    lines = "\n".join(f"- 《{title}》：{when}（场景：{'、'.join(covers)}）" for title, when, covers in docs)
    return f"知识域：{domain_id}\n文档：\n{lines}"


class DomainAggregationReply(BaseModel):
    description: str = ""
    when_to_retrieve: str = ""

    @field_validator("description", "when_to_retrieve", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        """A scalar as text (a number is a usable phrase); null is no text."""
        return "" if value is None else str(value)
