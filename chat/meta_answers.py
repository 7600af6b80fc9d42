"""`MetaAnswerer`: answers for the non-knowledge scopes (greeting, help, KB meta, memory, out of scope)."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from chat.types import QueryClassification, Scope
from docmind.language import is_chinese

_THANKS = re.compile(r"谢|感谢|thank|thx", re.IGNORECASE)
_BYE = re.compile(r"再见|拜拜|晚安|\bbye\b|goodbye|see you|good night", re.IGNORECASE)

HELP_ZH = ("我是 DocMind 知识库问答助手。我会先在知识库里检索相关文档，再根据检索到的内容回答，并在句末用编号标出来源，"
           "点击编号就能看到对应的原文片段。\n\n你可以：\n- 直接提问，例如“年假怎么计算？”\n"
           "- 在文档选择器里选中一篇文档，然后说“总结一下这篇文档”\n- 让我对比多个主题，例如“A 和 B 有什么区别？”\n"
           "- 问“知识库里有哪些文档？”查看可用资料\n\n回答只依据知识库内容；找不到依据时我会直接告诉你。")
HELP_EN = ("I'm DocMind, a knowledge-base assistant. I search the knowledge base first, answer from what I find, "
           "and number each source so you can click through to the passage.\n\nYou can:\n"
           "- ask a question directly, e.g. \"How is annual leave calculated?\"\n"
           "- pick a document in the document picker and say \"summarize this document\"\n"
           "- ask me to compare topics, e.g. \"What is the difference between A and B?\"\n"
           "- ask \"What documents do you have?\" to see what I can read\n\n"
           "I answer only from the knowledge base, and I say so when I find nothing.")


def _field(item: Any, name: str) -> str:
    value = item.get(name, "") if isinstance(item, Mapping) else getattr(item, name, "")
    return str(value or "").strip()


class MetaAnswerer:
    """Facts come in from the caller (document list, memories); this stage only words the answer."""

    def __init__(self, *, max_titles: int = 30, max_memories: int = 20) -> None:
        if max_titles <= 0 or max_memories <= 0:
            raise ValueError("max_titles and max_memories must be positive")
        self.max_titles = max_titles
        self.max_memories = max_memories

    def run(self, *, classification: QueryClassification, message: str, documents: Sequence[Any] = (),
            memories: Sequence[Any] = ()) -> str:
        zh = is_chinese(message)
        scope = classification.scope
        if scope is Scope.GREETING:
            return self._greeting(message, zh)
        if scope is Scope.IDENTITY:
            return HELP_ZH if zh else HELP_EN
        if scope is Scope.KB_META:
            return self._documents(documents, zh)
        if scope is Scope.MEMORY:
            return self._memories(memories, zh)
        if scope is Scope.OUT_OF_SCOPE:
            return ("这个问题超出了我的服务范围：我只根据知识库里的文档回答问题。你可以问我文档里的内容，"
                    "或者问“知识库里有哪些文档？”。" if zh else
                    "That's outside what I can help with: I answer questions from the documents in the knowledge "
                    "base. Ask me about their content, or ask \"What documents do you have?\".")
        raise ValueError(f"{scope} is a knowledge question, not a meta one")

    @staticmethod
    def _greeting(message: str, zh: bool) -> str:
        if _THANKS.search(message):
            return "不客气！还有什么想了解的，随时问我。" if zh else "You're welcome! Ask me anything else any time."
        if _BYE.search(message):
            return "再见！需要时随时回来找我。" if zh else "Goodbye! Come back whenever you need me."
        return ("你好！我是 DocMind 知识库助手，可以根据知识库里的文档回答问题并标注来源。想了解什么？" if zh else
                "Hello! I'm DocMind. I answer questions from the knowledge base and cite my sources. "
                "What would you like to know?")

    def _documents(self, documents: Sequence[Any], zh: bool) -> str:
        titles = [(_field(d, "title") or _field(d, "name"), _field(d, "domain")) for d in documents]
        titles = [(t, d) for t, d in titles if t]
        if not titles:
            return ("知识库里还没有可用的文档。请管理员或知识库编辑上传文档，处理完成后就可以提问了。" if zh else
                    "The knowledge base has no ready documents yet. Once an editor uploads some and they are "
                    "processed, you can ask about them.")
        by_domain: dict[str, list[str]] = {}
        for title, domain in titles[: self.max_titles]:
            by_domain.setdefault(domain or ("未分类" if zh else "uncategorised"), []).append(title)
        lines = [f"知识库里共有 {len(titles)} 篇可用文档：" if zh else
                 f"The knowledge base has {len(titles)} ready document{'s' if len(titles) != 1 else ''}:"]
        for domain, names in by_domain.items():
            lines.append(f"\n**{domain}**")
            lines.extend(f"- {name}" for name in names)
        if len(titles) > self.max_titles:
            rest = len(titles) - self.max_titles
            lines.append(f"\n……另有 {rest} 篇未列出。" if zh else f"\n…and {rest} more.")
        lines.append("\n可以直接就这些文档提问，或选中一篇让我总结。" if zh else
                     "\nAsk me about any of them, or pick one and ask me to summarise it.")
        return "\n".join(lines)

    def _memories(self, memories: Sequence[Any], zh: bool) -> str:
        items = [_field(m, "content") if not isinstance(m, str) else m.strip() for m in memories]
        items = [m for m in items if m][: self.max_memories]
        if not items:
            return ("我目前还没有记住关于你的信息。你可以告诉我，例如“记住我更喜欢简洁的回答”。" if zh else
                    "I don't remember anything about you yet. You can tell me, e.g. \"Remember that I prefer "
                    "short answers.\"")
        head = "我记得关于你的这些信息：" if zh else "Here is what I remember about you:"
        tail = ("\n\n如有不对，可以在“记忆”页面修改或删除。" if zh else
                "\n\nYou can edit or delete these on the memories page.")
        return head + "\n" + "\n".join(f"- {m}" for m in items) + tail
