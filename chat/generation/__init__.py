"""Answer generation: remote streaming, the offline extractive answerer, and HyDE's hypothetical answer."""
from chat.generation.answer_generator import AnswerGenerator
from chat.generation.extractive import ExtractiveAnswerer
from chat.generation.hyde import HypotheticalAnswerWriter

__all__ = ["AnswerGenerator", "ExtractiveAnswerer", "HypotheticalAnswerWriter"]
