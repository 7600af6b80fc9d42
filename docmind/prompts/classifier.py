"""The query classifier: the small model rewrites the question on its own (references resolved from the
conversation) and labels it. The reply is one JSON object, `ClassifierReply`.

Every field is optional and read leniently: a field the model left out or got wrong becomes None (or "" for the
rewrite), and the caller keeps its heuristic value for it, so a bad field never spoils the rest.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

SYSTEM_PROMPT = """你是 DocMind 的查询理解器。只输出一个 JSON 对象，不要任何其它文字。字段：
- rewritten: 结合对话历史补全指代后的独立问题（保持用户的语言）。代词（它、这个、it…）换成所指的对象，\
序数（第二类、the second one…）换成上一轮回答或其文档中对应的那一项，\
省略句（那退款呢？）补全成完整问题；不依赖上下文的问题原样返回
- intent: FACTUAL | HOW_TO | EXPLANATION | COMPARISON | SUMMARY | CHITCHAT | OTHER
- complexity: SIMPLE（单一焦点、一次检索可答）| MEDIUM（多焦点或需要多次检索）| COMPLEX（多跳推理）
- specificity: SPECIFIC | BROAD | VAGUE
- timeAware: 是否依赖最新/当前信息 (true/false)
- memoryAware: 是否与用户个人信息或偏好有关 (true/false)
- isAmbiguous: 问题是否含糊到无法检索 (true/false)
- scope: KNOWLEDGE（需要查知识库）| GREETING | IDENTITY（问助手是谁/怎么用）| KB_META（问知识库有哪些文档）\
| MEMORY（问助手记得用户什么）| OUT_OF_SCOPE（与知识问答无关）
- scopeConfidence: 0 到 1
- memoryWriteHints: 用户要求记住的个人事实，字符串数组（没有则为 []）"""

HISTORY_MESSAGE_CHARS = 300
MAX_MEMORY_HINTS = 3

IntentName = Literal["FACTUAL", "HOW_TO", "EXPLANATION", "COMPARISON", "SUMMARY", "CHITCHAT", "OTHER"]
ComplexityName = Literal["SIMPLE", "MEDIUM", "COMPLEX"]
SpecificityName = Literal["SPECIFIC", "BROAD", "VAGUE"]
ScopeName = Literal["KNOWLEDGE", "GREETING", "IDENTITY", "KB_META", "MEMORY", "OUT_OF_SCOPE"]


def user_message(*, history: Sequence[tuple[str, str]], message: str, source_titles: Sequence[str] = (),
                 sections: Sequence[str] = ()) -> str:
    """The recent (role, content) turns, the documents the previous answer cited (the first one's sections, so
    "the second one" can be resolved), and the question."""
    turns = "\n".join(f"{role}: {content[:HISTORY_MESSAGE_CHARS]}" for role, content in history) or "（无）"
    sources = ""
    if source_titles:
        sources = "\n上一轮回答引用的文档：" + "、".join(f"《{title}》" for title in source_titles[:3])
        if sections:
            sources += "\n《" + source_titles[0] + "》的章节：" + " / ".join(sections[:12])
    return f"对话历史：\n{turns}{sources}\n\n当前问题：{message}"


def _name(value: Any, allowed: type) -> str | None:
    name = str(value).strip().upper()
    return name if name in get_args(allowed) else None


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return None


class ClassifierReply(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    rewritten: str = ""
    intent: IntentName | None = None
    complexity: ComplexityName | None = None
    specificity: SpecificityName | None = None
    time_aware: bool | None = Field(None, alias="timeAware")
    memory_aware: bool | None = Field(None, alias="memoryAware")
    is_ambiguous: bool | None = Field(None, alias="isAmbiguous")
    scope: ScopeName | None = None
    scope_confidence: float | None = Field(None, alias="scopeConfidence")
    # None: the model gave no list (the caller keeps its own hints); []: it found nothing to remember.
    memory_write_hints: tuple[str, ...] | None = Field(None, alias="memoryWriteHints")

    @field_validator("rewritten", mode="before")
    @classmethod
    def _rewritten(cls, value: Any) -> str:
        return value.strip() if isinstance(value, str) else ""

    @field_validator("intent", mode="before")
    @classmethod
    def _intent(cls, value: Any) -> str | None:
        return _name(value, IntentName)

    @field_validator("complexity", mode="before")
    @classmethod
    def _complexity(cls, value: Any) -> str | None:
        return _name(value, ComplexityName)

    @field_validator("specificity", mode="before")
    @classmethod
    def _specificity(cls, value: Any) -> str | None:
        return _name(value, SpecificityName)

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: Any) -> str | None:
        return _name(value, ScopeName)

    @field_validator("time_aware", "memory_aware", "is_ambiguous", mode="before")
    @classmethod
    def _flags(cls, value: Any) -> bool | None:
        return _flag(value)

    @field_validator("scope_confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> float | None:
        try:
            return min(1.0, max(0.0, float(value)))
        except (TypeError, ValueError):
            return None

    @field_validator("memory_write_hints", mode="before")
    @classmethod
    def _hints(cls, value: Any) -> tuple[str, ...] | None:
        if not isinstance(value, list | tuple):
            return None
        return tuple(str(h) for h in value if str(h).strip())[:MAX_MEMORY_HINTS]
