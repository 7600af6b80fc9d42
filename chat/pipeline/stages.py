"""Builds every stage of one chat turn from one config snapshot (the only place that knows constructors)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import cache as django_cache

from chat.answer_cache import SemanticAnswerCache
from chat.citations import CitationParser
from chat.confidence import ConfidenceCalibrator
from chat.direct_read import DocumentDirectReader
from chat.generation import AnswerGenerator
from chat.meta_answers import MetaAnswerer
from chat.offline.extractive import ExtractiveAnswerer
from chat.path import PathRouter
from chat.prompt import HistorySummarizer, PromptAssembler, PromptParams
from chat.understanding import QueryUnderstanding
from docmind import backends
from docmind.bilingual import LazyLexicon
from docmind.evidence import EvidenceBudget
from docmind.llm.base import ChatModel
from memory.compose import memory_params

if TYPE_CHECKING:
    from kb.retrieval.params import RetrievalParams
    from kb.retrieval.pipeline import OneShotRetriever
    from memory.types import MemoryParams


@dataclass
class TurnStages:
    snapshot: Mapping[str, Any]
    # The turn's readable knowledge bases: every retrieval stage built here filters on them.
    kb_ids: frozenset[int]
    # Read once per turn: the one-shot retriever and the agentic loop use them, and their evidence budget
    # is the prompt's and the direct read's.
    retrieval_params: RetrievalParams
    # Recall, extraction and the MEMORY scope get these values; they never read the config.
    memory: MemoryParams
    chat_model: ChatModel | None
    understanding: QueryUnderstanding
    router: PathRouter
    assembler: PromptAssembler
    generator: AnswerGenerator
    citations: CitationParser
    calibrator: ConfidenceCalibrator
    answer_cache: SemanticAnswerCache
    # The cheap model that condenses old history when it is over budget; None offline (hard cut).
    summarizer: HistorySummarizer | None
    # Built lazily: a greeting never needs the retrieval stack (embedder, vector store, reranker).
    _retriever_factory: Callable[[], OneShotRetriever]
    _direct_reader_factory: Callable[[], DocumentDirectReader]
    _meta_factory: Callable[[], MetaAnswerer]
    _retriever: OneShotRetriever | None = None

    @property
    def main_model(self) -> str:
        return str(self.snapshot["llm.main_model"])

    @property
    def extractive(self) -> bool:
        """Offline mode: the answer is built from evidence sentences, not written by a model."""
        return self.chat_model is None

    @property
    def retriever(self) -> OneShotRetriever:
        if self._retriever is None:
            self._retriever = self._retriever_factory()
        return self._retriever

    def direct_reader(self) -> DocumentDirectReader:
        return self._direct_reader_factory()

    def meta(self) -> MetaAnswerer:
        return self._meta_factory()


def build_stages(snapshot: Mapping[str, Any], *, kb_ids: frozenset[int]) -> TurnStages:
    # heavy: the retrieval stages load scipy (MMR, about 0.2 s) on the first turn; the URL conf imports this module
    from kb.retrieval.compose import build_one_shot_retriever, retrieval_params

    chat_model = backends.get_chat_model()
    retrieval = retrieval_params(snapshot)
    return TurnStages(
        snapshot=snapshot,
        kb_ids=frozenset(kb_ids),
        retrieval_params=retrieval,
        memory=memory_params(snapshot),
        chat_model=chat_model,
        understanding=QueryUnderstanding(chat_model, str(snapshot["llm.small_model"]),
                                         structured_outputs=str(snapshot["llm.structured_outputs"]),
                                         lexicon=LazyLexicon()),
        router=PathRouter(agentic_enabled=bool(snapshot["agentic.enabled"])),
        assembler=PromptAssembler(prompt_params(snapshot, retrieval.evidence)),
        generator=AnswerGenerator(chat_model, str(snapshot["llm.main_model"]), float(snapshot["llm.temperature"]),
                                  extractive=ExtractiveAnswerer(embedder=backends.get_embedder(),
                                                                means=backends.get_language_means())),
        citations=CitationParser(),
        calibrator=ConfidenceCalibrator(abstain_below=float(snapshot["answer.abstain_below"]),
                                        medium_from=float(snapshot["answer.confidence_medium"]),
                                        high_from=float(snapshot["answer.confidence_high"]),
                                        weak_rerank_below=float(snapshot["grader.low_threshold"])),
        answer_cache=SemanticAnswerCache(
            embedder=backends.get_embedder(), backend=django_cache, enabled=bool(snapshot["cache.semantic.enabled"]),
            threshold=float(snapshot["cache.semantic.threshold"]),
        ),
        summarizer=None if chat_model is None else HistorySummarizer(chat_model, str(snapshot["memory.extract_model"])),
        # The same retriever as the retrieve API's, so the API shows the evidence a chat answer sees.
        _retriever_factory=lambda: build_one_shot_retriever(snapshot, kb_ids=kb_ids, params=retrieval),
        # The sample is the prompt's evidence, so it gets the prompt's evidence budget.
        _direct_reader_factory=lambda: DocumentDirectReader(max_chunks=int(snapshot["chat.direct_read.max_chunks"]),
                                                            budget=retrieval.evidence),
        _meta_factory=lambda: _meta_answerer(chat_model, snapshot),
    )


def prompt_params(snapshot: Mapping[str, Any], evidence: EvidenceBudget) -> PromptParams:
    """The prompt's budgets; the evidence budget is the one retrieval packed with, passed in, not read again."""
    return PromptParams(
        evidence=evidence,
        aux_max_tokens=int(snapshot["prompt.budget.aux_max_tokens"]),
        computations_max_tokens=int(snapshot["prompt.budget.computations_max_tokens"]),
        memory_max_tokens=int(snapshot["prompt.budget.memory_max_tokens"]),
        history_max_tokens=int(snapshot["prompt.budget.history_max_tokens"]),
        total_max_tokens=int(snapshot["prompt.budget.total_max_tokens"]),
        rolling_summary=bool(snapshot["prompt.history.rolling_summary"]),
        summary_max_tokens=int(snapshot["prompt.history.summary_max_tokens"]),
        message_max_chars=int(snapshot["prompt.history.message_max_chars"]),
    )


def _meta_answerer(chat_model: ChatModel | None, snapshot: Mapping[str, Any]) -> MetaAnswerer:
    return MetaAnswerer()
