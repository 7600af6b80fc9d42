"""Curated answers (question → answer pairs per knowledge base) and the history of edited chunks."""
