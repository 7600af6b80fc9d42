"""MEMORY-scope messages: what they ask, and how the answer is worded."""
from __future__ import annotations

import pytest

from memory.commands import Command, MemoryCommandParser, MemoryScopeAnswerer, ParsedCommand, is_forget_request


@pytest.mark.parametrize(("message", "command", "target"), [
    ("你记得我什么？", Command.LIST, ""),
    ("忘掉我在上海工作这条", Command.FORGET, "我在上海工作"),
    ("忘记我对花生过敏这件事吧", Command.FORGET, "我对花生过敏"),
    ("forget that I work at Acme", Command.FORGET, "I work at Acme"),
    ("忘掉我的所有记忆", Command.FORGET_ALL, ""),
    ("forget everything", Command.FORGET_ALL, ""),
    ("记住我更喜欢简洁的回答", Command.REMEMBER, ""),
    ("你为什么会记得这些？", Command.EXPLAIN, ""),
    ("How do you remember things about me?", Command.EXPLAIN, ""),
    ("我在哪里工作？", Command.ABOUT_ME, ""),
    ("What's my name?", Command.ABOUT_ME, ""), ("我在哪裡工作？", Command.ABOUT_ME, ""),
])
def test_memory_messages_are_parsed(message, command, target):
    assert MemoryCommandParser().run(message=message) == ParsedCommand(command, target)


def test_forget_requests_are_recognised_for_extraction_to_skip():
    assert is_forget_request("忘掉我在上海工作这条") and not is_forget_request("我在上海工作")


def test_explain_says_what_is_remembered_and_lists_it():
    answer = MemoryScopeAnswerer().run(message="你为什么会记得这些？", command=ParsedCommand(Command.EXPLAIN),
                                       memories=[("画像", "我在上海工作", 3)])
    assert "只记住你明确说过" in answer and "- [画像] 我在上海工作" in answer


def test_a_forget_that_matched_nothing_says_so_and_lists_what_there_is():
    answer = MemoryScopeAnswerer().run(message="forget that I own a boat",
                                       command=ParsedCommand(Command.FORGET, "I own a boat"),
                                       memories=[("fact", "I am allergic to peanuts", 0)])
    assert "no memory matching “I own a boat”" in answer and "I am allergic to peanuts" in answer


def test_the_list_is_capped_and_says_how_many_more():
    memories = [("事实", f"事实{i}", 0) for i in range(25)]
    answer = MemoryScopeAnswerer(max_listed=20).run(message="你记得我什么", command=ParsedCommand(Command.LIST),
                                                    memories=memories)
    assert "共 25 条" in answer and "另有 5 条" in answer


@pytest.mark.parametrize("message", ["我在上海工作", "以后请用英文回答我", "I work in the Shenzhen office",
                                     "Please answer in Chinese from now on", "我入职三年了"])
def test_a_statement_about_oneself_is_a_remember_command(message):
    from memory.commands import is_self_statement

    assert is_self_statement(message)
    assert MemoryCommandParser().run(message=message).command is Command.REMEMBER


# 我国 / 我司 name an institution ("our country", "our company"): a question typed without its question mark.
@pytest.mark.parametrize("message", ["我入职三年了，年假有几天？", "我的工牌丢了", "我想知道年假", "My card was stolen",
                                     "What is my leave balance", "我的电脑坏了怎么办", "我国2021年人口出生率",
                                     "我司2024年营收"])
def test_a_question_or_a_stated_problem_is_not_a_statement(message):
    from memory.commands import is_self_statement

    assert not is_self_statement(message)


@pytest.mark.parametrize("message", ["我在哪里工作？", "我叫什么名字", "我是哪个部门的？", "那我住哪？",
                                     "我是做什么工作的？", "我是干什么的？",
                                     "我在哪个办公室上班？", "我在哪个分公司？", "我在哪个项目组？",
                                     "Where do I work?", "What's my name?", "Which team am I on?",
                                     "Which office am I in?"])
def test_a_question_about_the_asker_themselves_is_asked_of_memory(message):
    from memory.commands import is_self_question

    assert is_self_question(message)


# Questions about what applies to the asker name something else: the documents answer them.
@pytest.mark.parametrize("message", ["我在试用期能请年假吗？", "我在哪里可以报销？", "我的年假有几天？",
                                     "What is my leave balance?", "Where do I work from when I'm remote?",
                                     "我在上海工作", "我做什么工作可以远程？", "我在哪个办公室可以领工牌？"])
def test_a_question_about_what_applies_to_the_asker_is_not_about_themselves(message):
    from memory.commands import is_self_question

    assert not is_self_question(message)


def test_a_question_about_oneself_is_answered_with_the_memories_given_and_never_with_the_documents():
    about_me = ParsedCommand(Command.ABOUT_ME)
    answer = MemoryScopeAnswerer().run(message="我在哪里工作？", command=about_me,
                                       memories=[("画像", "我在上海工作", 0)])
    assert "- 我在上海工作" in answer and "我记得你说过" in answer
    nothing = MemoryScopeAnswerer().run(message="Where do I work?", command=about_me, memories=[])
    assert "You haven't told me" in nothing
