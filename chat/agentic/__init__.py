"""Agentic retrieval: the bounded tool-calling loop, its tools, the offline planner and per-turn dedup."""
from chat.agentic.orchestrator import AgenticSearchOrchestrator
from chat.agentic.types import AgenticResult

__all__ = ["AgenticSearchOrchestrator", "AgenticResult"]
