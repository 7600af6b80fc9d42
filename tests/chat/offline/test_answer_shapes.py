"""The offline answer without padding, and shaped by the question: comparison, how-to steps, summary."""
from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from chat.offline.extractive import ExtractiveAnswerer, _shape_fit, _shapes
from chat.types import AnswerShape
from kb.retrieval.types import ScoredChunk


def chunk(cid: str, content: str, *, title: str = "支付失败排查手册", context: str = "", rerank: float = 0.8,
          document_id: int = 1) -> ScoredChunk:
    return ScoredChunk(chunk_id=cid, content=content, score=rerank, document_id=document_id, document_title=title,
                       context=context or title, stage_scores=MappingProxyType({"rerank": rerank}))


TIMEOUT = chunk("t", "## 一、支付超时\n支付请求默认超时时间为 30 秒。超过 30 秒未收到应答时，网关把订单置为支付中。",
                context="支付失败排查手册 › 一、支付超时")
CALLBACK = chunk("c", "## 二、扣款无回调\n排查步骤：\n1. 在回调日志中按订单号搜索，确认是否收到通知；\n"
                      "2. 若收到但处理失败，查看错误码；\n3. 若未收到，检查回调地址的 DNS 与防火墙白名单；",
                 context="支付失败排查手册 › 二、扣款无回调")
DUPLICATE = chunk("d", "## 三、重复扣款\n同一订单号出现两笔成功流水时，系统会在 T+1 日发起原路退款。",
                  context="支付失败排查手册 › 三、重复扣款")
TITLE_ONLY = chunk("x", "# 支付失败排查手册\n支付失败排查手册")
DISK = chunk("k", "磁盘使用率超过 90% 时会触发告警，值班工程师需要清理日志。", title="服务器磁盘告警处理",
             rerank=0.1, document_id=2)


def body_lines(answer: str) -> list[str]:
    return [line for line in answer.split("\n\n", 1)[1].splitlines() if line.strip()]


def test_headings_and_titles_are_never_quoted():
    answer = ExtractiveAnswerer().run(question="支付失败排查手册 支付超时多久", chunks=[TITLE_ONLY, TIMEOUT])
    assert "30 秒" in answer
    assert all("#" not in line and line.strip("- []0123456789") != "支付失败排查手册" for line in body_lines(answer))


def test_sentences_from_chunks_far_below_the_best_are_left_out():
    answer = ExtractiveAnswerer().run(question="支付超时 值班工程师 清理日志", chunks=[TIMEOUT, DISK])
    assert "磁盘" not in answer and "30 秒" in answer


def test_a_comparison_has_one_section_per_side_and_says_when_a_side_has_nothing():
    answer = ExtractiveAnswerer().run(question="支付超时和重复扣款有什么区别？", chunks=[TIMEOUT, DUPLICATE],
                                      shape=AnswerShape.COMPARISON, sides=("支付超时", "重复扣款"))
    timeout_part, duplicate_part = answer.split("**重复扣款**")
    assert "**支付超时**" in timeout_part and "30 秒" in timeout_part and "T+1" not in timeout_part
    assert "T+1" in duplicate_part and "[2]" in duplicate_part
    missing = ExtractiveAnswerer().run(question="支付超时和年假有什么区别？", chunks=[TIMEOUT],
                                       shape=AnswerShape.COMPARISON, sides=("支付超时", "年假"))
    assert "没有找到关于“年假”的内容" in missing


def test_a_sentence_stating_both_sides_in_clauses_of_their_own_gives_each_side_its_clause():
    homework = chunk("w", "## 五、家庭作业\n一、二年级不布置书面家庭作业。三、四年级书面作业每天完成时间不超过45分钟；"
                          "五、六年级每天不超过60分钟。", title="家长手册", context="家长手册 › 五、家庭作业")
    answer = ExtractiveAnswerer().run(question="三四年级和五六年级的作业时间有什么区别？", chunks=[homework],
                                      shape=AnswerShape.COMPARISON, sides=("三四年级 作业时间", "五六年级 作业时间"))
    first, second = answer.split("**五六年级 作业时间**")
    assert "45分钟" in first and "60分钟" not in first
    assert "五、六年级每天不超过60分钟。[1]" in second and "没有找到" not in second


def test_a_table_row_stating_both_sides_is_quoted_for_each():
    sheet = chunk("s", "| 编号 | 控制要求 |\n|---|---|\n| FS-06 | 食品中心温度≥70℃，禽肉类中心温度≥75℃ |",
                  title="后厨食品安全规范", context="后厨食品安全规范 › 操作规范")
    sides = ("禽肉 加热中心温度要求", "一般食品 加热中心温度要求")
    answer = ExtractiveAnswerer().run(question="禽肉和一般食品的加热中心温度要求有什么区别？", chunks=[sheet],
                                      shape=AnswerShape.COMPARISON, sides=sides)
    first, second = answer.split("**一般食品 加热中心温度要求**")
    assert "≥75℃" in first and "≥70℃" in second and "没有找到" not in answer


def test_how_to_lists_the_sources_steps_in_order_with_their_numbers():
    answer = ExtractiveAnswerer().run(question="扣款无回调怎么排查？", chunks=[TIMEOUT, CALLBACK],
                                      shape=AnswerShape.STEPS)
    lines = body_lines(answer)
    assert [line[:2] for line in lines] == ["1.", "2.", "3."]
    assert lines[0].startswith("1. 在回调日志中按订单号搜索") and lines[0].endswith("[2]")


PERFORMANCE = chunk("p", "绩效考核办法\n\n结果应用\n\n1. 年终奖系数：S级2.0，A级1.5，B级1.0。\n"
                         "2. 连续两次考核为C级的员工，进入绩效改进计划。\n\n申诉\n\n"
                         "员工对考核结果有异议的，可在结果公布后7天内向人力资源部提出书面申诉。",
                    title="绩效考核办法")


def test_how_to_quotes_the_clause_it_asks_about_rather_than_a_numbered_list_standing_nearby():
    answer = ExtractiveAnswerer().run(question="考评结果不满意怎么申诉？", chunks=[PERFORMANCE],
                                      shape=AnswerShape.STEPS)
    assert "7天内" in answer and "书面申诉" in answer
    assert "年终奖系数" not in answer
    # The list is still the answer when it is what the question asks about.
    listed = ExtractiveAnswerer().run(question="考核结果怎么应用？", chunks=[PERFORMANCE], shape=AnswerShape.STEPS)
    assert [line[:2] for line in body_lines(listed)] == ["1.", "2."]


# A numbered list that names the router in every item, about something else than resetting it.
SALES = chunk("s", "三季度销售\n1. R5路由器三季度销量4.1万台。\n2. 双十一期间R5路由器降价100元。", title="销售例会纪要",
              rerank=0.7, document_id=4)
RESET = "路由器怎么恢复出厂设置？"


def test_how_to_over_evidence_led_by_the_other_language_is_not_answered_by_a_list_its_words_happen_to_match():
    router = chunk("r", "To restore the factory settings, hold the Reset button for 10 seconds.",
                   title="R5 Router Guide", rerank=0.8, document_id=3)
    steps = ExtractiveAnswerer().run(question=RESET, chunks=[router, SALES], shape=AnswerShape.STEPS)
    # The words cannot tell across the languages which text answers: the answer is chosen as any other question's.
    assert steps == ExtractiveAnswerer().run(question=RESET, chunks=[router, SALES])
    assert not body_lines(steps)[0].startswith("1.")


def test_how_to_is_not_answered_by_a_list_that_never_says_what_is_to_be_done():
    warranty = chunk("w", "产品：R5 Mesh 路由器；整机保修：2年。", title="售后政策", rerank=0.8, document_id=5)
    answer = ExtractiveAnswerer().run(question=RESET, chunks=[warranty, SALES], shape=AnswerShape.STEPS)
    # answered as any other question is, not as the list's numbered steps
    assert answer == ExtractiveAnswerer().run(question=RESET, chunks=[warranty, SALES])
    assert not body_lines(answer)[0].startswith("1.")
    # a list that says the action asked is the answer
    listed = ExtractiveAnswerer().run(question="路由器怎么降价？", chunks=[warranty, SALES], shape=AnswerShape.STEPS)
    assert [line[:2] for line in body_lines(listed)] == ["1.", "2."]


def test_a_summary_covers_every_section_and_never_is_the_title():
    answer = ExtractiveAnswerer().run(question="总结一下这篇文档", chunks=[TITLE_ONLY, TIMEOUT, CALLBACK, DUPLICATE],
                                      shape=AnswerShape.SUMMARY)
    assert "[2]" in answer and "[3]" in answer and "[4]" in answer
    assert "30 秒" in answer and "回调日志" in answer and "T+1" in answer
    assert "支付失败排查手册[1]" not in answer


def test_a_summary_of_a_named_document_quotes_that_document_and_not_its_neighbours_in_the_ranking():
    answer = ExtractiveAnswerer().run(question="总结一下支付失败排查手册", chunks=[TIMEOUT, DISK, CALLBACK, DUPLICATE],
                                      shape=AnswerShape.SUMMARY)
    assert "30 秒" in answer and "回调日志" in answer and "T+1" in answer
    assert "磁盘" not in answer and "[2]" not in answer


def test_a_summary_reads_in_the_order_of_the_document_not_of_the_ranking():
    first, second, third = (replace(part, parent_id=n) for n, part in enumerate((TIMEOUT, CALLBACK, DUPLICATE), 1))
    answer = ExtractiveAnswerer().run(question="总结一下支付失败排查手册", chunks=[third, first, second],
                                      shape=AnswerShape.SUMMARY)
    assert answer.index("30 秒") < answer.index("回调日志") < answer.index("T+1")


def test_a_summary_skips_the_lines_that_only_label_a_part():
    opening = chunk("o", "BrightHome Returns and Refunds\nUpdated 10 September 2025\n\n"
                         "Most items can be returned within 30 days. Refunds take 5 business days.",
                    title="brighthome-returns-faq")
    answer = ExtractiveAnswerer().run(question="Summarise the returns FAQ", chunks=[opening], shape=AnswerShape.SUMMARY)
    assert "within 30 days" in answer and "Updated" not in answer and "BrightHome Returns and Refunds" not in answer


def test_a_passage_belongs_to_the_side_its_section_names_and_is_quoted_once():
    refund = chunk("r", "一笔订单可以多次部分退款，累计退款金额不能超过实付金额。\n用户反馈退款未到账时：",
                   title="退款处理指南", context="退款处理指南 › 部分退款", document_id=3)
    answer = ExtractiveAnswerer().run(question="退款和重复扣款有什么区别？", chunks=[DUPLICATE, refund],
                                      shape=AnswerShape.COMPARISON, sides=("退款", "重复扣款"))
    refund_part, duplicate_part = answer.split("**重复扣款**")
    assert "部分退款" in refund_part and "T+1" not in refund_part
    assert "T+1" in duplicate_part and answer.count("T+1") == 1
    assert "未到账时" not in answer  # a lead-in says nothing on its own


HISTORY = chunk("h", "阿若是他的名字，意译为初解。他在五人之中最早开悟，因此被称为阿若。憍陈如出家前是一位婆罗门。",
                title="阿若憍陈如", rerank=0.9)
TRAITS = chunk("f", "在沧龙类中，浮龙具有数个独有特征。牠们的鳍状肢狭窄、尾鳍大。其眼睛也相当大。"
                    "浮龙生活在白垩纪晚期。",
               title="浮龙", rerank=0.9)


def test_a_sentence_that_points_back_is_quoted_with_the_sentence_it_refers_to():
    answer = ExtractiveAnswerer().run(question="阿若憍陈如为什么被称为阿若？", chunks=[HISTORY])
    assert "阿若是他的名字，意译为初解。他在五人之中最早开悟，因此被称为阿若。[1]" in answer
    assert "婆罗门" not in answer


def test_sentences_that_continue_the_quoted_one_follow_it_and_unrelated_ones_do_not():
    answer = ExtractiveAnswerer().run(question="浮龙有哪些独有特征？", chunks=[TRAITS])
    assert "浮龙具有数个独有特征。牠们的鳍状肢狭窄、尾鳍大。其眼睛也相当大。[1]" in answer
    assert "白垩纪" not in answer


MOUSE = chunk("m", "灰斑鼠是鼠科的一种小型动物，常见于山地森林。灰斑鼠以草籽和昆虫为食，夜间活动。"
                   "成年个体约只有50克重，尾巴与身体等长。", title="灰斑鼠", rerank=0.9)
BRIDGE = chunk("b", "青石桥横跨老城的护城河，是老城最有名的桥梁。桥上的石狮子由本地工匠雕刻而成。"
                    "1892年全部完工，此后一直是进城的主要道路。", title="青石桥", rerank=0.9)
ALBUM = chunk("a", "林小雨出生于海边的小镇，自幼学习钢琴。第二张专辑《晴天！雨天》由一家独立唱片公司发行。",
              title="林小雨", rerank=0.9)


def test_a_paraphrased_answer_is_found_through_the_characters_it_shares_with_the_question(monkeypatch):
    # "体重" is nowhere in the passage; "约只有50克重" keeps its 重 (and the asked-for number).
    answer = ExtractiveAnswerer().run(question="灰斑鼠的体重大约是多少？", chunks=[MOUSE])
    assert "约只有50克重" in answer
    # The shared character alone decides here, without the expected-shape cue.
    monkeypatch.setattr("chat.offline.extractive.SHAPE_BONUS", 0.0)
    assert "约只有50克重" in ExtractiveAnswerer().run(question="灰斑鼠的体重大约是多少？", chunks=[MOUSE])


def test_a_when_question_prefers_the_sentence_that_holds_a_date(monkeypatch):
    monkeypatch.setattr("chat.offline.extractive.PARTIAL_BONUS", 0.0)
    answer = ExtractiveAnswerer().run(question="青石桥是什么时候建好的？", chunks=[BRIDGE])
    assert "1892年全部完工" in answer
    assert "石狮子" not in answer


def test_sentences_that_only_have_the_expected_shape_are_not_quoted():
    mouse = chunk("m", "灰斑鼠是鼠科的一种小型动物，常见于山地森林。成年个体约只有50克重，尾巴与身体等长。"
                       "每年繁殖3次，每窝4到6只。寿命约为2年。", title="灰斑鼠", rerank=0.9)
    answer = ExtractiveAnswerer().run(question="灰斑鼠的体重大约是多少？", chunks=[mouse])
    assert "约只有50克重" in answer
    # Numbers alone do not answer a question about weight: the shape picks among sentences, it adds none.
    assert "繁殖" not in answer and "寿命" not in answer


def test_a_short_quoted_sentence_is_followed_by_the_one_that_completes_it():
    fever = chunk("f", "这种病毒主要通过蚊虫传播。患者症状为高热。患者还会出现皮疹和关节疼痛。多数患者一周内康复。",
                  title="登革热", rerank=0.9)
    answer = ExtractiveAnswerer().run(question="患者症状是什么？", chunks=[fever])
    assert "- 患者症状为高热。患者还会出现皮疹和关节疼痛。[1]" in answer
    assert "康复" not in answer


def test_a_sentence_cut_inside_a_title_mark_is_quoted_whole():
    answer = ExtractiveAnswerer().run(question="林小雨的唱片由哪家公司发行？", chunks=[ALBUM])
    assert "- 第二张专辑《晴天！雨天》由一家独立唱片公司发行。[1]" in answer


@pytest.mark.parametrize("question,asks_date", [
    ("老周逝世的时间是？", True), ("老周病死后，儿子做了什么？", False), ("老周的儿子叫什么？", False),
])
def test_only_a_question_asking_when_looks_for_a_date(question, asks_date):
    assert (_shape_fit(_shapes(question), "老周于1950年冬天病故。") > 0) is asks_date


def test_the_document_the_question_names_is_quoted_not_another_that_shares_the_asked_word():
    # 祖籍 is the question's only rare word jieba finds (it cuts 元皇后 into 元 / 皇后), and only the other
    # article has it; the article titled by the question's subject holds the answer.
    named = chunk("e", "元皇后，河南郡洛阳县（今河南省洛阳市东）人，北齐孝昭帝高演的皇后。",
                  title="元皇后 (北齐孝昭帝)", rerank=0.6, document_id=3)
    other = chunk("s", "史继偕，福建晋江平易里人，祖籍浙江鄞县，明朝政治人物。", title="史继偕", rerank=0.5,
                  document_id=4)
    answer = ExtractiveAnswerer().run(question="元皇后祖籍何处？", chunks=[named, other])
    assert "洛阳县" in answer and "史继偕" not in answer


def test_a_rare_common_word_of_the_question_does_not_exclude_the_best_evidence():
    # 党派 is rare but a word of the language: what is asked, not whom it is about. Only the weaker chunk
    # repeats it; the best-ranked one answers.
    election = chunk("v", "第七届参议院选举于1965年举行。公明党取得了相对满意的成绩，由原先的4席增加到11席。",
                     title="第7届参议院选举", rerank=0.76, document_id=5)
    other = chunk("p", "总督会委任占有下议院最多席位的党派的党首为总理。", title="总理列表", rerank=0.40, document_id=6)
    answer = ExtractiveAnswerer().run(question="哪一党派在选举中取得了相对满意的成绩？", chunks=[election, other])
    assert "公明党" in answer and "总督" not in answer


def test_a_sentence_holding_half_of_each_asked_word_is_quoted_when_no_sentence_shares_a_whole_one():
    # 身体 → 体, 颜色 → 色: no sentence has a whole asked word, so only the chunk's opening would be quoted.
    fish = chunk("f", "蓝线裸顶鲷是龙占鱼科的其中一个种。本鱼分布于印度太平洋区，包括东非、马达加斯加、红海、"
                      "斯里兰卡、日本、台湾、菲律宾等海域。本鱼体呈银灰色，有若干不规则污斑。体长可达80公分。",
                 title="蓝线裸顶鲷")
    answer = ExtractiveAnswerer().run(question="蓝线裸顶鲷的身体是什么颜色的？", chunks=[fish])
    assert "银灰色" in answer


ERROR_CODES = chunk("e", "Error codes\n"
                         "E1: The filter is not installed. Open the back cover and insert the filter.\n"
                         "E2: The fan motor is blocked. Switch the purifier off, unplug it and remove any object.\n"
                         "E3: The air quality sensor has failed. Restart the purifier; if the code appears again, "
                         "contact customer service.", title="AC-300 Air Purifier User Manual",
                    context="AC-300 Air Purifier User Manual › Error codes")


def test_a_list_item_is_quoted_whole_and_never_mixed_with_the_next_one():
    answer = ExtractiveAnswerer().run(question="What does error code E2 mean?", chunks=[ERROR_CODES])
    assert "E2: The fan motor is blocked. Switch the purifier off, unplug it and remove any object." in answer
    assert "Restart" not in answer and "E3" not in answer and "E1" not in answer


LEAVE = chunk("l", "婚假：员工依法登记结婚的，享受婚假10天，须在登记之日起一年内休完。\n\n"
                   "产假：女员工生育享受产假158天，其中法定产假98天，奖励假60天；难产的增加15天。\n\n"
                   "陪产假：男员工在配偶生育期间享受陪产假15天，须在子女出生后六个月内休完。",
              title="员工休假管理办法", context="员工休假管理办法 › 第四章 婚假、产假与陪产假")


@pytest.mark.parametrize(("question", "said", "not_said"), [("产假多少天？", "158天", "婚假10天"),
                                                            ("陪产假几天", "陪产假15天", "婚假10天")])
def test_a_heading_naming_several_things_quotes_the_clause_about_the_one_asked(question, said, not_said):
    answer = ExtractiveAnswerer().run(question=question, chunks=[LEAVE])
    assert said in answer and not_said not in answer


def test_a_sentence_stating_a_value_of_the_kind_asked_is_quoted_over_one_holding_another_number():
    spec = chunk("s", "AC-500的滤网每6个月更换一次。\nAC-500整机11.2公斤。", title="AC系列规格", context="AC系列规格")
    answer = ExtractiveAnswerer(max_sentences=1).run(question="AC-500有多重？", chunks=[spec])
    assert "11.2公斤" in answer and "6个月" not in answer
