"""What one asked question scored, and the report over many: answer-hit, cites-gold, false "not found",
wrong-and-unflagged, retrieval@5, document recall@5 and MRR, latency and the reliability of each confidence band.

One engine for `manage.py eval_answers` and the product's evaluation runs (the `evals` app)."""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Categories whose questions the documents do not answer, those that ask nothing, and those that ask back what the
# user said earlier in the conversation ("我在哪里工作？" after "我在上海工作"): the last two are about the user, and no
# document answers them.
UNANSWERABLE = "unanswerable"
STATEMENT = "statement"
RECALL = "recall"
PERSONAL = frozenset({STATEMENT, RECALL})
BANDS = ("high", "medium", "low", "none", "")


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    category: str
    split: str = ""
    # Alternatives, any one of which makes a hit; an alternative that is a tuple needs all its parts in the answer.
    answers: tuple[str | tuple[str, ...], ...] = ()
    documents: tuple[str, ...] = ()
    conversation: str = ""
    turn: int = 0
    # Earlier questions of the same conversation, asked first (a follow-up without a conversation of its own).
    history: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        return bool(self.documents) and self.category not in PERSONAL


def load_questions(paths: Iterable[Path]) -> list[EvalQuestion]:
    """JSON lines (or one JSON list) of {id, question, category, split?, answers, documents, conversation?,
    turn?, history?}; an item of `answers` may itself be a list, all of whose parts must appear (as the
    evaluation API takes them)."""
    questions: list[EvalQuestion] = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        rows = json.loads(text) if text.lstrip().startswith("[") else \
            [json.loads(line) for line in text.splitlines() if line.strip()]
        for n, row in enumerate(rows, 1):
            questions.append(EvalQuestion(
                id=str(row.get("id") or f"{path.stem}-{n}"), question=row["question"],
                category=row.get("category") or "uncategorised", split=row.get("split", ""),
                answers=answer_alternatives(row.get("answers", [])),
                documents=tuple(str(d) for d in row.get("documents", [])),
                conversation=str(row.get("conversation") or ""), turn=int(row.get("turn") or 0),
                history=tuple(str(h) for h in row.get("history", []) if str(h).strip())))
    return questions


def answer_alternatives(raw: Iterable) -> tuple[str | tuple[str, ...], ...]:
    """A list of alternatives as files and the API give it: a string, or a list of strings that must all appear."""
    out: list[str | tuple[str, ...]] = []
    for item in raw:
        if isinstance(item, list | tuple):
            parts = tuple(str(p) for p in item if str(p).strip())
            if parts:
                out.append(parts[0] if len(parts) == 1 else parts)
        elif str(item).strip():
            out.append(str(item))
    return tuple(out)


def normalise(text: str) -> str:
    """Case, spaces and digit grouping do not decide a hit: "20,000 CNY" = "20000cny"."""
    text = re.sub(r"(?<=\d)[,，](?=\d{3})", "", text.lower())
    return re.sub(r"\s+", "", text)


@dataclass
class Outcome:
    """What the user saw for one question."""

    answer: str = ""
    cited: tuple[str, ...] = ()        # file names of the cited documents
    retrieved: tuple[str, ...] = ()    # file names of the evidence documents, best first
    band: str = ""
    score: float | None = None
    no_evidence: bool = False          # "not in the knowledge base"
    low_confidence: bool = False       # answered under the low-relevance label
    rewritten: str = ""
    error: str = ""
    citations: tuple[dict, ...] = ()   # the `done` event's citations, location included
    latency_ms: float = 0.0

    @property
    def flagged(self) -> bool:
        return self.no_evidence or self.low_confidence or self.band in ("low", "none")


@dataclass
class Scored:
    question: EvalQuestion
    outcome: Outcome
    hit: bool = False
    cites_gold: bool = False
    retrieved_at_5: bool = False
    recall_at_5: float | None = None       # share of the gold documents among the first five retrieved
    reciprocal_rank: float | None = None   # 1 / rank of the first gold document retrieved, 0 when none
    false_not_found: bool = False
    wrong_unflagged: bool = False
    right: bool = False
    extra: dict = field(default_factory=dict)


def score(question: EvalQuestion, outcome: Outcome) -> Scored:
    """Answerable: the answer holds a gold alternative. Unanswerable: the reply says the documents do not answer
    (no evidence, or the low-relevance label). Statement: acknowledged without citing any document. Recall: the
    answer holds a gold alternative (what the user said) and cites no document."""
    scored = Scored(question=question, outcome=outcome)
    if outcome.error:
        return scored
    if question.category == STATEMENT:
        scored.hit = scored.right = bool(outcome.answer.strip()) and not outcome.cited and not outcome.no_evidence
        scored.wrong_unflagged = bool(outcome.cited)
        return scored
    if question.category == RECALL:
        scored.hit = scored.right = _holds_answer(question, outcome) and not outcome.cited
        scored.wrong_unflagged = not scored.hit and not outcome.flagged
        return scored
    if not question.answerable:
        scored.hit = scored.right = outcome.flagged
        scored.wrong_unflagged = not outcome.flagged
        return scored
    scored.hit = scored.right = _holds_answer(question, outcome)
    gold = set(question.documents)
    scored.cites_gold = bool(gold & set(outcome.cited))
    scored.retrieved_at_5 = bool(gold & set(outcome.retrieved[:5]))
    scored.recall_at_5 = len(gold & set(outcome.retrieved[:5])) / len(gold)
    rank = next((n for n, name in enumerate(outcome.retrieved, 1) if name in gold), None)
    scored.reciprocal_rank = 1 / rank if rank else 0.0
    scored.false_not_found = outcome.no_evidence
    scored.wrong_unflagged = not scored.hit and not outcome.flagged
    return scored


def _holds_answer(question: EvalQuestion, outcome: Outcome) -> bool:
    answer = normalise(outcome.answer)
    return any(all(normalise(part) in answer for part in ((a,) if isinstance(a, str) else a))
               for a in question.answers)


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 3) if kept else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0…100), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))], 1)


def summary(rows: Sequence[Scored]) -> dict:
    answerable = [r for r in rows if r.question.answerable]
    unanswerable = [r for r in rows if not r.question.answerable and r.question.category not in PERSONAL]
    knowledge = [r for r in rows if r.question.category not in PERSONAL and not r.outcome.error]
    latencies = [r.outcome.latency_ms for r in rows if not r.outcome.error and r.outcome.latency_ms]
    return {
        "n": len(rows),
        "answer_hit": _share([r.hit for r in rows]),
        "cites_gold": _share([r.cites_gold for r in answerable]),
        "retrieval_at_5": _share([r.retrieved_at_5 for r in answerable]),
        "recall_at_5": _mean([r.recall_at_5 for r in answerable]),
        "mrr": _mean([r.reciprocal_rank for r in answerable]),
        "flagged": _share([r.outcome.flagged for r in knowledge]),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "false_not_found": _share([r.false_not_found for r in answerable]),
        "wrong_unflagged": _share([r.wrong_unflagged for r in rows]),
        "answerable_flagged": _share([r.outcome.flagged for r in answerable]),
        "unanswerable_flagged": _share([r.outcome.flagged for r in unanswerable]),
        "errors": sum(bool(r.outcome.error) for r in rows),
    }


def reliability(rows: Sequence[Scored]) -> dict[str, dict]:
    """Per confidence band of the answers to knowledge questions: how many, and the share that was right."""
    table: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        if r.question.category not in PERSONAL and not r.outcome.error:
            table[r.outcome.band or "(none)"].append(r.right)
    return {band: {"n": len(v), "right": _share(v)} for band, v in sorted(table.items())}


def report(rows: Sequence[Scored]) -> dict:
    """Overall, per split, per category and per (split, category), and the reliability table per split."""
    splits = sorted({r.question.split for r in rows})
    categories = sorted({r.question.category for r in rows})
    out: dict = {"overall": summary(rows), "reliability": reliability(rows), "splits": {}}
    for split in splits:
        in_split = [r for r in rows if r.question.split == split]
        out["splits"][split or "(none)"] = {
            "overall": summary(in_split), "reliability": reliability(in_split),
            "categories": {c: summary([r for r in in_split if r.question.category == c]) for c in categories
                           if any(r.question.category == c for r in in_split)}}
    out["categories"] = {c: summary([r for r in rows if r.question.category == c]) for c in categories}
    return out


def rows_as_dicts(rows: Sequence[Scored]) -> list[dict]:
    return [{**asdict(r.question), **asdict(r.outcome), "hit": r.hit, "cites_gold": r.cites_gold,
             "retrieved_at_5": r.retrieved_at_5, "recall_at_5": r.recall_at_5,
             "reciprocal_rank": r.reciprocal_rank, "false_not_found": r.false_not_found,
             "wrong_unflagged": r.wrong_unflagged, "flagged": r.outcome.flagged} for r in rows]


def table(name: str, stats: dict) -> str:
    def f(v: float | None) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    return (f"{name:<26} n {stats['n']:>4}  hit {f(stats['answer_hit'])}  cites {f(stats['cites_gold'])}  "
            f"ret@5 {f(stats['retrieval_at_5'])}  false-nf {f(stats['false_not_found'])}  "
            f"wrong-unflagged {f(stats['wrong_unflagged'])}  flagged(ans {f(stats['answerable_flagged'])} "
            f"/ unans {f(stats['unanswerable_flagged'])})")
