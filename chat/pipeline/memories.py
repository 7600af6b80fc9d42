"""The asker's long-term memories in a turn: recalled for the prompt, extracted after done; about the user, not a KB."""
from __future__ import annotations

from chat.pipeline.stages import TurnStages
from chat.pipeline.turn import ChatTurn
from chat.types import QueryClassification
from docmind import backends
from memory.turn import TurnMemory, recall_for_turn, schedule_extraction


def recall_memories(stages: TurnStages, turn: ChatTurn, classification: QueryClassification) -> TurnMemory:
    """The user's long-term memories for this question (vector recall checked against the record + standing)."""
    memory = recall_for_turn(user_id=turn.user.pk, query=classification.rewritten or turn.question,
                             params=stages.memory, memory_aware=bool(classification.memory_aware))
    turn.record.memory = memory
    return memory


def schedule_memory_extraction(turn: ChatTurn, stages: TurnStages) -> None:
    """After `done`: what the user said about themselves becomes memories (MEMORY-scope turns did it already)."""
    classification = turn.record.classification
    if classification is None or classification.scope.value == "MEMORY" or not turn.answer:
        return
    schedule_extraction(user_id=turn.user.pk, message=turn.question,
                        hints=list(classification.memory_write_hints), params=stages.memory,
                        chat_model=backends.get_chat_model())
