"""The offline path: how DocMind answers when no LLM is configured.

Every answer here is built only from evidence sentences, quoted and cited, never written by a model: a
rule-based classifier reads the question, a deterministic planner drives the agentic loop's tool calls,
and the extractive answerer quotes the sentences that answer. Everything in this package must work with
no LLM at all.
"""
