"""Answer generation: the remote model's streamed answer, or the offline answerer's (chat/offline) in pieces."""
from chat.generation.answer_generator import AnswerGenerator

__all__ = ["AnswerGenerator"]
