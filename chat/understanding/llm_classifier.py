"""`LlmQueryClassifier`: Tier-1 classification by the small model, returning JSON we validate field by field."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any

from chat.types import Complexity, ConversationContext, Intent, QueryClassification, Scope, Specificity
from docmind.llm.base import ChatModel
from docmind.llm.replies import json_object_from_reply

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

def _enum[E: StrEnum](kind: type[E], value: Any, default: E) -> E:
    try:
        return kind(str(value).strip().upper())
    except ValueError:
        return default


def _flag(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return default


class LlmQueryClassifier:
    """Each field the model got wrong keeps the heuristic's value: a bad field never spoils the rest."""

    def __init__(self, *, chat_model: ChatModel, model: str, history_turns: int = 4) -> None:
        if not model:
            raise ValueError("model name is required")
        if history_turns < 0:
            raise ValueError("history_turns must be >= 0")
        self.chat_model = chat_model
        self.model = model
        self.history_turns = history_turns

    def run(self, *, message: str, history: Sequence[dict], baseline: QueryClassification,
            context: ConversationContext | None = None) -> QueryClassification:
        """Raises LlmError (model failed) or ValueError (reply is not a JSON object). The rewrite is the
        model's as given: the caller validates it against the offline one."""
        recent = [t for t in history if t.get("role") in ("user", "assistant")][-self.history_turns:]
        turns = "\n".join(f"{t['role']}: {str(t.get('content', ''))[:300]}" for t in recent) or "（无）"
        previous = context.previous if context is not None else None
        sources = ""
        if previous is not None and previous.sources:
            sources = "\n上一轮回答引用的文档：" + "、".join(f"《{s.title}》" for s in previous.sources[:3])
            if previous.sections:
                sources += "\n《" + previous.sources[0].title + "》的章节：" + " / ".join(previous.sections[:12])
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"对话历史：\n{turns}{sources}\n\n当前问题：{message}"},
        ]
        reply = self.chat_model.complete(messages, model=self.model, temperature=0.0, max_tokens=400)
        data = json_object_from_reply(reply.content, what="classifier reply")
        rewritten = data.get("rewritten")
        confidence = data.get("scopeConfidence", baseline.scope_confidence)
        try:
            confidence = min(1.0, max(0.0, float(confidence)))
        except (TypeError, ValueError):
            confidence = baseline.scope_confidence
        hints = data.get("memoryWriteHints")
        return replace(
            baseline,
            rewritten=rewritten.strip() if isinstance(rewritten, str) and rewritten.strip() else "",
            intent=_enum(Intent, data.get("intent"), baseline.intent),
            complexity=_enum(Complexity, data.get("complexity"), baseline.complexity),
            specificity=_enum(Specificity, data.get("specificity"), baseline.specificity),
            time_aware=_flag(data.get("timeAware"), baseline.time_aware),
            memory_aware=_flag(data.get("memoryAware"), baseline.memory_aware),
            is_ambiguous=_flag(data.get("isAmbiguous"), baseline.is_ambiguous),
            scope=_enum(Scope, data.get("scope"), baseline.scope),
            scope_confidence=confidence,
            memory_write_hints=tuple(str(h) for h in hints if str(h).strip())[:3]
            if isinstance(hints, list) else baseline.memory_write_hints,
            source="llm",
        )
