"""comparison_sides: the compared things of a question, each with the aspect they are compared on."""
import pytest

from chat.understanding.comparison import comparison_sides


@pytest.mark.parametrize(("question", "sides"), [
    ("What is the difference between TCP and UDP", ("TCP", "UDP")),
    ("Compare Redis and Memcached", ("Redis", "Memcached")),
    ("Compare Redis and Memcached for caching", ("Redis", "Memcached for caching")),
    ("支付超时和重复扣款有什么区别？", ("支付超时", "重复扣款")),
    ("今天天气怎么样？", ()),
])
def test_the_sides_are_the_things_named_around_the_joining_word(question, sides):
    assert comparison_sides(question) == sides


@pytest.mark.parametrize(("question", "sides"), [
    ("What is the difference in response time between P1 and P2?", ("P1 response time", "P2 response time")),
    ("Compare the warranty of the X100 and the X200", ("X100 warranty", "X200 warranty")),
    ("What's the difference between the return window for regular customers and Plus members?",
     ("regular customers return window", "Plus members return window")),
    ("What is the difference between the price of the X100 and the X200?", ("X100 price", "X200 price")),
    ("X100 和 X200 的 RO 膜更换周期有什么区别？", ("X100 RO 膜更换周期", "X200 RO 膜更换周期")),
    ("年假和病假在工资上有什么不同？", ("年假 工资", "病假 工资")),
    ("How do the domestic and international per diems compare?",
     ("domestic per diems", "international per diems")),
    ("What is the difference between annual and sick leave?", ("annual leave", "sick leave")),
    ("Compare full-time and part-time employees", ("full-time employees", "part-time employees")),
])
def test_an_aspect_named_apart_from_the_sides_goes_with_each_side(question, sides):
    assert comparison_sides(question) == sides


# How much of the difference is asked for ("main", "主要") and where it lies ("在哪", "在于") are not part of a side.
@pytest.mark.parametrize(("question", "sides"), [
    ("What are the main differences between the AC-200, AC-300 and AC-500?", ("AC-200", "AC-300", "AC-500")),
    ("What is the biggest difference between P1 and P2?", ("P1", "P2")),
    ("AC-200和AC-300的主要区别是什么？", ("AC-200", "AC-300")),
    ("X100和X200最大的不同是什么？", ("X100", "X200")),
    ("年假和病假的区别在哪？", ("年假", "病假")),
    ("年假与病假的区别在于什么", ("年假", "病假")),
    ("千兆尊享和千兆IPTV有啥区别", ("千兆尊享", "千兆IPTV")), ("A套餐和B套餐哪个划算？", ("A套餐", "B套餐")),
    ("年假和调休一样吗", ("年假", "调休")),
    ("What are the main differences between a disk alert and a connection pool exhaustion?",
     ("disk alert", "connection pool exhaustion")),
    ("Compare Plan A and Plan B", ("Plan A", "Plan B")),
])
def test_words_about_the_difference_itself_are_not_part_of_a_side(question, sides):
    assert comparison_sides(question) == sides


def test_sides_that_each_name_their_aspect_keep_it():
    assert comparison_sides("X100的功率和X200的功率有什么区别") == ("X100的功率", "X200的功率")
