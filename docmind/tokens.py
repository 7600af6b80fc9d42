"""Conservative token estimator: an under-estimate lets a prompt overflow its budget, so round up. CJK-aware."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

# Rough upper bounds on characters per token for the model families DocMind talks to.
CJK_CHARS_PER_TOKEN = 1.0
LATIN_CHARS_PER_TOKEN = 3.5
CODE_LATIN_CHARS_PER_TOKEN = 2.5

_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimate_tokens(text: str, *, code_like: bool = False) -> int:
    """Tokens `text` will take at most, roughly: CJK one each, everything else (whitespace too)
    at 3.5 characters a token, or 2.5 for code-like text such as sandbox output."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    other = len(text) - cjk
    per = CODE_LATIN_CHARS_PER_TOKEN if code_like else LATIN_CHARS_PER_TOKEN
    return cjk + math.ceil(other / per)


def truncate_to_tokens(text: str, budget: int, *, code_like: bool = False, keep: str = "head") -> str:
    """The longest head (or tail) of `text` within `budget` tokens; empty when budget <= 0."""
    if budget <= 0 or not text:
        return ""
    if estimate_tokens(text, code_like=code_like) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the cut point
        mid = (lo + hi + 1) // 2
        piece = text[:mid] if keep == "head" else text[len(text) - mid:]
        if estimate_tokens(piece, code_like=code_like) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] if keep == "head" else text[len(text) - lo:]


def pack_greedily[T](items: Iterable[T], budget: int, cost: Callable[[T, int], int]) -> tuple[list[T], int]:
    """Items in order while they fit in `budget` tokens, and the tokens they take.

    An item that does not fit is skipped, not a reason to stop: a shorter, later one may still fit; items
    are never cut. `cost(item, kept)` is told how many items are already in, for costs that depend on it
    (a separator before every item but the first, a block numbered by its place). Nothing fits a budget <= 0.
    """
    kept: list[T] = []
    used = 0
    if budget <= 0:
        return kept, used
    for item in items:
        item_cost = cost(item, len(kept))
        if used + item_cost <= budget:
            kept.append(item)
            used += item_cost
    return kept, used
