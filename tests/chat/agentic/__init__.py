"""Tests of chat/agentic."""
