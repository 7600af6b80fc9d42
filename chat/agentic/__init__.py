"""Agentic retrieval: the bounded tool-calling loop, its tools and per-turn dedup (offline planner: chat/offline)."""
from chat.agentic.orchestrator import AgenticSearchOrchestrator
from chat.agentic.types import AgenticResult

__all__ = ["AgenticSearchOrchestrator", "AgenticResult"]
