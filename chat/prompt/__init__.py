"""Prompt assembly under one global token budget: evidence, computations, memory and history."""
from chat.prompt.assembler import PromptAssembler
from chat.prompt.params import PromptParams
from chat.prompt.summary import HistorySummarizer

__all__ = ["HistorySummarizer", "PromptAssembler", "PromptParams"]
