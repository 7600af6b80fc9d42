"""Answer generation: remote streaming and the offline extractive answerer."""
from chat.generation.answer_generator import AnswerGenerator
from chat.generation.extractive import ExtractiveAnswerer

__all__ = ["AnswerGenerator", "ExtractiveAnswerer"]
