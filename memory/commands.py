"""`MemoryCommandParser` and `MemoryScopeAnswerer`: what a MEMORY-scope message asks (list, explain, forget,
forget all, remember) and the wording of the answer, from facts the caller supplies."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from docmind.language import is_chinese, to_simplified


class Command(StrEnum):
    LIST = "list"
    EXPLAIN = "explain"
    FORGET = "forget"
    FORGET_ALL = "forget_all"
    REMEMBER = "remember"
    ABOUT_ME = "about_me"


_FORGET_ALL = re.compile(r"(?:忘掉|忘记|删除|删掉|清空|清除)(?:我的)?(?:所有|全部|一切)(?:的)?"
                         r"(?:记忆|关于我的(?:事|信息|记忆))?|清空(?:我的)?记忆|"
                         r"\bforget (?:everything|all(?: (?:of )?my memories)?)\b|"
                         r"\b(?:delete|clear|erase) (?:all )?my memories\b", re.I)
_FORGET = re.compile(r"(?:请|麻烦)?(?:你)?(?:忘掉|忘记|忘了|删掉|删除|别再记着?|不要再?记着?)"
                     r"(?:关于)?[,，:：\s]*(?P<zh>.*)|"
                     r"\b(?:please )?(?:forget|delete the memory|don'?t remember)(?: about| that)?\s*(?P<en>.*)", re.I)
_REMEMBER = re.compile(r"^(?:请|麻烦)?(?:你)?(?:帮我)?记住|^(?:please )?remember\b(?! (?:me|what))", re.I)
_EXPLAIN = re.compile(r"为什么(?:会)?记|怎么(?:会)?知道|从哪(?:里|儿)?(?:知道|来)|记忆(?:是)?怎么(?:来|工作)|"
                      r"\bwhy do you (?:remember|know)\b|\bhow do you (?:remember|know)\b|"
                      r"\bhow does (?:your )?memory work\b", re.I)
# A statement about the speaker or how they want answers: "我在上海工作", "以后请用英文回答", "I'm on the sales team".
# 我 before an institution is "our" (我国, 我省, 我司, 我校): the sentence is about that, not the speaker.
_ABOUT_ME = re.compile(r"^(?:我(?![国省市县区镇村校院司行方军部厂局委所处党])|本人|以后|今后|从现在起|"
                       r"(?:请|麻烦)(?:你)?(?:以后|今后)?(?:都)?(?:用|以|回答|简短|详细))|"
                       r"^(?:i\b|i'm\b|i've\b|my\b|from now on\b|"
                       r"please (?:always )?(?:answer|reply|respond|use|keep)\b)", re.I)
# Anything that asks: a question mark, Chinese question particles and words, an English question's opening, and
# a problem or need stated as a sentence ("我的工牌丢了", "我想知道年假", "my card was stolen"), which wants an answer.
_ASKS = re.compile(r"[?？]|吗|呢|么|什么|怎么|怎样|如何|哪|谁|几|多少|多久|多长|是否|能否|可否|有没有|是不是|要不要|"
                   r"为什么|为何|请问|告诉我|查一下|帮我|想知道|想了解|想问|想查|要申请|要报销|需要|"
                   r"忘记|忘了|丢了|丢失|坏了|被盗|不能|不了|无法|打不开|连不上|报错|出错|失败|不会|"
                   r"^(?:what|how|why|when|where|who|which|whose|can|could|do|does|did|is|are|should|would|will|may)\b|"
                   r"\b(?:tell me|show me|look up|find|help|lost|stolen|broken|broke|forgot|can't|cannot|won't|"
                   r"doesn't|not working|error|need|want to know|wonder)\b", re.I)
STATEMENT_MAX_CHARS = 80
# A question about the asker themselves, which only what they told the assistant can answer: where they work or
# live, their name, team, department or job ("我在哪里工作？", "What's my name?"), with filler around it. A question
# about what applies to them ("我在试用期能请年假吗？", "我的年假有几天？") names something else and is not one.
_SELF_QUESTION = re.compile(
    r"(?:请问|那|那么|你知道|你记得)?\s*"
    r"(?:我(?:现在|目前)?(?:在哪(?:里|儿)?(?:工作|上班|办公|住)?|住(?:在)?哪(?:里|儿)?|叫什么(?:名字)?|是谁|"
    r"是哪(?:里|儿)人|来自哪(?:里|儿)?|"
    r"在(?:哪个|哪家|哪一个|什么)(?:部门|团队|小组|项目组|组|城市|地方|国家|省|公司|分公司|办公室|园区|校区)"
    r"(?:工作|上班|办公)?|"
    r"是(?:哪个|什么)(?:部门|团队|职位|岗位)的?|(?:是)?(?:做|干)什么(?:工作)?(?:的)?)|"
    r"(?:do you know )?(?:where do i (?:work|live)|where am i (?:based|from)|who am i|"
    r"what(?:'s| is) my (?:name|job|role|team|department)|"
    r"which (?:team|department|city|company|office) (?:am i (?:in|on|with|at)|do i work (?:in|on|for|at))))"
    r"\s*(?:呢|吗|啊|呀)?\s*[?？。.!！]*", re.IGNORECASE)


def is_self_question(message: str) -> bool:
    """The user asks about themselves ("我在哪里工作？", in Traditional characters too): the reply is what they said
    before, never the documents."""
    return _SELF_QUESTION.fullmatch(to_simplified(message.strip())) is not None


def is_self_statement(message: str) -> bool:
    """The user tells something about themselves and asks nothing: the reply acknowledges and remembers it
    instead of searching the documents ("我入职三年了，年假有几天？" asks, so it is a question)."""
    text = message.strip()
    return 0 < len(text) <= STATEMENT_MAX_CHARS and bool(_ABOUT_ME.search(text)) and not _ASKS.search(text)


_TARGET_TAIL = re.compile(r"(?:这|那)(?:一)?(?:条|件事|个)(?:记忆)?|的(?:那条)?记忆|吧|吗|了|。|\.|!|！|\s+$", re.I)


@dataclass(frozen=True)
class ParsedCommand:
    command: Command
    target: str = ""  # what to forget, in the user's words


class MemoryCommandParser:
    def run(self, *, message: str) -> ParsedCommand:
        text = message.strip()
        if _FORGET_ALL.search(text):
            return ParsedCommand(Command.FORGET_ALL)
        found = _FORGET.search(text)
        if found:
            target = _TARGET_TAIL.sub("", (found.group("zh") or found.group("en") or "")).strip(" ，,：:“”\"'")
            return ParsedCommand(Command.FORGET, target) if target else ParsedCommand(Command.LIST)
        if _REMEMBER.search(text) or is_self_statement(text):
            return ParsedCommand(Command.REMEMBER)
        if is_self_question(text):
            return ParsedCommand(Command.ABOUT_ME)
        if _EXPLAIN.search(text):
            return ParsedCommand(Command.EXPLAIN)
        return ParsedCommand(Command.LIST)


def is_forget_request(message: str) -> bool:
    """Extraction must not store "忘掉我在上海工作" as "我在上海工作"."""
    return MemoryCommandParser().run(message=message).command in (Command.FORGET, Command.FORGET_ALL)


PAGE_ZH = "可以在“我的记忆”页面查看、修改或删除。"
PAGE_EN = "You can review, edit or delete them on the “My memories” page."
NOTHING_TO_REMEMBER_ZH = "我没有从这句话里找到关于你本人的、可以记住的信息。可以这样说：“记住我更喜欢简洁的回答”。"
NOT_TOLD_ZH = "你还没有告诉过我这方面的情况，知识库里的文档也不会记录你本人的信息。可以直接告诉我，例如“我在上海工作”。"
NOT_TOLD_EN = ("You haven't told me about that, and the documents hold nothing about you personally. You can tell "
               "me, e.g. \"I work in the Shanghai office\".")
FROM_WHAT_YOU_SAID_ZH = "这只来自你告诉过我的话，知识库的文档不记录你本人的信息。"
FROM_WHAT_YOU_SAID_EN = "This comes only from what you said; the documents hold nothing about you personally."
NOTHING_TO_REMEMBER_EN = "I found nothing about you to remember in that. Try: “Remember that I prefer short answers.”"
EXPLAIN_ZH = ("我只记住你明确说过的关于你自己的信息（偏好、背景、对回答的要求），不会记住文档内容或你的提问。"
              "回答问题时，我会取出与问题相关的记忆来调整回答；新的说法会取代旧的、矛盾的记忆。")
EXPLAIN_EN = ("I only remember what you said about yourself (preferences, background, how you want answers), "
              "never document content or your questions. When answering I use the memories relevant to the "
              "question, and a newer statement replaces an older one it contradicts.")


class MemoryScopeAnswerer:
    """Words the answer; `memories` are (type label, content, times used) of the user's active memories."""

    def __init__(self, *, max_listed: int = 20) -> None:
        if max_listed <= 0:
            raise ValueError("max_listed must be positive")
        self.max_listed = max_listed

    def run(self, *, message: str, command: ParsedCommand, memories: Sequence[tuple[str, str, int]] = (),
            forgotten: Sequence[str] = (), remembered: Sequence[str] = ()) -> str:
        zh = is_chinese(message)
        if command.command is Command.FORGET_ALL:
            return (f"好的，已忘掉关于你的全部 {len(forgotten)} 条记忆。" if zh else
                    f"Done: I forgot all {len(forgotten)} memories about you.") if forgotten else (
                "我目前没有关于你的记忆，无需清除。" if zh else "I had no memories about you to forget.")
        if command.command is Command.FORGET:
            if forgotten:
                items = "\n".join(f"- {m}" for m in forgotten)
                return (f"好的，已忘掉这条记忆：\n{items}" if zh else f"Done, I forgot:\n{items}")
            head = (f"我没有找到与“{command.target}”相符的记忆。" if zh else
                    f"I found no memory matching “{command.target}”.")
            return head + "\n\n" + self._list(memories, zh)
        if command.command is Command.REMEMBER:
            if remembered:
                items = "\n".join(f"- {m}" for m in remembered)
                return f"好的，我记住了：\n{items}\n\n{PAGE_ZH}" if zh else \
                    f"Got it, I'll remember:\n{items}\n\n{PAGE_EN}"
            return NOTHING_TO_REMEMBER_ZH if zh else NOTHING_TO_REMEMBER_EN
        if command.command is Command.ABOUT_ME:
            if not memories:
                return NOT_TOLD_ZH if zh else NOT_TOLD_EN
            items = "\n".join(f"- {content}" for _, content, _ in memories[: self.max_listed])
            return (f"我记得你说过（最相关的在前）：\n{items}\n\n{FROM_WHAT_YOU_SAID_ZH}{PAGE_ZH}" if zh else
                    f"What you told me (closest first):\n{items}\n\n{FROM_WHAT_YOU_SAID_EN} {PAGE_EN}")
        if command.command is Command.EXPLAIN:
            explain = EXPLAIN_ZH + PAGE_ZH if zh else f"{EXPLAIN_EN} {PAGE_EN}"
            return explain + "\n\n" + self._list(memories, zh)
        return self._list(memories, zh)

    def _list(self, memories: Sequence[tuple[str, str, int]], zh: bool) -> str:
        if not memories:
            return ("我目前还没有记住关于你的信息。你可以告诉我，例如“记住我更喜欢简洁的回答”。" if zh else
                    "I don't remember anything about you yet. You can tell me, e.g. \"Remember that I prefer "
                    "short answers.\"")
        shown = memories[: self.max_listed]
        head = f"我记得关于你的这些信息（共 {len(memories)} 条）：" if zh else \
            f"Here is what I remember about you ({len(memories)}):"
        lines = [f"- [{label}] {content}" for label, content, _ in shown]
        if len(memories) > len(shown):
            lines.append(f"……另有 {len(memories) - len(shown)} 条" if zh else f"…and {len(memories) - len(shown)} more")
        tail = ("\n\n如有不对，可以说“忘掉……这条”，或在“我的记忆”页面修改或删除。" if zh else
                "\n\nIf something is wrong, say “forget …”, or edit it on the “My memories” page.")
        return head + "\n" + "\n".join(lines) + tail
