"""The LLM layer: the `ChatModel` port and its OpenAI-compatible implementation."""
from docmind.llm.base import ChatModel, ChatReply, LlmError, LlmTimeout, LlmUnavailable, ToolCall

__all__ = ["ChatModel", "ChatReply", "LlmError", "LlmTimeout", "LlmUnavailable", "ToolCall"]
