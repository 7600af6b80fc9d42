"""The sides of a comparison question ("A 和 B 有什么区别？", "compare A and B") for a per-side answer."""
from __future__ import annotations

import re

_ZH_NOISE = re.compile(r"请|帮我|一下|对比|比较|区别|不同|差异|异同|相比|有什么|有何|有哪些|哪个更\S*|哪一个更\S*|"
                       r"是什么|之间|分别|各自|呢|吗|[？?。！!]")
_ZH_JOIN = re.compile(r"和|与|跟|同|及|以及|还是|vs\.?|versus|、|，|,", re.I)
_EN_NOISE = re.compile(r"\b(?:what(?:'s| is| are)?|the|differences?|different|between|compare[ds]?|comparison|of|"
                       r"how|does|do|is|are|differ|please|which|one|better)\b|[?.!]", re.I)
_EN_JOIN = re.compile(r"\s(?:and|with|to|vs\.?|versus|or|from)\s|,", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
MAX_SIDES = 4


def comparison_sides(question: str) -> tuple[str, ...]:
    """Two to four compared things, in the order asked; () when the question does not name them."""
    if _CJK.search(question):
        cleaned, joiner = _ZH_NOISE.sub(" ", question), _ZH_JOIN
    else:
        cleaned, joiner = _EN_NOISE.sub(" ", question), _EN_JOIN
    sides = []
    for piece in joiner.split(cleaned):
        side = re.sub(r"\s+", " ", piece).strip(" 的")
        if len(side) >= 2 and side not in sides:
            sides.append(side)
    return tuple(sides[:MAX_SIDES]) if len(sides) >= 2 else ()
