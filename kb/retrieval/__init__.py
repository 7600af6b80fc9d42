"""One-shot retrieval: one stage per module, data between stages in types.py."""
