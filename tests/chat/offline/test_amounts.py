"""Amounts a question names and the ranges a text states: which of a policy's brackets holds the asked case."""
from __future__ import annotations

import math

import pytest

from chat.offline.amounts import Range, amounts, holds, ranges


@pytest.mark.parametrize("question,value,unit", [
    ("一万块的报销要谁批？", 10_000, "money"),
    ("Who approves an expense of 10,000 yuan?", 10_000, "money"),
    ("报销1.5万元要谁批", 15_000, "money"),
    ("工作十二年年假几天", 12, "years"),
    ("请三个工作日的假要谁批", 3, "days"),
])
def test_an_amount_is_read_with_its_unit_in_either_language_and_numeral(question, value, unit):
    assert [(a.value, a.unit) for a in amounts(question)] == [(value, unit)]


def test_a_bare_number_is_no_amount():
    assert amounts("第3条写了什么？") == [] and amounts("What does error E2 mean?") == []


@pytest.mark.parametrize("text,expected", [
    ("单笔5000元以下：部门经理审批。", Range(-math.inf, 5000, "money")),
    ("单笔5000元至20000元：部门经理和财务总监审批。", Range(5000, 20000, "money")),
    ("单笔20000元以上：另须首席执行官审批。", Range(20000, math.inf, "money")),
    ("办公用品单笔超过500元的，须先走采购流程。", Range(500, math.inf, "money")),
    ("业务招待餐费每人每次不超过200元。", Range(-math.inf, 200, "money")),
    ("累计工作满1年不满10年的员工，年休假为每年5天。", Range(1, 10, "years")),
    ("Refunds take 3 to 5 days.", Range(3, 5, "days")),
    ("Expenses under 5,000 CNY need the manager's approval only.", Range(-math.inf, 5000, "money")),
])
def test_a_range_is_read_from_its_bound_words_or_its_span(text, expected):
    assert expected in ranges(text)


def test_a_plain_amount_states_no_range():
    assert ranges("员工生日当月可领取500元生日礼金。") == []


def test_only_the_bracket_holding_the_asked_amount_in_the_same_unit_holds_it():
    asked = amounts("一万块的报销要谁批？")
    assert holds(asked, "单笔5000元至20000元：部门经理和财务总监审批。")
    assert not holds(asked, "单笔5000元以下：部门经理审批。")
    assert not holds(asked, "单笔20000元以上：另须首席执行官审批。")
    assert not holds(asked, "连续请假5000天以上的须另行审批。")  # another unit
    assert not holds(amounts("报销要谁批？"), "单笔5000元至20000元：部门经理和财务总监审批。")
