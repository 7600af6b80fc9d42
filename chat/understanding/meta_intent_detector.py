"""`MetaIntentDetector`: Tier-0 rules that recognise non-knowledge messages without any model."""
from __future__ import annotations

import re
from dataclasses import dataclass

from chat.types import Complexity, Intent, QueryClassification, Scope, Specificity
from memory.commands import is_self_question, is_self_statement

# Polite filler that may surround a meta question without changing what it asks.
_FILLER = (r"(?:请问|请|麻烦|那么|那|嗯|哦|呃|啊|呀|吧|呢|吗|么|嘛|please|ok|okay|so|and|um|hey|hi|hello"
           r"|\s|[，,。.！!？?~～、;；:：])*")

_GREETING = re.compile(
    r"(?:你好|您好|嗨|哈喽|哈啰|早上好|早安|上午好|中午好|下午好|晚上好|晚安|在吗|在不在|谢谢你?|多谢|感谢|"
    r"拜拜|再见|hi|hello|hey|hiya|yo|greetings|good (?:morning|afternoon|evening|night)|thanks|thank you|"
    r"thx|bye|goodbye|see you)(?:呀|啊|哦|\s+(?:there|all|everyone|docmind))?",
    re.IGNORECASE,
)
_IDENTITY = re.compile(
    r"(?:你是谁|你是什么|你叫什么(?:名字)?|介绍一下你自己|自我介绍一下?|你能做什么|你可以做什么|你会做什么|你会什么|"
    r"你有什么功能|怎么用你?|如何使用|使用说明|使用帮助|帮助|help|who are you|what are you|what is your name|"
    r"what's your name|what can you do|how do i use (?:you|this|docmind)|how does this work|introduce yourself)",
    re.IGNORECASE,
)
_KB_META = re.compile(
    r"(?:(?:你|知识库|系统|这里)(?:里|中)?(?:都|现在)?有(?:哪些|什么|多少)(?:文档|资料|文件|知识)|"
    r"有(?:哪些|什么)(?:文档|资料|文件)|知识库(?:里|中)?(?:都)?有(?:什么|哪些)(?:内容)?|文档列表|列出(?:所有)?(?:的)?文档|"
    r"(?:what|which) (?:documents|docs|files|sources) (?:do you have|can you access|are (?:there|available|in "
    r"(?:the|your|this) (?:knowledge base|kb)))|"
    r"list (?:all |the |your )?(?:documents|docs|files)|what(?:'s| is) in (?:the|your) knowledge base|"
    r"what do you know about|what topics do you cover)",
    re.IGNORECASE,
)
_MEMORY = re.compile(
    r"(?:我(?:之前|以前|刚才|上次)(?:跟你|和你|对你)?(?:说过|提过|讲过|告诉过你)(?:什么|哪些)?|你(?:还)?记得我?(?:什么|哪些|吗)?|"
    r"你(?:都)?记住了(?:我)?(?:什么|哪些)|关于我你(?:都)?知道(?:什么|哪些)|你对我了解(?:什么|多少)|我的记忆|"
    r"what do you (?:remember|know) about me|what did i (?:tell|say to) you|do you remember (?:me|what i said)|"
    r"what have i told you|show (?:me )?my memories|"
    # Memory commands: remember a statement, forget one or all (never a question such as 忘记密码怎么办).
    r"(?:帮我)?记住(?!.*[?？]|.*什么)[^?？]{2,80}|remember (?:that )?(?!me\b|what\b|.*\?)[^?]{3,120}|"
    r"(?:忘掉|忘了|别再记着?|不要再?记着?)(?![^?？]*(?:怎么|如何|怎样|[?？]))[^?？]{1,40}|"
    r"忘记(?=我|关于|这|那|所有|全部)(?![^?？]*(?:怎么|如何|怎样|[?？]))[^?？]{1,40}|"
    r"(?:删掉|删除|清空|清除)(?:我的)?(?:所有|全部)?(?:的)?记忆|"
    r"forget (?:that |about )?[^?]{1,60}|(?:delete|clear|erase) (?:all )?my memories)",
    re.IGNORECASE,
)
_OUT_OF_SCOPE = re.compile(
    r"(?:讲个笑话|说个笑话|写(?:一)?首诗|唱(?:一)?首歌|tell me a joke|write (?:me )?a poem|sing (?:me )?a song)",
    re.IGNORECASE,
)
# "What do you know about X" is a knowledge question once X is given; only bare forms are meta.
_KNOWLEDGE_TAIL = re.compile(r"what do you know about\s+(?!me\b)\S", re.IGNORECASE)

_WRITE_HINTS = (
    re.compile(r"(?:请)?记住(?:[,，:：]\s*)?(.{2,80}?)(?:[。.!！]|$)"),
    re.compile(r"\bremember (?:that )?(.{3,120}?)(?:[.!]|$)", re.IGNORECASE),
    re.compile(r"(我(?:更|比较|一直|现在|通常)?(?:叫|是|喜欢|偏好|习惯|不喜欢|在|住在|来自)[^，,。.!！?？]{1,40})"),
    re.compile(r"\b((?:my name is|i (?:usually |really |much )?prefer|i like|i work (?:at|on|in|for|as)|i live in|"
               r"i am an?|i'm an?)\b[^,.!?]{1,80})", re.IGNORECASE),
)


@dataclass(frozen=True)
class _Rule:
    scope: Scope
    pattern: re.Pattern[str]


_RULES = (
    _Rule(Scope.MEMORY, _MEMORY),
    _Rule(Scope.KB_META, _KB_META),
    _Rule(Scope.IDENTITY, _IDENTITY),
    _Rule(Scope.OUT_OF_SCOPE, _OUT_OF_SCOPE),
    _Rule(Scope.GREETING, _GREETING),
)


def memory_write_hints(message: str) -> tuple[str, ...]:
    """Statements the user wants remembered ("记住我喜欢简洁回答", "my name is Ada"), verbatim."""
    hints: list[str] = []
    for pattern in _WRITE_HINTS:
        for found in pattern.findall(message):
            text = found.strip(" ，,。.")
            if text and text not in hints:
                hints.append(text)
    return tuple(hints[:3])


class MetaIntentDetector:
    """Tier-0: a message that is *only* a meta question (plus filler) gets its scope without a model."""

    def run(self, *, message: str) -> QueryClassification | None:
        text = message.strip()
        if not text or len(text) > 80 or _KNOWLEDGE_TAIL.search(text):
            return None
        if is_self_statement(text):
            # Said, not asked: remembered (the statement itself is the hint) and acknowledged; the documents
            # are not searched, so nothing is cited.
            hints = tuple(dict.fromkeys((text.rstrip("。.!！"), *memory_write_hints(text))))[:3]
            return QueryClassification(
                rewritten=text, intent=Intent.OTHER, complexity=Complexity.SIMPLE, specificity=Specificity.SPECIFIC,
                memory_aware=True, scope=Scope.MEMORY, scope_confidence=0.9, memory_write_hints=hints,
                source="meta-rules")
        if is_self_question(text):
            # Asked about the asker themselves: only what they told the assistant can answer, not the documents.
            return QueryClassification(
                rewritten=text, intent=Intent.OTHER, complexity=Complexity.SIMPLE, specificity=Specificity.SPECIFIC,
                memory_aware=True, scope=Scope.MEMORY, scope_confidence=1.0, source="meta-rules")
        for rule in _RULES:
            if re.fullmatch(f"{_FILLER}(?:{rule.pattern.pattern}{_FILLER})+", text, re.IGNORECASE):
                return QueryClassification(
                    rewritten=text, intent=Intent.CHITCHAT if rule.scope is Scope.GREETING else Intent.OTHER,
                    complexity=Complexity.SIMPLE, specificity=Specificity.SPECIFIC,
                    memory_aware=rule.scope is Scope.MEMORY, scope=rule.scope, scope_confidence=1.0,
                    memory_write_hints=memory_write_hints(text), source="meta-rules",
                )
        return None
