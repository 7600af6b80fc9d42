"""`SimilarityScale`: cosine rescaled so that 0 is what the embedder gives two unrelated texts.

Small local embedders are anisotropic: multilingual-e5-small puts almost every pair of sentences
above 0.8, so raw cosine thresholds written for a spread-out embedder (0.75 supersede, 0.85
duplicate) would merge unrelated memories. The baseline is measured once per embedder on a fixed
set of unrelated personal statements; `scale(cos) = (cos - baseline) / (1 - baseline)`.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Unrelated statements of the kind memories hold, in both languages; none paraphrases another.
PROBES: tuple[str, ...] = (
    "我在上海的一家银行做后端开发", "我更喜欢简洁的回答", "我每天早上跑步五公里", "我的猫叫小白",
    "请用表格列出对比结果", "我对花生过敏", "I work night shifts at a hospital in Leeds",
    "I prefer answers in English", "My daughter starts school next year", "I am learning to play the cello",
    "Always show shell commands for Ubuntu", "I drive an electric car",
)
PROBE_QUERIES: tuple[str, ...] = (
    "如何配置负载均衡的健康检查", "支付失败后多久可以退款", "What is the retention period for logs?",
    "How do I rotate the database password?",
)


@dataclass(frozen=True)
class SimilarityScale:
    passage_baseline: float = 0.0  # memory vs memory (conflicts)
    query_baseline: float = 0.0  # question vs memory (recall)

    @staticmethod
    def _rescale(cos: float, baseline: float) -> float:
        return (cos - baseline) / (1.0 - baseline) if baseline < 1.0 else cos

    def passages(self, cos: float) -> float:
        return self._rescale(cos, self.passage_baseline)

    def query(self, cos: float) -> float:
        return self._rescale(cos, self.query_baseline)


RAW = SimilarityScale()


def measure_scale(*, embed_passages: Callable[[Sequence[str]], np.ndarray],
                  embed_query: Callable[[str], np.ndarray]) -> SimilarityScale:
    """Mean cosine of distinct unrelated probe pairs, for passage–passage and query–passage."""
    passages = np.asarray(embed_passages(list(PROBES)), dtype=np.float32)
    sims = passages @ passages.T
    upper = sims[np.triu_indices(len(PROBES), k=1)]
    queries = np.stack([np.asarray(embed_query(q), dtype=np.float32) for q in PROBE_QUERIES])
    cross = queries @ passages.T
    return SimilarityScale(passage_baseline=float(np.clip(upper.mean(), -0.99, 0.99)),
                           query_baseline=float(np.clip(cross.mean(), -0.99, 0.99)))


_scales: dict[str, SimilarityScale] = {}
_lock = threading.Lock()


def scale_for(embedder) -> SimilarityScale:
    """The embedder's scale, measured once per process and embedder name."""
    with _lock:
        found = _scales.get(embedder.name)
    if found is None:
        found = measure_scale(embed_passages=embedder.embed_passages, embed_query=embedder.embed_query)
        with _lock:
            _scales[embedder.name] = found
    return found
