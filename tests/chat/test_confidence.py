"""ConfidenceCalibrator: one calibrated number for abstention, the low-relevance label and the band."""
from __future__ import annotations

from types import MappingProxyType

import pytest

from chat.confidence import (
    FEATURES,
    ConfidenceCalibrator,
    answer_features,
    best_covered,
    content_runs,
    cover_share,
    evidence_features,
    latin_names,
    missing_value,
    unsaid_words,
)
from chat.types import Assessment, Verdict
from kb.retrieval.types import Grade, GradeResult, ScoredChunk


def calibrator(**kw) -> ConfidenceCalibrator:
    return ConfidenceCalibrator(**{"abstain_below": 0.2, "medium_from": 0.4, "high_from": 0.7, **kw})


def grade(top1: float, lex: float = 0.5) -> GradeResult:
    return GradeResult(grade=Grade.AMBIGUOUS, rerank_top1=top1, lex_coverage=lex, kb_entity_weak=False,
                       web_compensation_needed=False)


ANSWER = ScoredChunk(chunk_id="1", content="星河公司的年假为每年十五天，入职第一年按月折算。", score=0.9,
                     document_title="星河公司员工手册", context="星河公司员工手册",
                     stage_scores=MappingProxyType({"rerank": 0.9}))


@pytest.mark.parametrize("kw", [{"abstain_below": 0.5, "medium_from": 0.4}, {"high_from": 1.5},
                                {"answerable": {"bias": 1.0}}])
def test_it_rejects_inconsistent_thresholds_and_weights(kw):
    with pytest.raises(ValueError):
        calibrator(**kw)


def test_no_evidence_abstains():
    assert calibrator().run(question="年假？", chunks=[], grade=grade(0.0)).verdict is Verdict.ABSTAIN


def test_strong_matching_evidence_is_answered_and_weak_evidence_abstains():
    strong = calibrator().run(question="星河公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.9, 1.0))
    weak = calibrator().run(question="公司的股票期权怎么行权？", chunks=[ANSWER], grade=grade(0.1, 0.0))
    assert strong.verdict is Verdict.ANSWER and weak.verdict is Verdict.ABSTAIN
    assert strong.score > weak.score


def test_a_question_that_never_names_its_subject_needs_stronger_proof_to_abstain():
    weights = {name: 0.0 for name in FEATURES} | {"bias": -1.7}  # P(answerable) ≈ 0.15: under the bar, over a third
    run = calibrator(abstain_below=0.3, medium_from=0.5, answerable=weights).run
    named = run(question="星河公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.2))
    unnamed = run(question="此公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.2), unnamed_subject=True)
    assert named.verdict is Verdict.ABSTAIN and unnamed.verdict is Verdict.LOW
    assert unnamed.score <= unnamed.features["p_answerable"] < 0.3
    hopeless = calibrator(abstain_below=0.3, medium_from=0.5, answerable=weights | {"bias": -4.0}).run(
        question="此公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.2), unnamed_subject=True)
    assert hopeless.verdict is Verdict.ABSTAIN


def test_the_score_ranks_by_evidence_strength():
    scores = [calibrator().run(question="星河公司的年假有多少天？", chunks=[ANSWER], grade=grade(top1)).score
              for top1 in (0.3, 0.5, 0.7, 0.9)]
    assert scores == sorted(scores)


def test_features_are_within_unit_range():
    features = evidence_features(question="星河公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.9))
    assert features["best_sentence"] > 0.5 and features["best_in_top"] == 1.0
    assert all(0.0 <= v <= 1.0 for v in features.values())


@pytest.mark.parametrize("verdict,score,coverage,band", [
    (Verdict.ANSWER, 0.9, 1.0, "high"), (Verdict.ANSWER, 0.9, 0.0, "medium"), (Verdict.ANSWER, 0.5, None, "medium"),
    (Verdict.ANSWER, 0.2, 1.0, "low"), (Verdict.LOW, 0.35, 1.0, "low"), (Verdict.ABSTAIN, 0.1, None, "none"),
])
def test_the_band_follows_the_verdict_and_the_score(verdict, score, coverage, band):
    final, got = calibrator().finish(assessment=Assessment(score=score, verdict=verdict), citation_coverage=coverage)
    assert got == band and final <= score


def test_a_low_verdict_never_ends_in_a_better_band():
    # Even a LOW verdict whose score alone would read "high" stays low: label and band must agree.
    score, band = calibrator().finish(assessment=Assessment(score=0.95, verdict=Verdict.LOW), citation_coverage=1.0)
    assert band == "low" and score < 0.4  # the figure the badge shows is within the low band (below medium_from)


def test_an_answer_that_says_what_was_asked_scores_above_one_that_does_not():
    assessed = calibrator().run(question="星河公司的年假有多少天？", chunks=[ANSWER], grade=grade(0.8))
    on_point = calibrator().on_answer(assessment=assessed, answer="星河公司的年假为每年十五天[1]",
                                      question="星河公司的年假有多少天？", chunks=[ANSWER])
    beside = calibrator().on_answer(assessment=assessed, answer="入职手续在人事部办理[1]",
                                    question="星河公司的年假有多少天？", chunks=[ANSWER])
    assert on_point.verdict is beside.verdict is assessed.verdict
    assert on_point.features["answer_focus"] > beside.features["answer_focus"]
    assert on_point.score > beside.score


def test_an_abstention_is_not_reassessed_by_its_text():
    abstained = calibrator().run(question="公司的股票期权怎么行权？", chunks=[ANSWER], grade=grade(0.1, 0.0))
    again = calibrator().on_answer(assessment=abstained, answer="知识库中没有找到。",
                                   question="公司的股票期权怎么行权？", chunks=[ANSWER])
    assert again == abstained


@pytest.mark.parametrize("question,open_ended", [("为什么年假要按月折算？", 1.0), ("年假有哪些规定？", 1.0),
                                                 ("How is annual leave counted?", 1.0), ("年假有多少天？", 0.0),
                                                 ("Who approves annual leave?", 0.0)])
def test_questions_asking_for_an_explanation_or_a_list_are_open_ended(question, open_ended):
    assert evidence_features(question=question, chunks=[ANSWER], grade=grade(0.8))["open_ended"] == open_ended


def test_content_runs_drop_stop_words_and_punctuation_but_keep_what_jieba_splits_inside_a_run():
    assert content_runs("黄华麒是哪个大学毕业的？") == ("黄华麒是", "大学毕业")


def test_a_sentence_that_says_each_word_in_another_order_covers_the_whole_question():
    # Term matching by character pairs misses 学毕 and counts the question's interrogatives; covering
    # characters does not.
    runs = content_runs("黄华麒是哪个大学毕业的？")
    # jieba cuts 黄华/麒是: only 是 is left uncovered.
    assert cover_share(runs, "黄华麒毕业于清华大学，是一名工程师。") == 7 / 8
    assert cover_share(runs, "黄华麒生于上海。") == 3 / 8
    assert cover_share(runs, "本校有三个校区。") == 0.0


def test_a_shortened_word_is_covered_by_its_full_form_and_not_by_characters_far_apart():
    runs = content_runs("年假有几天？")
    assert cover_share(runs, "年休假为每年5天。") == 1.0
    assert cover_share(runs, "年度的休假为5天。") < 1.0


def test_an_english_word_is_covered_whole_not_by_its_letter_pairs():
    runs = content_runs("Who approves annual leave?")
    assert runs == ("approves", "annual", "leave")
    assert cover_share(runs, "Annual leave is approved by HR.") == len("annualleave") / len("approvesannualleave")
    assert cover_share(runs, "Manual cleaves.") == 0.0


def test_the_sentence_cover_feature_reads_the_best_sentence_with_its_context():
    chunk = ScoredChunk(chunk_id="2", content="他生于上海。毕业于清华大学，主修建筑。", score=0.8,
                        document_title="黄华麒", context="黄华麒", stage_scores=MappingProxyType({"rerank": 0.8}))
    features = evidence_features(question="黄华麒是哪个大学毕业的？", chunks=[chunk], grade=grade(0.8))
    assert features["sentence_cover"] > features["best_sentence"]


def test_a_question_whose_words_the_evidence_says_apart_is_not_abstained():
    # The pairs 是哪, 个大, 学毕 of the question are in no sentence; its content words all are.
    chunk = ScoredChunk(chunk_id="3", content="黄华麒（英文名：，），前任香港广播处长。黄华麒早年就读圣保罗书院，"
                        "及后于香港大学地理系毕业，其后于英国广播公司接受培训。", score=0.46, document_title="黄华麒",
                        context="黄华麒", stage_scores=MappingProxyType({"rerank": 0.46}))
    shipped = ConfidenceCalibrator(abstain_below=0.3, medium_from=0.5, high_from=0.7)
    assessed = shipped.run(question="黄华麒是哪个大学毕业的？", chunks=[chunk], grade=grade(0.46, 0.6))
    assert assessed.features["sentence_cover"] > 0.8 > assessed.features["best_sentence"] + 0.5
    assert assessed.verdict is not Verdict.ABSTAIN


HANDBOOK = "星河公司成立于2001年，总部在杭州。员工的年假为每年十五天，入职第一年按月折算。"
LEAVE = ScoredChunk(chunk_id="4", content=HANDBOOK,
                    score=0.8, document_title="星河公司员工手册", context="星河公司员工手册",
                    stage_scores=MappingProxyType({"rerank": 0.8}))


def test_best_said_reads_whether_the_answer_says_the_sentence_the_question_points_at():
    question = "星河公司的年假有多少天？"
    quoted = answer_features(question=question, chunks=[LEAVE],
                             answer="员工的年假为每年十五天，入职第一年按月折算。[1]")
    paraphrased = answer_features(question=question, chunks=[LEAVE], answer="年假每年十五天，第一年按月折算[1]")
    other = answer_features(question=question, chunks=[LEAVE], answer="星河公司成立于2001年，总部在杭州。[1]")
    assert quoted["best_said"] == 1.0
    assert other["best_said"] == 0.0 < paraphrased["best_said"] < 1.0


def test_an_answer_that_quotes_another_sentence_than_the_one_the_question_points_at_scores_lower():
    shipped = ConfidenceCalibrator(abstain_below=0.3, medium_from=0.5, high_from=0.7)
    question = "星河公司的年假有多少天？"
    assessed = shipped.run(question=question, chunks=[LEAVE], grade=grade(0.8))
    on_point = shipped.on_answer(assessment=assessed, answer="员工的年假为每年十五天，入职第一年按月折算。[1]",
                                 question=question, chunks=[LEAVE])
    beside = shipped.on_answer(assessment=assessed, answer="星河公司成立于2001年，总部在杭州。[1]",
                               question=question, chunks=[LEAVE])
    assert on_point.features["best_said"] > beside.features["best_said"]
    assert on_point.score > beside.score


ENGLISH = ScoredChunk(chunk_id="2", content="Employees get fifteen days of annual leave per year.", score=0.3,
                      document_title="Employee handbook", context="Employee handbook",
                      stage_scores=MappingProxyType({"rerank": 0.3}))


def test_weak_evidence_in_another_language_than_the_question_is_quoted_under_the_low_label_not_abstained():
    across = calibrator().run(question="年假有几天？", chunks=[ENGLISH], grade=grade(0.3, 0.0))
    same = calibrator().run(question="How many days of parental leave?", chunks=[ENGLISH], grade=grade(0.1, 0.0))
    assert across.verdict is Verdict.LOW and across.score < 0.4
    assert same.verdict is Verdict.ABSTAIN


def test_evidence_in_another_language_that_the_rerank_score_calls_weak_still_abstains():
    """Word overlap cannot judge a translation, but the rerank score judges meaning: below the grader's weak
    bar the knowledge base most likely lacks the answer, whatever the language."""
    strict = calibrator(weak_rerank_below=0.3)
    assert strict.run(question="年假有几天？", chunks=[ENGLISH], grade=grade(0.05, 0.0)).verdict is Verdict.ABSTAIN
    assert strict.run(question="年假有几天？", chunks=[ENGLISH], grade=grade(0.3, 0.0)).verdict is Verdict.LOW


def test_strong_evidence_in_another_language_is_still_labelled_low():
    across = calibrator().run(question="年假有几天？", chunks=[ENGLISH], grade=grade(1.0, 1.0))
    assert across.verdict is Verdict.LOW
    assert calibrator().finish(assessment=across, citation_coverage=1.0)[1] == "low"


BENEFITS = ScoredChunk(chunk_id="2", score=0.9, document_title="员工福利", context="员工福利",
                       content="公司每年为员工安排一次免费体检，标准为每人800元。员工生日当月可领取500元生日礼金。",
                       stage_scores=MappingProxyType({"rerank": 0.9}))


def test_a_rare_word_the_evidence_never_says_is_unsaid_and_everyday_or_said_words_are_not():
    assert unsaid_words("公司有健身房吗？", [BENEFITS]) == ("健身房",)
    # 体检标准 is said by its characters; 分别 is an everyday word; 生日 and 礼金 are said in 生日礼金
    assert unsaid_words("体检标准分别是多少？", [BENEFITS]) == ()
    assert unsaid_words("生日有没有礼金？", [BENEFITS]) == ()


def test_a_pronoun_jieba_glues_to_its_modal_is_not_an_unsaid_word():
    assert unsaid_words("它会影响奖金吗？", [BENEFITS]) == ("奖金",)


def test_a_word_pointing_back_at_the_conversation_is_not_an_unsaid_word():
    assert unsaid_words("这时候体检会扣奖金吗？", [BENEFITS]) == ("奖金",)


def test_evidence_in_another_language_leaves_no_word_unsaid():
    english = ScoredChunk(chunk_id="3", score=0.9, content="Employees get a free annual health check.")
    assert unsaid_words("公司有健身房吗？", [english]) == ()


APP = ScoredChunk(chunk_id="4", score=0.9, document_title="办公App常见问题", context="下载与登录",
                  content="青禾办公App支持iOS和Android手机，在公司软件门户扫码下载。首次登录须绑定本人手机号，连接Wi-Fi即可使用。",
                  stage_scores=MappingProxyType({"rerank": 0.9}))


def test_a_product_a_chinese_question_names_in_latin_letters_is_unsaid_where_the_evidence_never_writes_it():
    assert unsaid_words("青禾办公App支持iPad吗？", [APP]) == ("iPad",)
    assert unsaid_words("办公App支持Windows吗？", [APP]) == ("Windows",)
    # said: whatever the case, hyphens or a plural's ending
    assert unsaid_words("青禾办公app支持ios吗？", [APP]) == ()
    assert unsaid_words("连接wifi就能使用吗？", [APP]) == ()
    assert unsaid_words("Androids能装吗？", [APP]) == ()


def test_an_acronym_or_a_code_is_not_read_as_an_unsaid_latin_name():
    # a Chinese document often writes an acronym in its own words (CEO as 总经理); codes are read elsewhere
    assert latin_names("多少钱以上要CEO审批？") == []
    assert latin_names("AC-300能连网吗？") == []
    assert unsaid_words("HR能下载办公App吗？", [APP]) == ()


def test_of_an_english_question_only_names_spelt_with_a_capital_inside_are_latin_names():
    assert latin_names("Is there a Qinghe Cloud app for Windows?") == []
    assert latin_names("Does the LumaLock S2 support Apple HomeKit?") == ["LumaLock", "HomeKit"]
    lock = ScoredChunk(chunk_id="7", score=0.9, document_title="LumaLock FAQ",
                       content="Voice unlock works with Alexa and Google Assistant.")
    assert unsaid_words("Does the LumaLock S2 support Apple HomeKit?", [lock]) == ("HomeKit",)
    assert unsaid_words("Does the LumaLock work with Alexa?", [lock]) == ()


def test_a_latin_name_is_unsaid_in_evidence_of_the_other_language_too():
    english = ScoredChunk(chunk_id="5", score=0.9, content="The VPN client runs on Windows and macOS.")
    assert unsaid_words("VPN支持Linux吗？", [english]) == ("Linux",)
    assert unsaid_words("VPN支持macOS吗？", [english]) == ()


SHELVES = ScoredChunk(chunk_id="6", score=0.9, document_title="仓库盘点", context="盘点安排",
                      content="37号货架的盘点在每月5日执行；三号楼的货架由后勤部负责。Room 12 holds the spare parts.",
                      stage_scores=MappingProxyType({"rerank": 0.9}))


def test_a_number_that_picks_a_thing_the_evidence_never_writes_is_unsaid():
    assert unsaid_words("57号货架每月几日盘点？", [SHELVES]) == ("57号",)
    assert unsaid_words("Where is room No. 7?", [SHELVES]) == ("No. 7",)
    # said: the same number, as digits standing alone or as a Chinese numeral before 号
    assert unsaid_words("37号货架每月几日盘点？", [SHELVES]) == ()
    assert unsaid_words("3号楼的货架由谁负责？", [SHELVES]) == ()
    assert unsaid_words("What is kept in room #12?", [SHELVES]) == ()
    # 7 inside 37 is not the number 7
    assert unsaid_words("7号货架什么时候盘点？", [SHELVES]) == ("7号",)
    # in Traditional characters too
    assert unsaid_words("57號貨架每月幾日盤點？", [SHELVES]) == ("57號",)
    assert unsaid_words("三號樓的貨架由誰負責？", [SHELVES]) == ()
    strong = calibrator(abstain_below=0.0, medium_from=0.0, high_from=0.0)
    assessment = strong.run(question="57号货架每月几日盘点？", chunks=[SHELVES], grade=grade(0.95, 0.9))
    assert assessment.verdict is Verdict.LOW


def test_a_number_that_picks_a_thing_is_unsaid_in_evidence_of_the_other_language_too():
    english = ScoredChunk(chunk_id="7", score=0.9, content="Shelf 37 is counted on the 5th of every month.")
    assert unsaid_words("57号货架每月几日盘点？", [english]) == ("57号",)
    assert unsaid_words("37号货架每月几日盘点？", [english]) == ()


def test_strong_evidence_that_never_says_an_asked_word_is_labelled_low_not_answered():
    strong = calibrator(abstain_below=0.0, medium_from=0.0, high_from=0.0)
    asked_beside = strong.run(question="公司有健身房吗？", chunks=[BENEFITS], grade=grade(0.95, 0.9))
    asked = strong.run(question="公司的体检标准是多少？", chunks=[BENEFITS], grade=grade(0.95, 0.9))
    assert asked_beside.verdict is Verdict.LOW and asked_beside.unsaid == ("健身房",)
    assert asked_beside.features["unsaid_words"] == 1.0
    assert asked.verdict is Verdict.ANSWER


FISH = ScoredChunk(chunk_id="4", score=0.9, document_title="蓝线裸顶鲷", context="蓝线裸顶鲷",
                   content="本鱼体呈银灰色，又名蓝线鲷，分布于印度洋。", stage_scores=MappingProxyType({"rerank": 0.9}))


@pytest.mark.parametrize("question", ["蓝线裸顶鲷的身体是什么颜色？", "蓝线裸顶鲷的别名是什么？",
                                      "蓝线裸顶鲷有哪些别称？"])
def test_a_kind_of_value_named_beside_its_interrogative_is_not_an_unsaid_word(question):
    # the evidence states the value (银灰色, 又名…) without the kind's name
    assert unsaid_words(question, [FISH]) == ()


BONUS = ScoredChunk(chunk_id="5", score=0.9, document_title="绩效考核办法", context="绩效考核办法 > 结果应用",
                    content="年终奖系数：S级2.0，A级1.5，B级1.0，C级0.5。\n考核结果在12月公布。",
                    stage_scores=MappingProxyType({"rerank": 0.9}))


def test_a_kind_of_value_no_related_sentence_states_is_missing():
    # The only date is in a sentence about something else (the results), not the bonus.
    assert missing_value("年终奖什么时候发？", [BONUS]) == "date"
    assert missing_value("S级的年终奖系数是多少？", [BONUS]) == ""  # a bare 多少 asks no kind
    assert missing_value("考核结果什么时候公布？", [BONUS]) == ""
    # A sentence whose words paraphrase the question's (年假 in 年休假) is related by their characters.
    leave = ScoredChunk(chunk_id="6", score=0.9, content="职工累计工作满1年不满10年的，年休假5天。")
    assert missing_value("年假有几天？", [leave]) == ""


def test_a_sentence_sharing_only_a_word_that_counts_is_not_about_what_was_asked():
    fees = ScoredChunk(chunk_id="9", score=0.9, document_title="检查须知", context="检查须知",
                       content="CT、核磁报告一般于检查后24小时内出具。\n安装调测费：新装用户一次性收取100元。")
    assert missing_value("做一次核磁多少钱？", [fees]) == "money"


def test_a_value_stated_about_another_model_than_the_one_asked_about_does_not_count():
    sales = ScoredChunk(chunk_id="7", score=0.9, document_title="三季度销售会议纪要", context="三季度销售会议纪要",
                        content="R5路由器三季度销量4.1万台。\nCM-2咖啡机三季度退货率为2.3%。")
    assert missing_value("三季度CM-2卖了多少台？", [sales]) == "count"
    assert missing_value("三季度R5卖了多少台？", [sales]) == ""
    # A sentence that names no model may be about the one asked about.
    warranty = ScoredChunk(chunk_id="8", score=0.9, document_title="咖啡机说明书", context="咖啡机说明书",
                           content="E6：豆仓已空。\n本产品整机保修1年。")
    assert missing_value("E6 那保修多久？", [warranty]) == ""


def test_strong_evidence_that_states_no_value_of_the_kind_asked_is_labelled_low():
    strong = calibrator(abstain_below=0.0, medium_from=0.0, high_from=0.0)
    assessed = strong.run(question="年终奖什么时候发？", chunks=[BONUS], grade=grade(0.95, 0.9))
    assert assessed.verdict is Verdict.LOW and assessed.features["value_missing"] == 1.0


def test_a_thing_whose_quantity_is_asked_is_still_an_unsaid_word():
    assert unsaid_words("员工福利里健身房的年费是多少？", [BENEFITS]) == ("健身房",)


def test_the_thing_before_how_much_is_what_is_asked_about_with_or_without_its_copula():
    assert unsaid_words("公司健身房多少钱？", [BENEFITS]) == ("健身房",)
    assert unsaid_words("公司健身房是多少钱？", [BENEFITS]) == ("健身房",)


def test_the_sentence_a_question_points_at_is_a_numbered_step_whole_and_an_answer_quoting_it_says_it():
    steps = ScoredChunk(chunk_id="9", score=0.9, document_title="数据库连接池耗尽",
                        context="数据库连接池耗尽 › 处理步骤",
                        content="1. 在数据库执行 SHOW PROCESSLIST，找出慢查询；\n2. 先 KILL 掉阻塞的会话恢复服务；")
    question = "数据库连接池耗尽怎么处理？"
    _, sentence = best_covered(content_runs(question), [steps])
    assert sentence.startswith("1. 在数据库执行")
    answer = "1. 在数据库执行 SHOW PROCESSLIST，找出慢查询[1]\n2. 先 KILL 掉阻塞的会话恢复服务[1]"
    assert answer_features(question=question, chunks=[steps], answer=answer)["best_said"] == 1.0


def test_a_section_heading_inside_the_chunk_is_never_the_sentence_a_question_points_at():
    steps = ScoredChunk(chunk_id="10", score=0.9, document_title="数据库连接池耗尽",
                        context="数据库连接池耗尽 › 处理步骤",
                        content="## 处理步骤\n1. 在数据库执行 SHOW PROCESSLIST，找出慢查询；\n"
                                "2. 先 KILL 掉阻塞的会话恢复服务；")
    _, sentence = best_covered(content_runs("数据库连接池耗尽怎么处理？"), [steps])
    assert sentence.startswith("1. 在数据库执行")


def test_an_answering_verdict_whose_written_score_is_under_the_medium_band_reads_low():
    cal = calibrator()
    assert cal.reads_low(Assessment(score=cal.medium_from - 0.01, verdict=Verdict.ANSWER))
    assert not cal.reads_low(Assessment(score=cal.medium_from, verdict=Verdict.ANSWER))
    assert not cal.reads_low(Assessment(score=0.1, verdict=Verdict.LOW))  # already labelled


def test_an_answer_whose_citations_cover_too_little_for_the_medium_band_reads_low():
    cal = calibrator()
    answer = Assessment(score=cal.medium_from + 0.05, verdict=Verdict.ANSWER)

    assert not cal.reads_low(answer, 1.0)
    # Half its sentences uncited ("nothing about the other side"): the final band is low, so is its label.
    assert cal.reads_low(answer, 0.5)
    assert cal.finish(assessment=answer, citation_coverage=0.5)[1] == "low"
