"""`PromptParams`: the budget layer's numbers, validated once (chat.pipeline.stages reads them from the config)."""
from __future__ import annotations

from dataclasses import dataclass

from docmind.evidence import EvidenceBudget


@dataclass(frozen=True)
class PromptParams:
    # The same value retrieval packed its evidence with (it validates itself).
    evidence: EvidenceBudget = EvidenceBudget()
    aux_max_tokens: int = 2500
    computations_max_tokens: int = 1500
    memory_max_tokens: int = 600
    history_max_tokens: int = 1000
    total_max_tokens: int = 6000
    rolling_summary: bool = True
    summary_max_tokens: int = 300
    message_max_chars: int = 600

    def __post_init__(self) -> None:
        for name in ("total_max_tokens", "message_max_chars"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        # Zero switches a stream off; negative is a configuration mistake.
        for name in ("aux_max_tokens", "computations_max_tokens", "memory_max_tokens", "history_max_tokens",
                     "summary_max_tokens"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
