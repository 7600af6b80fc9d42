"""The history summary: the cheap model condenses the dropped head of a long conversation into at most `chars`
characters. The reply is the summary itself, free text."""
from __future__ import annotations

PROMPT = ("把下面的较早对话压缩成要点摘要，保留用户的问题、已确认的事实、结论和偏好，不要编造，"
          "使用对话原本的语言，不超过 {chars} 字。只输出摘要本身。\n\n{text}")


def summary_prompt(*, text: str, chars: int) -> str:
    return PROMPT.format(chars=chars, text=text)
