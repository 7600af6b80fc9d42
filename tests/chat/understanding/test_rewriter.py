"""ConversationRewriter: follow-ups made standalone from the last turn (pronouns, ordinals, ellipsis)."""
from __future__ import annotations

import pytest

from chat.types import ConversationContext, PreviousTurn, SourceRef
from chat.understanding.rewriter import ConversationRewriter, answer_items, resolve_ordinal

MANUAL = "支付失败排查手册"
SECTIONS = ("适用范围", "一、支付超时", "二、扣款成功但订单未更新（扣款无回调）", "三、重复扣款")
LIST_ANSWER = ("以下内容摘自知识库（离线抽取模式）：\n\n- 支付请求默认超时时间为 30 秒。[1]\n"
               "- 渠道扣款成功后会向我们的回调地址推送通知。[1]\n- 同一订单号出现两笔成功流水时会标记为重复支付。[1]")


def _context(question="支付失败排查手册里列了哪几类问题？", answer="本手册用于排查支付失败等问题。[1]",
             sources=(SourceRef(1, MANUAL),), sections=SECTIONS) -> ConversationContext:
    return ConversationContext(previous=PreviousTurn(question=question, rewritten=question, answer=answer,
                                                     sources=sources, sections=sections))


def rewrite(message: str, context: ConversationContext | None = None):
    return ConversationRewriter().run(message=message, context=context or _context())


def test_a_chinese_ordinal_picks_the_section_that_numbers_itself():
    result = rewrite("第二类怎么处理？")
    assert "扣款成功但订单未更新" in result.text and MANUAL in result.text
    assert "第二类" not in result.text and result.resolved


def test_an_ordinal_prefers_the_items_of_the_previous_answer():
    result = rewrite("What does the second one mean?", _context(answer=LIST_ANSWER))
    assert "渠道扣款成功后会向我们的回调地址推送通知" in result.text
    assert "second one" not in result.text


def test_the_last_one_and_chinese_step_ordinals_resolve():
    assert "重复支付" in rewrite("最后一个呢？", _context(answer=LIST_ANSWER)).text
    assert "支付请求默认超时时间" in rewrite("上面说的第一步是什么意思", _context(answer=LIST_ANSWER)).text


def test_a_summary_of_the_second_item_keeps_the_verb():
    result = rewrite("总结一下第二个", _context(answer=LIST_ANSWER))
    assert result.text.startswith(MANUAL) and "总结一下" in result.text and "回调地址" in result.text


@pytest.mark.parametrize("message,expected", [
    ("它的面积有多大？", "乍都节公园的面积有多大？"),
    ("What is its area?", "What is 乍都节公园's area?"),
])
def test_a_pronoun_becomes_the_subject_the_last_answer_cited(message, expected):
    context = _context(question="乍都节公园位于什么地方？", sources=(SourceRef(7, "乍都节公园"),), sections=())
    assert rewrite(message, context).text == expected


def test_ellipsis_asks_the_last_question_about_the_new_thing():
    context = _context(question="乍都节公园位于什么地方？", sources=(SourceRef(7, "乍都节公园"),), sections=())
    assert rewrite("那火车公园呢？", context).text == "火车公园 位于什么地方？"


def test_ellipsis_replaces_the_noun_the_last_question_opened_with():
    context = _context(question="健身房周末几点开门？", answer="周六、周日：8:00—21:00。[1]",
                       sources=(SourceRef(7, "会员章程"),), sections=())
    assert rewrite("游泳池呢？", context).text == "游泳池周末几点开门？"


def test_a_short_follow_up_without_a_subject_gets_the_last_subject():
    result = rewrite("需要升级给谁？")
    assert result.text == f"{MANUAL} 需要升级给谁？" and result.leans_back


def test_a_standalone_question_is_left_alone():
    result = rewrite("数据库连接池耗尽时应该先检查哪些指标？")
    assert result.text == "数据库连接池耗尽时应该先检查哪些指标？" and not result.resolved


def test_without_a_conversation_a_reference_is_flagged_but_unchanged():
    result = ConversationRewriter().run(message="它多少钱？", context=ConversationContext())
    assert result.text == "它多少钱？" and result.leans_back and not result.resolved


def test_with_nothing_cited_the_last_question_describes_it():
    context = _context(question="Tell me about Redis", sources=(), sections=())
    assert "Redis" in rewrite("what about it?", context).text


def test_answer_items_strip_markers_and_citations():
    assert answer_items("lead:\n\n1. first step [1]\n2) second step[2]\n- third：") == \
        ["first step", "second step", "third"]


def test_an_ordinal_beyond_what_was_listed_resolves_to_nothing():
    previous = _context(answer=LIST_ANSWER, sections=()).previous
    assert resolve_ordinal(9, previous) == ""


def test_an_ordinal_with_its_own_noun_is_not_a_reference():
    result = rewrite("最后一个王公是谁？", _context(answer=LIST_ANSWER))
    assert result.text.endswith("最后一个王公是谁？") and "重复支付" not in result.text


VPN = "Remote Access (VPN) FAQ"
VPN_ANSWER = "- Error 809 means the network you are on blocks the VPN ports. Switch the client to TCP mode. [1]"


# A verbal noun as the question's topic (工资), a shortened word jieba cuts into single characters (餐补), and a
# verb that opens the question as its topic (退款, which jieba tags as a verb).
# An abbreviation jieba tags as one (社保) names its subject too, and so does the word after a leading date (诊所, also
# tagged as a verb) or after a lead-in word jieba glues to it (那后 / 厨: 后厨).
@pytest.mark.parametrize("message", ["Who is the CEO of the company?", "公司有健身房吗？", "工资几号发？",
                                     "餐补多少钱？", "退款多久到账？", "社保怎么交？", "2月15日诊所几点开诊？",
                                     "明天食堂几点开门？", "那后厨洗手要洗多少秒？"])
def test_a_short_question_that_names_a_new_subject_starts_afresh(message):
    context = _context(question="How do I fix VPN error 809?", answer=VPN_ANSWER, sources=(SourceRef(3, VPN),),
                       sections=())
    result = rewrite(message, context)
    assert result.text == message and not result.resolved


class _Dictionary:
    """The words a dictionary has, as `docmind.bilingual.Lexicon` gives them."""

    def __init__(self, *words: str) -> None:
        self.words = set(words)

    def english_for(self, word: str) -> tuple[str, ...]:
        return ("a gloss",) if word in self.words else ()

    def chinese_for(self, phrase: str) -> tuple[str, ...]:
        return ()


def test_a_short_question_opening_with_a_dictionary_word_jieba_cuts_into_characters_starts_afresh():
    # jieba cuts 年假 into 年 (a numeral) and 假 (an adjective): only the dictionary tells it names the topic.
    context = _context(question="How do I fix VPN error 809?", answer=VPN_ANSWER, sources=(SourceRef(3, VPN),),
                       sections=())
    assert rewrite("年假有几天？", context).text == f"{VPN} 年假有几天？"
    result = ConversationRewriter(lexicon=_Dictionary("年假")).run(message="年假有几天？", context=context)
    assert result.text == "年假有几天？" and not result.resolved


def test_a_question_opening_with_a_dictionary_word_jieba_glues_to_the_next_character_starts_afresh():
    # jieba cuts 年假能 into 年 and 假能: the dictionary still finds 年假 at the start.
    context = _context(question="租金多少一平？", answer="月租金为每平方米180元。[1]",
                       sources=(SourceRef(4, "租赁合同"),), sections=())
    result = ConversationRewriter(lexicon=_Dictionary("年假")).run(message="年假能留到明年吗？", context=context)
    assert result.text == "年假能留到明年吗？" and not result.resolved


def test_a_question_of_any_length_that_names_nothing_leans_on_the_last_subject():
    # 小时 is the unit of the count asked, not a thing the question names
    context = _context(question="会议室能提前多久订？", answer="会议室最多可提前14天预订，单次预订不超过4小时。[1]",
                       sources=(SourceRef(5, "行政常见问题"),), sections=())
    # the document that answered, and what in it the last question asked about
    assert rewrite("一次最多订几个小时？", context).text == "行政常见问题 会议室 一次最多订几个小时？"
    # one that names something the last turn never mentioned starts afresh, however long
    assert rewrite("一次最多能订几个停车位？", context).text == "一次最多能订几个停车位？"


def test_a_short_question_opening_with_characters_the_dictionary_lacks_still_leans_back():
    context = _context(question="How do I fix VPN error 809?", answer=VPN_ANSWER, sources=(SourceRef(3, VPN),),
                       sections=())
    result = ConversationRewriter(lexicon=_Dictionary("年假")).run(message="要等多久？", context=context)
    assert result.text == f"{VPN} 要等多久？"


def test_a_short_question_about_the_same_subject_asks_the_last_question_about_it():
    context = _context(question="How do I fix VPN error 809?", answer=VPN_ANSWER, sources=(SourceRef(3, VPN),),
                       sections=())
    assert rewrite("And error 691?", context).text == "How do I fix VPN error 691?"


def test_a_chain_of_ellipses_replaces_the_focus_instead_of_piling_up():
    leave = (SourceRef(1, "员工休假管理办法"),)
    first = rewrite("那婚假呢？", _context(question="年假有几天？", sources=leave, sections=()))
    assert first.text == "婚假有几天？"
    context = ConversationContext(previous=PreviousTurn(question="那婚假呢？", rewritten=first.text,
                                                        answer="婚假10天 [1]", sources=leave))
    assert rewrite("产假呢？", context).text == "产假有几天？"


def test_an_ellipsis_naming_another_code_replaces_the_code_asked_about():
    context = _context(question="AC-300的E2是什么意思？", sources=(SourceRef(2, "AC-300 Air Purifier User Manual"),),
                       sections=())
    assert rewrite("E4呢？", context).text == "AC-300的E4是什么意思？"


def test_a_pronoun_after_a_question_naming_one_code_becomes_that_code_and_nothing_more():
    context = _context(question="AC-500什么时候上市？", sources=(SourceRef(4, "AC Series Specification Sheet"),),
                       sections=())
    result = rewrite("它卖多少钱？", context)
    # The code says what "it" is; the cited document's title (often a file name) would only add words to match.
    assert result.text == "AC-500卖多少钱？"
    assert result.resolved == ("它 → AC-500",)


def test_a_pronoun_after_a_question_naming_several_codes_becomes_the_cited_document():
    context = _context(question="AC-300的E2是什么意思？", sources=(SourceRef(2, "AC-300 Air Purifier User Manual"),),
                       sections=())
    assert rewrite("它怎么解决？", context).text == "AC-300 Air Purifier User Manual怎么解决？"


# An everyday verb that opens a question is how it is put, and a question's only verb is the action asked about:
# neither is a new topic.
@pytest.mark.parametrize("message", ["需要多久？", "知道怎么办吗？", "搬到哪几层？"])
def test_a_short_question_opening_with_an_everyday_verb_still_leans_back(message):
    context = _context(question="How do I fix VPN error 809?", answer=VPN_ANSWER, sources=(SourceRef(3, VPN),),
                       sections=())
    assert rewrite(message, context).text == f"{VPN} {message}"


def test_a_pronoun_jieba_glues_to_the_modal_after_it_is_still_a_pronoun():
    context = _context(question="数据库连接池耗尽怎么处理？", sources=(SourceRef(2, "数据库连接池耗尽"),), sections=())
    result = rewrite("它会影响哪些服务？", context)
    assert result.text == "数据库连接池耗尽会影响哪些服务？"
    assert result.resolved == ("它 → 数据库连接池耗尽",)


def test_a_pronoun_led_question_whose_verb_jieba_cuts_into_characters_still_leans_back():
    context = _context(question="魏舒是哪国人？", sources=(SourceRef(5, "魏舒"),), sections=())
    assert rewrite("它史称什么？", context).text.startswith("魏舒")


def test_a_chain_of_pronoun_follow_ups_with_nothing_cited_does_not_pile_up():
    first = "X100 和 X200 的额定功率是多少？"
    second = rewrite("它的保修期呢？", _context(question=first, sources=(), sections=()))
    assert second.text == f"{first} 它的保修期呢？"
    context = ConversationContext(previous=PreviousTurn(question="它的保修期呢？", rewritten=second.text, answer="",
                                                        sources=()))
    assert rewrite("它的滤芯多久换？", context).text == f"{first} 它的滤芯多久换？"


def test_a_short_follow_up_leans_on_the_code_the_last_question_named_rather_than_the_cited_document():
    context = _context(question="AC-300什么时候发布？", answer="The AC-300 goes on sale on 20 November. [1]",
                       sources=(SourceRef(4, "AC Series Specification Sheet"),), sections=())
    assert rewrite("多少钱？", context).text == "AC-300 多少钱？"


def test_a_chain_of_short_follow_ups_keeps_the_code_its_first_question_named():
    context = ConversationContext(previous=PreviousTurn(
        question="定价多少？", rewritten="AC-300 定价多少？", answer="AC-300首发定价为1999元。[1]",
        sources=(SourceRef(4, "AC Series Specification Sheet"),)))
    assert rewrite("为什么推迟？", context).text == "AC-300 为什么推迟？"


def test_a_personal_pronoun_after_a_question_naming_a_person_becomes_that_person():
    context = _context(question="儿科陈晓燕什么时候出诊？", answer="陈晓燕主任医师：周二上午、周六上午。[1]",
                       sources=(SourceRef(2, "门诊就诊须知"),), sections=())
    result = rewrite("挂她的号多少钱？", context)
    assert result.text == "挂陈晓燕的号多少钱？" and result.resolved == ("她 → 陈晓燕",)
    # 它 still means the subject the answer cited.
    assert rewrite("它几点开门？", context).text == "门诊就诊须知几点开门？"


@pytest.mark.parametrize("question,message,expected", [
    ("What is the hotel limit in Beijing?", "And in other cities?", "What is the hotel limit in other cities?"),
    ("What is the meal allowance for domestic trips?", "And for international trips?",
     "What is the meal allowance for international trips?"),
    ("How many days of annual leave do I get?", "And sick leave?", "How many days of sick leave do I get?"),
    ("What is the warranty of the AC-300?", "What about the AC-500?", "What is the warranty of the AC-500?"),
])
def test_an_english_fragment_after_and_asks_the_last_question_with_its_phrase_changed(question, message, expected):
    context = _context(question=question, sources=(), sections=())
    assert rewrite(message, context).text == expected


@pytest.mark.parametrize("message", ["And is there a warranty?", "And what if the light stays red?",
                                     "And then I restart the router and wait?"])
def test_an_english_question_after_and_with_a_verb_of_its_own_is_no_fragment(message):
    result = rewrite(message, _context(question="How do I reset the router?", sources=(), sections=()))
    assert result.text == message and not result.resolved


LEAVE = "员工请假管理办法"


def test_a_follow_up_naming_nothing_keeps_what_the_last_question_asked_about_beside_the_document():
    context = _context(question="病假有几天？", sources=(SourceRef(7, LEAVE),), sections=(),
                       answer="员工患病的，每年累计病假12天。超过部分按本人基本工资的60%发放。[1]")
    result = rewrite("超过了怎么办？", context)
    assert result.text == f"{LEAVE} 病假 超过了怎么办？" and result.leans_back


def test_a_question_naming_a_thing_of_the_same_kind_as_the_last_topic_stands_alone():
    context = _context(question="病假有几天？", answer="员工患病的，每年累计病假12天；婚假10天。[1]",
                       sources=(SourceRef(7, LEAVE),), sections=())
    result = rewrite("婚假有几天？", context)
    assert result.text == "婚假有几天？" and not result.resolved and not result.leans_back


@pytest.mark.parametrize(("question", "follow_up", "expected"), [
    ("How long is the trial period for a mattress?", "And do I have to pay for it to be picked up?",
     "And do I have to pay for mattress to be picked up?"),
    ("How do I reset the router?", "Does it keep my settings?", "Does router keep my settings?"),
])
def test_an_english_it_stands_for_the_thing_the_last_question_named_not_the_document(question, follow_up, expected):
    context = _context(question=question, answer="- Returns are free. [1]", sources=(SourceRef(1, "returns-faq"),),
                       sections=())
    assert rewrite(follow_up, context).text == expected


def test_an_english_it_after_a_question_naming_nothing_stands_for_the_document():
    context = _context(question="Who approves expenses?", answer="- Your manager. [1]",
                       sources=(SourceRef(1, "Expense policy"),), sections=())
    assert rewrite("Can it be done online?", context).text == "Can Expense policy be done online?"
