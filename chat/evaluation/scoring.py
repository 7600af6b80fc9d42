"""What one asked question scored, and the report over many: answer-hit, cites-gold, false "not found",
wrong-and-unflagged, retrieval@5 and the reliability of each confidence band."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Categories whose questions the documents do not answer, and those that ask nothing.
UNANSWERABLE = "unanswerable"
STATEMENT = "statement"
BANDS = ("high", "medium", "low", "none", "")


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    category: str
    split: str = ""
    answers: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    conversation: str = ""
    turn: int = 0

    @property
    def answerable(self) -> bool:
        return bool(self.documents) and self.category != STATEMENT


def load_questions(paths: Iterable[Path]) -> list[EvalQuestion]:
    """JSON lines (or one JSON list) of {id, question, category, split?, answers, documents, conversation?,
    turn?}; `answers` may also be a list of alternative lists, as the evaluation API takes them."""
    questions: list[EvalQuestion] = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        rows = json.loads(text) if text.lstrip().startswith("[") else \
            [json.loads(line) for line in text.splitlines() if line.strip()]
        for n, row in enumerate(rows, 1):
            answers = [a for item in row.get("answers", []) for a in (item if isinstance(item, list) else [item])]
            questions.append(EvalQuestion(
                id=str(row.get("id") or f"{path.stem}-{n}"), question=row["question"],
                category=row.get("category") or "uncategorised", split=row.get("split", ""),
                answers=tuple(str(a) for a in answers if str(a).strip()),
                documents=tuple(str(d) for d in row.get("documents", [])),
                conversation=str(row.get("conversation") or ""), turn=int(row.get("turn") or 0)))
    return questions


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
    false_not_found: bool = False
    wrong_unflagged: bool = False
    right: bool = False
    extra: dict = field(default_factory=dict)


def score(question: EvalQuestion, outcome: Outcome) -> Scored:
    """Answerable: the answer holds a gold alternative. Unanswerable: the reply says the documents do not answer
    (no evidence, or the low-relevance label). Statement: acknowledged without citing any document."""
    scored = Scored(question=question, outcome=outcome)
    if outcome.error:
        return scored
    if question.category == STATEMENT:
        scored.hit = scored.right = bool(outcome.answer.strip()) and not outcome.cited and not outcome.no_evidence
        scored.wrong_unflagged = bool(outcome.cited)
        return scored
    if not question.answerable:
        scored.hit = scored.right = outcome.flagged
        scored.wrong_unflagged = not outcome.flagged
        return scored
    answer = normalise(outcome.answer)
    scored.hit = scored.right = any(normalise(a) in answer for a in question.answers)
    gold = set(question.documents)
    scored.cites_gold = bool(gold & set(outcome.cited))
    scored.retrieved_at_5 = bool(gold & set(outcome.retrieved[:5]))
    scored.false_not_found = outcome.no_evidence
    scored.wrong_unflagged = not scored.hit and not outcome.flagged
    return scored


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def summary(rows: Sequence[Scored]) -> dict:
    answerable = [r for r in rows if r.question.answerable]
    unanswerable = [r for r in rows if not r.question.answerable and r.question.category != STATEMENT]
    return {
        "n": len(rows),
        "answer_hit": _share([r.hit for r in rows]),
        "cites_gold": _share([r.cites_gold for r in answerable]),
        "retrieval_at_5": _share([r.retrieved_at_5 for r in answerable]),
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
        if r.question.category != STATEMENT and not r.outcome.error:
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
             "retrieved_at_5": r.retrieved_at_5, "false_not_found": r.false_not_found,
             "wrong_unflagged": r.wrong_unflagged, "flagged": r.outcome.flagged} for r in rows]


def table(name: str, stats: dict) -> str:
    def f(v: float | None) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    return (f"{name:<26} n {stats['n']:>4}  hit {f(stats['answer_hit'])}  cites {f(stats['cites_gold'])}  "
            f"ret@5 {f(stats['retrieval_at_5'])}  false-nf {f(stats['false_not_found'])}  "
            f"wrong-unflagged {f(stats['wrong_unflagged'])}  flagged(ans {f(stats['answerable_flagged'])} "
            f"/ unans {f(stats['unanswerable_flagged'])})")
