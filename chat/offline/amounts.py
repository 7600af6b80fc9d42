"""Amounts a question names and the ranges a policy states: "一万块的报销要谁批？" is answered by
"单笔5000元至20000元：…财务总监审批", the one bracket of a list of thresholds that holds 10,000 yuan, and which
shares no word with the question.

Rules, fees and approvals are written as brackets ("5000元以下", "超过500元的", "under 5,000 CNY", "3 to 10 days"); a
question about a case names its amount instead. Chinese numerals are read with cn2an ("一万" → 10000); an amount
counts only against a range in the same unit (money, days, hours…), never a bare number against any range.
"""
from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cn2an

# The unit words, by what they measure: a question's 块 is a range's 元, its "yuan" a range's CNY.
_UNITS = {
    "money": r"元|块钱|块|人民币|yuan|cny|rmb",
    "days": r"个工作日|工作日|天|日|days?|working days?|business days?",
    "hours": r"个小时|小时|钟头|hours?",
    "minutes": r"分钟|minutes?",
    "months": r"个月|months?",
    "years": r"年|years?",
    "people": r"人|名|位|people|persons?|employees?",
}
_UNIT = "|".join(f"(?P<{name}>{words})" for name, words in _UNITS.items())
# A number as a policy writes it once Chinese numerals are digits: 5000, 5,000, 1.5; 万/千 multiply.
_NUMBER = r"(?P<n>\d+(?:,\d{3})*(?:\.\d+)?)\s*(?P<scale>万|千|k\b)?"
_AMOUNT = re.compile(rf"{_NUMBER}\s*(?:{_UNIT})", re.IGNORECASE)
_SCALES = {"万": 10_000, "千": 1_000, "k": 1_000}
# Bounds around an amount: below or up to it, above or from it.
_UPPER_BEFORE = re.compile(r"(?:不超过|不高于|不多于|低于|少于|小于|未满|不满|不足|不到|最多|至多|"
                           r"\bup to|\bunder|\bbelow|\bless than|\bno more than|\bat most|\bnot exceeding)\s*$",
                           re.IGNORECASE)
_LOWER_BEFORE = re.compile(r"(?:超过|超出|高于|多于|大于|满|达到|不少于|至少|"
                           r"\bover|\babove|\bmore than|\bexceeding|\bat least|\bfrom)\s*$", re.IGNORECASE)
_UPPER_AFTER = re.compile(r"^\s*(?:以下|以内|之内|及以下|或以下|\bor less\b|\band below\b|\bor under\b)", re.IGNORECASE)
_LOWER_AFTER = re.compile(r"^\s*(?:以上|及以上|或以上|起|\bor more\b|\band above\b|\bor over\b)", re.IGNORECASE)
# The first number of a span, right before the amount that ends it: "5000元至" (its unit is the amount's), "3 to".
_SPAN_START = re.compile(rf"{_NUMBER}\s*(?:{'|'.join(_UNITS.values())})?\s*(?:至|到|~|～|-|–|—|－|\bto\b)\s*$",
                         re.IGNORECASE)
# How much of the text before an amount is read for the bound word or span start that ends right before it: enough
# for the longest of them ("not exceeding ", "20,000 yuan to ").
_LOOK_BACK = 24


@dataclass(frozen=True)
class Amount:
    value: float
    unit: str
    start: int
    end: int


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    unit: str

    def holds(self, amount: Amount) -> bool:
        return amount.unit == self.unit and self.low <= amount.value <= self.high


@lru_cache(maxsize=4096)  # a question is read against every sentence of its evidence
def _digits(text: str) -> str:
    """`text` with its Chinese numerals written in digits ("一万块" → "10000块"); unchanged when it has none."""
    if not re.search(r"[零〇一二两三四五六七八九十百千万亿]", text):
        return text
    with warnings.catch_warnings():  # cn2an warns about a numeral it leaves as it was ("1.5万")
        warnings.simplefilter("ignore")
        try:
            return cn2an.transform(text, "cn2an")
        except Exception:  # noqa: BLE001 - a numeral cn2an cannot read leaves the text as written, never the answer
            return text


def amounts(text: str) -> list[Amount]:
    """Every number with a unit in `text` (Chinese numerals included), in order."""
    found = []
    for match in _AMOUNT.finditer(_digits(text)):
        value = float(match.group("n").replace(",", "")) * _SCALES.get((match.group("scale") or "").lower(), 1)
        unit = next(name for name in _UNITS if match.group(name))
        found.append(Amount(value, unit, match.start(), match.end()))
    return found


def ranges(text: str) -> list[Range]:
    """The ranges `text` states: an amount with a bound word before or after it ("不超过200元", "5000元以下"), or a
    span ending in one ("5000元至20000元", "3 to 5 days", whose first number takes the second's unit)."""
    written = _digits(text)
    out = []
    for amount in amounts(written):
        before = written[max(0, amount.start - _LOOK_BACK):amount.start]
        rest = written[amount.end:]
        span = _SPAN_START.search(before)
        if span is not None:
            low = float(span.group("n").replace(",", "")) * _SCALES.get((span.group("scale") or "").lower(), 1)
            out.append(Range(min(low, amount.value), max(low, amount.value), amount.unit))
        elif _UPPER_BEFORE.search(before) or _UPPER_AFTER.match(rest):
            out.append(Range(-math.inf, amount.value, amount.unit))
        elif _LOWER_BEFORE.search(before) or _LOWER_AFTER.match(rest):
            out.append(Range(amount.value, math.inf, amount.unit))
    return _joined(out)


def _joined(found: list[Range]) -> list[Range]:
    """One text's lower and upper bound in the same unit are one range: "满1年不满10年" is [1, 10] years."""
    out = list(found)
    for unit in {r.unit for r in found}:
        lower = [r for r in found if r.unit == unit and r.high == math.inf and r.low > -math.inf]
        upper = [r for r in found if r.unit == unit and r.low == -math.inf and r.high < math.inf]
        if len(lower) == 1 and len(upper) == 1 and lower[0].low <= upper[0].high:
            out = [r for r in out if r not in (lower[0], upper[0])] + [Range(lower[0].low, upper[0].high, unit)]
    return out


def holds(asked: Sequence[Amount], text: str) -> bool:
    """Whether `text` states a range that holds one of the `asked` amounts, in the same unit."""
    return bool(asked) and any(r.holds(a) for r in ranges(text) for a in asked)
