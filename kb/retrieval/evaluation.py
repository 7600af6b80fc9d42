"""Retrieval quality metrics over SQuAD-format question sets (used by the eval_retrieval command)."""
from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paragraph:
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    paragraph: int  # index into the paragraph list
    answers: tuple[str, ...]


def load_squad(path: Path) -> tuple[list[Paragraph], list[Question]]:
    """Paragraphs (one future document each) and their questions, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs: list[Paragraph] = []
    questions: list[Question] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            paragraphs.append(Paragraph(title=str(article.get("title") or "untitled"), text=para["context"]))
            for qa in para.get("qas", []):
                answers = tuple(a["text"] for a in qa.get("answers", []) if a.get("text"))
                questions.append(Question(text=qa["question"], paragraph=len(paragraphs) - 1, answers=answers))
    return paragraphs, questions


@dataclass(frozen=True)
class Outcome:
    """One question's result: the ranked document ids and the evidence texts the answer step sees."""

    ranked_docs: Sequence[int]
    evidence: Sequence[str]
    latency_ms: float


@dataclass
class Metrics:
    name: str
    recall_at_1: float
    recall_at_5: float
    mrr: float
    answer_in_evidence_at_5: float
    p50_ms: float
    p95_ms: float
    questions: int

    def row(self) -> str:
        return (f"{self.name:<12} recall@1 {self.recall_at_1:.4f}  recall@5 {self.recall_at_5:.4f}  "
                f"MRR {self.mrr:.4f}  answer-in-evidence@5 {self.answer_in_evidence_at_5:.4f}  "
                f"p50 {self.p50_ms:.1f} ms  p95 {self.p95_ms:.1f} ms  (n={self.questions})")


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def score(name: str, questions: Sequence[Question], gold_doc: Callable[[Question], int],
          outcomes: Sequence[Outcome]) -> Metrics:
    r1 = r5 = rr = aie = 0.0
    for question, outcome in zip(questions, outcomes, strict=True):
        ranked = list(dict.fromkeys(outcome.ranked_docs))  # distinct documents, first occurrence
        gold = gold_doc(question)
        if gold in ranked:
            rank = ranked.index(gold) + 1
            r1 += rank == 1
            r5 += rank <= 5
            rr += 1 / rank
        text = "\n".join(outcome.evidence[:5])
        aie += any(answer in text for answer in question.answers)
    n = max(1, len(questions))
    latencies = [o.latency_ms for o in outcomes]
    return Metrics(name, r1 / n, r5 / n, rr / n, aie / n, percentile(latencies, 50), percentile(latencies, 95),
                   len(questions))


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0
