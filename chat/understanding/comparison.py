"""The sides of a comparison question ("A 和 B 有什么区别？", "compare A and B") for a per-side answer."""
from __future__ import annotations

import re

# Words that ask for the comparison or say how much of it ("主要区别", "the main differences"), not what is compared,
# colloquial ones included ("有啥区别", "哪个划算", "一样吗").
_ZH_NOISE = re.compile(r"请|帮我|一下|对比|比较|区别|不同|不一样|一样吗|差异|异同|相比|有什么|有何|有哪些|有啥|啥|"
                       r"哪个更\S*|哪一个更\S*|哪个(?:好|划算|便宜|贵|值)|"
                       r"是什么|之间|分别|各自|(?:的)?(?:主要|最大|核心|关键|根本|具体)(?:的)?(?=区别|不同|差异|异同)|"
                       r"在哪里|在哪儿|在哪|在于(?:什么)?|呢|吗|[？?。！!]")
_ZH_JOIN = re.compile(r"和|与|跟|同|及|以及|还是|vs\.?|versus|、|，|,", re.I)
_EN_NOISE = re.compile(r"\b(?:what(?:'s| is| are)?|the|differences?|different|between|compare[ds]?|comparison|of|"
                       r"how|does|do|is|are|differ|please|which|one|better|main|key|major|biggest|big|primary|"
                       r"important|real)\b|[?.!]", re.I)
_EN_JOIN = re.compile(r"\s(?:and|with|to|vs\.?|versus|or|from)\s|,", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ARTICLE = re.compile(r"^(?:a|an)\s+(?=\S)", re.I)
# What the sides are compared on, when the question names it apart from them: "the difference in response time
# between P1 and P2", "compare the warranty of A and B", "the difference between the return window for A and B".
_EN_ASPECT = re.compile(r"\b(?:differences?|compare[ds]?|comparison)\s+(?:in\s+|of\s+|between\s+)?(?:the\s+)?"
                        r"(?P<aspect>.+?)\s+(?:between|of|for)\s+(?P<sides>.+)$", re.I)
# …and in Chinese, after the last side: "X100 和 X200 的 RO 膜更换周期", "A 和 B 在价格上".
_ZH_ASPECT = re.compile(r"^(?P<side>.+?)\s*(?:的(?P<of>.+)|在(?P<on>.+?)(?:上|方面))$")
MAX_SIDES = 4
# English words that qualify a noun named once after the last of them: "annual and sick leave", "full-time and
# part-time staff" (lower case: a capitalised word names a thing of its own, "Redis and Memcached for caching").
_QUALIFIER = re.compile(r"[a-z]+(?:-[a-z]+)*")
_QUALIFIED = re.compile(r"[a-z]+(?:-[a-z]+)* [a-z][\w-]*(?: [\w-]+){0,2}")


def comparison_sides(question: str) -> tuple[str, ...]:
    """Two to four compared things, in the order asked, each with the aspect they are compared on when the question
    names one ("P1 response time", "P2 response time"): each side's evidence is then chosen for that aspect, not for
    whatever else it says. () when the question does not name two things."""
    if _CJK.search(question):
        return _with_aspect(_split(_ZH_NOISE.sub(" ", question), _ZH_JOIN), "")
    found = _EN_ASPECT.search(question)
    if found:  # "compare A and B for caching" names no aspect before its sides: read it as if "for" were not there
        sides = _with_aspect(_split(_EN_NOISE.sub(" ", found.group("sides")), _EN_JOIN), found.group("aspect").strip())
        if sides:
            return sides
    return _with_aspect(_split(_EN_NOISE.sub(" ", question), _EN_JOIN), "")


def _split(cleaned: str, joiner: re.Pattern[str]) -> list[str]:
    sides: list[str] = []
    for piece in joiner.split(cleaned):
        # An article opens a side ("a disk alert"), never names it; "Plan A" keeps its letter.
        side = _ARTICLE.sub("", re.sub(r"\s+", " ", piece).strip(" 的"))
        if len(side) >= 2 and side not in sides:
            sides.append(side)
    return sides


def _with_aspect(sides: list[str], aspect: str) -> tuple[str, ...]:
    """The sides, each followed by the aspect; without one, the aspect the last side names for all ("X200 的 RO 膜",
    "domestic and international per diems": the noun after the last of words that each qualify it)."""
    if len(sides) >= 2 and not aspect:
        last = _ZH_ASPECT.match(sides[-1])
        if last and not any(_ZH_ASPECT.match(side) for side in sides[:-1]):
            aspect = (last.group("of") or last.group("on")).strip()
            sides = [*sides[:-1], last.group("side").strip()]
        elif all(_QUALIFIER.fullmatch(side) for side in sides[:-1]) and _QUALIFIED.fullmatch(sides[-1]):
            first, _, aspect = sides[-1].partition(" ")
            sides = [*sides[:-1], first]
    sides = sides[:MAX_SIDES]
    if len(sides) < 2:
        return ()
    return tuple(f"{side} {aspect}" if aspect else side for side in sides)
