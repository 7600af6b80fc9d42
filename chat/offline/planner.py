"""`OfflinePlanner`: a deterministic stand-in for the planning model, speaking the same tool-call messages."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator

from pydantic import BaseModel

from docmind.llm.base import ChatReply, LlmError, ToolCall

# At most this many searches in the first round (one per focus), so a question listing many parts cannot
# multiply one turn's retrieval cost.
MAX_FOCI = 4
_SENTENCES = re.compile(r"[？?；;。!！\n]+")
_LEADING = re.compile(r"^(?:请|请问)?(?:对比|比较|compare|分别说明|分别介绍|以及|另外|还有|同时|并且|and)"
                      r"[，,：:\s]*", re.I)
_CONJ = re.compile(r"\s*(?:以及|和|与|跟|及|vs\.?|versus|\band\b|、)\s*", re.I)
_FILLER = re.compile(r"分别|各自|之间|的区别|的异同|有什么不同|有何不同|有什么区别")
# "X 的作者 …": the answer depends on an entity that the first search has to reveal.
_BRIDGE = re.compile(r"(?:的|之)(作者|导演|编剧|创始人|创办人|首都|省会|父亲|母亲|儿子|女儿|妻子|丈夫|总部|所在地|"
                     r"出生地|发明者|开发商|开发者|制作人|主演|主席|领导人|前身|所属公司)(.*)$")
_STOP = "检索完成"


class OfflinePlanner:
    """A `ChatModel`-shaped planner for offline mode (no API key) and for tests.

    Round 1: one searchDocs per focus (one for a simple question). Round 2: one follow-up
    searchDocs when the question asks about a related entity ("…的作者…") and the first result
    names it. Then it stops. It reads only the messages, like a model would.
    """

    def complete(self, messages: list[dict], *, model: str = "offline", tools: list[dict] | None = None,
                 temperature: float = 0.0, max_tokens: int | None = None,
                 response_schema: type[BaseModel] | None = None, structured_outputs: str = "auto") -> ChatReply:
        question, rounds, results = _read_turn(messages)
        offered = {t["function"]["name"] for t in tools or ()}
        if "searchDocs" not in offered or not question:
            return ChatReply(content=_STOP, model="offline", finish_reason="stop")
        if rounds == 0:
            queries = split_foci(question)
        elif rounds == 1:
            queries = [q for q in [follow_up_query(question, results)] if q]
        else:
            queries = []
        if not queries:
            return ChatReply(content=_STOP, model="offline", finish_reason="stop")
        calls = tuple(ToolCall(id=f"offline_{rounds + 1}_{i}", name="searchDocs",
                               arguments=json.dumps({"query": q}, ensure_ascii=False))
                      for i, q in enumerate(queries))
        return ChatReply(content="", tool_calls=calls, model="offline", finish_reason="tool_calls")

    def stream(self, messages: list[dict], *, model: str = "offline", temperature: float = 0.0,
               max_tokens: int | None = None) -> Iterator[str]:
        raise LlmError("the offline planner only plans")


def _read_turn(messages: list[dict]) -> tuple[str, int, list[str]]:
    """The question (last user message), tool rounds since it, and the tool results in order."""
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if start < 0:
        return "", 0, []
    after = messages[start + 1:]
    rounds = sum(1 for m in after if m.get("role") == "assistant" and m.get("tool_calls"))
    results = [str(m.get("content") or "") for m in after if m.get("role") == "tool"]
    question = str(messages[start].get("content") or "").split("\n（理解为：")[0]
    return question.strip(), rounds, results


def split_foci(question: str) -> list[str]:
    """Several question sentences → one query each; "A 和 B 的 X" → "A 的 X", "B 的 X"; else the question."""
    sentences = [_LEADING.sub("", s.strip()) for s in _SENTENCES.split(question)]
    sentences = [s for s in sentences if len(s) >= 2]
    if len(sentences) >= 2:
        return list(dict.fromkeys(sentences))[:MAX_FOCI]
    body = _LEADING.sub("", question.strip().rstrip("？?。!！"))
    parts = [p for p in _CONJ.split(body) if p.strip()]
    if len(parts) < 2 or any(len(p) < 2 for p in parts):
        return [question.strip()]
    last = parts[-1]
    if "的" in last:
        head, tail = last.split("的", 1)
        tail = "的" + tail
    else:
        head, tail = last, ""
    tail = _FILLER.sub("", tail)
    queries = [_FILLER.sub("", p).strip() + tail for p in parts[:-1]] + [_FILLER.sub("", head).strip() + tail]
    return list(dict.fromkeys(q for q in queries if q))[:MAX_FOCI]


def follow_up_query(question: str, results: list[str]) -> str | None:
    """The next hop: the entity the first result names for the question's relation, plus what is asked of it."""
    match = _BRIDGE.search(question.rstrip("？?。"))
    if not match or not results:
        return None
    relation, rest = match.group(1), match.group(2).strip()
    rest = re.sub(r"^(?:是|为)?(?:谁|什么|哪里|哪个)?", "", rest).strip("，, ")
    found = re.search(rf"{relation}(?:是|为|：|:|乃|名为|叫)\s*《?([^，。、；;,.\s《》（）()“”\"]{{2,12}})", results[0])
    if not found or found.group(1) in question:
        return None
    return f"{found.group(1)} {rest}".strip() if rest else found.group(1)
