"""How the answer is laid out follows what the question asks for."""
import pytest

from chat.pipeline.answering import answer_shape
from chat.types import AnswerShape, Intent, Mode, PathDecision, QueryClassification


@pytest.mark.parametrize(("intent", "shape"), [
    (Intent.SUMMARY, AnswerShape.SUMMARY), (Intent.COMPARISON, AnswerShape.COMPARISON),
    (Intent.HOW_TO, AnswerShape.STEPS), (Intent.FACTUAL, AnswerShape.FACTS),
])
def test_the_questions_intent_picks_the_answer_shape(intent, shape):
    classification = QueryClassification(rewritten="总结一下退换货政策", intent=intent)
    assert answer_shape(classification, PathDecision(mode=Mode.RULE_PLANNER, reason="")) is shape


def test_reading_a_selected_document_is_always_a_summary():
    classification = QueryClassification(rewritten="X100的额定功率是多少？")
    assert answer_shape(classification, PathDecision(mode=Mode.SELECTED_DOC, reason="")) is AnswerShape.SUMMARY
