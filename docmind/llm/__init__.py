"""The LLM layer: the `ChatModel` port and its OpenAI-compatible implementation."""
from docmind.llm.base import ChatModel, ChatReply, LlmCancelled, LlmError, LlmTimeout, LlmUnavailable, ToolCall

__all__ = ["ChatModel", "ChatReply", "LlmCancelled", "LlmError", "LlmTimeout", "LlmUnavailable", "ToolCall"]
