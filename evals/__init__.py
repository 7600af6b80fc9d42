"""Evaluation sets per knowledge base and the runs that ask them through the chat pipeline."""
