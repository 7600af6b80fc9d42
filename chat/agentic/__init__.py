"""Agentic retrieval: the bounded tool-calling loop, its tools, the offline planner and per-turn dedup."""
