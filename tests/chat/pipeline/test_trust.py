"""Trust: what the assessment is asked."""
from __future__ import annotations

from chat.pipeline import trust


def test_clauses_about_the_asker_are_left_out_of_the_assessed_question():
    assert trust.assessed_question("我刚调到深圳分公司，年假有多少天？") == "年假有多少天？"
    assert trust.assessed_question("根据我的情况，年假有多少天？") == "年假有多少天？"
    assert (trust.assessed_question("I work in Shanghai, how many days of leave do I get?")
            == "how many days of leave do I get?")


def test_a_question_that_is_all_about_the_asker_or_not_at_all_is_kept_whole():
    assert trust.assessed_question("我能请几天年假？") == "我能请几天年假？"
    assert trust.assessed_question("退款多久到账？") == "退款多久到账？"
