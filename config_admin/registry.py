"""Every sys_ai_config key a stage reads: its type, default, category, description and valid range."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Descriptions are English in code and rows; the admin shows them through the catalogue (gettext_noop marks
# them for extraction without translating at import time).
from django.utils.translation import gettext_noop as N_

from docmind.llm.base import STRUCTURED_OUTPUT_MODES
from docmind.sandbox import runner_status
from docmind.telemetry.usage import validate_prices

VALUE_TYPES = ("int", "float", "bool", "str", "json")


class ConfigValueError(ValueError):
    """A value does not fit its key's type or range."""


class UnknownConfigKey(KeyError):
    """A key that no stage declares."""

    def __str__(self) -> str:
        return f"unknown AI config key: {self.args[0]!r}"


@dataclass(frozen=True)
class ConfigKey:
    key: str
    value_type: str
    default: Any
    category: str
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    # Checked only when a value is written (admin, API): a fact about this machine, not the
    # value's shape, so a stored row stays readable wherever it is loaded.
    write_check: Callable[[Any], None] | None = None
    # Shape check for json values; raises ValueError with a message for the admin.
    validator: Callable[[Any], None] | None = None

    def canonical_for_write(self, raw: str) -> str:
        value = self.parse(raw)
        if self.write_check is not None:
            self.write_check(value)
        return self.render(value)

    def parse(self, raw: str) -> Any:
        """Turn the stored text into a typed value; raise ConfigValueError with a clear message."""
        text = raw.strip() if isinstance(raw, str) else raw
        try:
            if self.value_type == "int":
                if isinstance(text, bool):
                    raise ValueError
                value: Any = int(text)
            elif self.value_type == "float":
                value = float(text)
                if value != value or value in (float("inf"), float("-inf")):
                    raise ValueError
            elif self.value_type == "bool":
                lowered = str(text).lower()
                if lowered not in {"true", "false", "1", "0"}:
                    raise ValueError
                value = lowered in {"true", "1"}
            elif self.value_type == "json":
                value = json.loads(text) if isinstance(text, str) else text
            else:
                value = str(text)
        except (TypeError, ValueError):
            raise ConfigValueError(f"{self.key}: {raw!r} is not a valid {self.value_type}") from None
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        if self.minimum is not None and value < self.minimum:
            raise ConfigValueError(f"{self.key}: {value} is below the minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ConfigValueError(f"{self.key}: {value} is above the maximum {self.maximum}")
        if self.choices is not None and value not in self.choices:
            raise ConfigValueError(f"{self.key}: {value!r} is not one of {', '.join(self.choices)}")
        if self.validator is not None:
            try:
                self.validator(value)
            except ValueError as exc:
                raise ConfigValueError(f"{self.key}: {exc}") from None

    def render(self, value: Any) -> str:
        if self.value_type == "bool":
            return "true" if value else "false"
        if self.value_type == "json":
            return json.dumps(value, ensure_ascii=False)
        return str(value)


def _sandbox_runner_check(enabled: Any) -> None:
    if not enabled:
        return

    status = runner_status()
    if not status.available:
        raise ConfigValueError(f"sandbox.enabled cannot be turned on here: {status.reason}")
def _prices(value: Any) -> None:
    validate_prices(value)


def _budget(key: str, default: int, description: str, category: str = "prompt") -> ConfigKey:
    return ConfigKey(key, "int", default, category, description, minimum=1, maximum=1_000_000)


KEYS: tuple[ConfigKey, ...] = (
    # Prompt budget: one global cap, evidence first, aux streams share the rest
    _budget("rag.context_max_tokens", 3000, N_("Token budget for the evidence chunks in the prompt, counted as the "
            "prompt shows them (each numbered block with its header line)."), "rag"),
    _budget("prompt.budget.aux_max_tokens", 2500, N_("Shared budget of computations, memory and history.")),
    _budget("prompt.budget.computations_max_tokens", 1500, N_("Cap for sandbox computation output.")),
    _budget("prompt.budget.memory_max_tokens", 600, N_("Cap for long-term memory in the prompt.")),
    _budget("prompt.budget.history_max_tokens", 1000, N_("Cap for conversation history in the prompt.")),
    _budget("prompt.budget.total_max_tokens", 6000, N_("Global ceiling for the whole prompt.")),
    ConfigKey("prompt.history.rolling_summary", "bool", True, "prompt",
              N_("Summarise the dropped head of a long history with the cheap model.")),
    _budget("prompt.history.summary_max_tokens", 300, N_("Budget of the rolling history summary.")),
    _budget("prompt.history.message_max_chars", 600, N_("Each history message is cut to this many characters.")),
    # Agentic loop
    ConfigKey("agentic.enabled", "bool", True, "agentic", N_("Route complex questions through the tool-calling loop.")),
    ConfigKey("agentic.max_iterations", "int", 4, "agentic", N_("Maximum tool-calling rounds per question."),
              minimum=1, maximum=10),
    ConfigKey("sandbox.enabled", "bool", False, "agentic",
              N_("Offer executeCode (model-written Python in a sandbox)."),
              write_check=_sandbox_runner_check),
    ConfigKey("sandbox.timeout_seconds", "float", 5.0, "agentic", N_("Wall-time limit of one sandbox run."),
              minimum=0.5, maximum=60),
    ConfigKey("sandbox.memory_mb", "int", 256, "agentic", N_("Memory limit of one sandbox run (MiB)."),
              minimum=32, maximum=4096),
    # Retrieval
    ConfigKey("retrieval.top_k", "int", 6, "retrieval", N_("Chunks kept after rerank and MMR."), minimum=1, maximum=50),
    ConfigKey("retrieval.candidate_k", "int", 30, "retrieval", N_("Candidates fetched from each retriever."),
              minimum=1, maximum=500),
    ConfigKey("retrieval.vector_weight", "float", 1.0, "retrieval", N_("RRF weight of the vector retriever."),
              minimum=0, maximum=10),
    ConfigKey("retrieval.bm25_weight", "float", 1.0, "retrieval", N_("RRF weight of the BM25 retriever."),
              minimum=0, maximum=10),
    ConfigKey("retrieval.rrf_k", "int", 60, "retrieval", N_("RRF constant k (adapted to the candidate count)."),
              minimum=1, maximum=1000),
    ConfigKey("retrieval.hyde.enabled", "bool", False, "retrieval",
              N_("Embed a hypothetical answer (one-shot path only).")),
    ConfigKey("retrieval.web_compensation_on_low", "bool", True, "retrieval",
              N_("Add web results when the grade is LOW.")),
    ConfigKey("retrieval.query_max_chars", "int", 2000, "retrieval", N_("Longest query the retrieve API accepts."),
              minimum=1, maximum=100000),
    ConfigKey("mmr.lambda", "float", 0.7, "retrieval", N_("MMR relevance/diversity trade-off."), minimum=0, maximum=1),
    ConfigKey("mmr.similarity", "str", "cosine", "retrieval", N_("MMR similarity: cosine over embeddings or jaccard."),
              choices=("cosine", "jaccard")),
    ConfigKey("compress.near_dup_jaccard", "float", 0.85, "retrieval",
              N_("Bigram Jaccard at or above which two chunks are near-duplicates."), minimum=0, maximum=1),
    ConfigKey("compress.window_chars", "int", 800, "retrieval", N_("Long chunks are cut to a window of this size."),
              minimum=100, maximum=10000),
    ConfigKey("grader.mode", "str", "heuristic", "retrieval", N_("CRAG grey-zone arbitration."),
              choices=("heuristic", "cross_encoder", "disabled")),
    ConfigKey("grader.web_fallback_on_ambiguous", "bool", True, "retrieval",
              N_("Add web results when the grade is AMBIGUOUS and KB entities are weak.")),
    ConfigKey("grader.high_threshold", "float", 0.6, "retrieval",
              N_("Rerank score at or above which it counts as strong."),
              minimum=0, maximum=1),
    ConfigKey("grader.low_threshold", "float", 0.3, "retrieval", N_("Rerank score below which it counts as weak."),
              minimum=0, maximum=1),
    # Chunking
    ConfigKey("chunk.parent_chars", "int", 1000, "ingestion", N_("Target size of a parent chunk (characters)."),
              minimum=200, maximum=10000),
    ConfigKey("chunk.child_chars", "int", 240, "ingestion", N_("Target size of a child chunk (characters)."),
              minimum=50, maximum=2000),
    # Models
    ConfigKey("llm.main_model", "str", "qwen-plus", "llm", N_("Model that writes answers.")),
    ConfigKey("llm.small_model", "str", "qwen-turbo", "llm", N_("Cheap model for classification and planning.")),
    ConfigKey("memory.extract_model", "str", "qwen-flash", "llm", N_("Cheapest model: memory extraction, summaries.")),
    ConfigKey("llm.price_per_1k_tokens", "json", {}, "llm",
              N_('Price per 1k tokens per model, for usage cost: {"qwen-plus": {"input": 0.0008, "output": 0.002}} '
                 'or {"model": 0.001} for both directions. Empty: token counts without cost.'),
              validator=_prices),
    ConfigKey("llm.temperature", "float", 0.2, "llm",
              N_("Sampling temperature of the main model."), minimum=0, maximum=2),
    ConfigKey("llm.interactive_timeout_seconds", "float", 15.0, "llm",
              N_("Timeout of one model call (or one wait between streamed tokens) during a chat turn; "
              "such calls are retried at most once."), minimum=1, maximum=300),
    ConfigKey("llm.structured_outputs", "str", "auto", "llm",
              N_("Ask the model for JSON replies that fit their schema (response_format json_schema): auto stops "
                 "asking a model whose endpoint refuses it, on always asks, off never does. Replies are validated "
                 "either way."), choices=STRUCTURED_OUTPUT_MODES),
    # Chat
    ConfigKey("chat.max_message_chars", "int", 4000, "chat", N_("Longest question a user may send."),
              minimum=1, maximum=100000),
    ConfigKey("chat.turn_deadline_seconds", "float", 60.0, "chat",
              N_("A chat turn that has not finished after this long ends with an llm_timeout error."),
              minimum=1, maximum=600),
    ConfigKey("chat.direct_read.max_chunks", "int", 12, "chat",
              N_("Chunks sampled evenly from a selected document for a direct read."), minimum=1, maximum=200),
    ConfigKey("answer.abstain_below", "float", 0.01, "chat",
              N_("Calibrated confidence below which the answer says the knowledge base does not answer the question."),
              minimum=0, maximum=1),
    ConfigKey("answer.confidence_medium", "float", 0.5, "chat",
              N_("Calibrated confidence from which an answer is not labelled low-relevance (band medium)."),
              minimum=0, maximum=1),
    # The lowest value at which answers badged high were right at least 95 % of the time on the tuning halves of the
    # evaluation sets (docs/decisions/confidence-calibration.md): the badge promises that much.
    ConfigKey("answer.confidence_high", "float", 0.9, "chat", N_("Calibrated confidence from which the band is high."),
              minimum=0, maximum=1),
    ConfigKey("cache.semantic.enabled", "bool", True, "chat", N_("Reuse answers of near-identical questions.")),
    ConfigKey("cache.semantic.threshold", "float", 0.97, "chat",
              N_("Query-embedding cosine at or above which a cached answer is reused."), minimum=0.5, maximum=1),
    # Long-term memory
    ConfigKey("memory.enabled", "bool", True, "memory",
              N_("Recall long-term memories into answers and extract new ones.")),
    ConfigKey("memory.extraction.enabled", "bool", True, "memory",
              N_("After each answered turn, extract memories from what the user said about themselves.")),
    ConfigKey("memory.duplicate_threshold", "float", 0.85, "memory",
              N_("Similarity at or above which a new memory duplicates an active one of the same type (keep one)."),
              minimum=0, maximum=1),
    ConfigKey("memory.supersede_threshold", "float", 0.75, "memory",
              N_("Similarity at or above which a new memory supersedes an active one of the same type."),
              minimum=0, maximum=1),
    ConfigKey("memory.similarity.calibrate", "bool", True, "memory",
              N_("Rescale cosine so that 0 is the embedder's typical similarity of unrelated texts (small local "
              "models put every pair above 0.8, which would make the thresholds above meaningless).")),
    ConfigKey("memory.max_per_user", "int", 200, "memory", N_("Active memories kept per user; the lowest-value "
              "ones beyond it are evicted (soft delete)."), minimum=1, maximum=100000),
    ConfigKey("memory.eviction.decay_days", "float", 14.0, "memory",
              N_("Eviction value = exp(-ageDays/decay_days) + access_weight·log1p(accessCount)."),
              minimum=0.1, maximum=3650),
    ConfigKey("memory.eviction.access_weight", "float", 0.5, "memory", N_("Weight of use in the eviction value."),
              minimum=0, maximum=100),
    ConfigKey("memory.cache_ttl_seconds", "int", 7 * 24 * 3600, "memory",
              N_("Lifetime of a user's cached memory set (cache-aside; the database stays the record)."),
              minimum=1, maximum=365 * 24 * 3600),
    ConfigKey("memory.vector_max_chars", "int", 300, "memory", N_("Characters of a memory that are embedded."),
              minimum=20, maximum=2000),
    ConfigKey("memory.recall.top_k", "int", 5, "memory", N_("Memories recalled by similarity per question."),
              minimum=1, maximum=50),
    ConfigKey("memory.recall.min_score", "float", 0.2, "memory",
              N_("Similarity (calibrated like the thresholds) below which a memory is not relevant."),
              minimum=-1, maximum=1),
    ConfigKey("memory.recall.margin", "float", 0.1, "memory",
              N_("A recalled memory must also score within this margin of the best match."), minimum=0, maximum=2),
)

BY_KEY: dict[str, ConfigKey] = {k.key: k for k in KEYS}


def spec(key: str) -> ConfigKey:
    try:
        return BY_KEY[key]
    except KeyError:
        raise UnknownConfigKey(key) from None


def seed_rows(apps: Any, schema_editor: Any = None) -> None:
    """Create the rows of every declared key that is missing; never overwrite an edited value."""
    model = apps.get_model("config_admin", "SysAiConfig")
    for item in KEYS:
        model.objects.get_or_create(
            key=item.key,
            defaults={
                "value": item.render(item.default),
                "value_type": item.value_type,
                "category": item.category,
                "description": item.description,
            },
        )
