"""The chat orchestrator: one entry point, `ChatPipeline.run`, streaming ChatEvents."""
from chat.pipeline.core import ChatPipeline
from chat.pipeline.turn import ChatInputError, ChatTurn

__all__ = ["ChatPipeline", "ChatInputError", "ChatTurn"]
