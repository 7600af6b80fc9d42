"""Budget primitives of the prompt layer: fitHead / fitTail / per-item fitting, none of which leak at <= 0."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docmind.tokens import estimate_tokens, pack_greedily, truncate_to_tokens


def fit_head(text: str, budget: int, *, code_like: bool = False) -> str:
    """The head of `text` within `budget`; empty when budget <= 0 (a spent budget must not let text through)."""
    if budget <= 0:
        return ""
    return truncate_to_tokens(text, budget, code_like=code_like, keep="head")


def fit_tail(text: str, budget: int, *, code_like: bool = False) -> str:
    if budget <= 0:
        return ""
    return truncate_to_tokens(text, budget, code_like=code_like, keep="tail")


@dataclass(frozen=True)
class FittedItems:
    kept: tuple[str, ...]
    dropped: int
    tokens: int


def fit_items(items: Sequence[str], budget: int, *, code_like: bool = True, separator: str = "\n\n") -> FittedItems:
    """Whole items in order while they fit; an item that does not fit is dropped, never cut (a code block
    cut in half misleads more than a missing one). Later, shorter items may still fit."""
    sep_cost = estimate_tokens(separator, code_like=code_like)
    kept, used = pack_greedily(items, budget,
                               lambda item, n: estimate_tokens(item, code_like=code_like) + (sep_cost if n else 0))
    return FittedItems(kept=tuple(kept), dropped=len(items) - len(kept), tokens=used)


def block_cost(header: str, body: str, *, code_like: bool = False) -> int:
    """Tokens of a titled block: the header is charged to the stream that owns the block."""
    return estimate_tokens(header) + estimate_tokens(body, code_like=code_like)
