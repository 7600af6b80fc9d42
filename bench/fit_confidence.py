"""Fit the calibrated confidence (chat/confidence.py) on the CMRC 2018 trial set.

Run after bench/conversation_bench.py has built its data dir (same --data-dir, same --holdout-every):
  .venv/bin/python -m bench.fit_confidence --data-dir /tmp/bench-conv [--sample 0.5] [--out fit.json]

Every answerable and held-back question goes through ChatPipeline (offline); the evidence features the
pipeline stored with the answer are the inputs, "the answer contains a gold answer" the label. Prints the
weights of the two logistic regressions of chat/confidence.py (Newton's method, small L2): "answerable"
(answerable against held-back questions) and "right" (among answerable questions, the answer contains the
gold answer); the AUROC on the even and odd halves when fitted on the other half; and for candidate
abstention thresholds the share of each group that P(answerable) would flag.
"""
from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path

import numpy as np

from bench.common import arguments, bench_user, setup_django, write_json
from bench.conversation_bench import SMOKE_PARAGRAPHS, SMOKE_QUESTIONS, auroc, load, sample, warm_up

# The signals each model keeps: a fit on all of them put large opposite-signed weights on correlated
# signals (rerank score and lexical coverage), which would not transfer to other data. "right" uses the
# written answer's `answer_focus` (the pipeline stores it once the answer exists) and what the question
# asks for (an explanation or list, or a number or date); on held-out questions that ranked answers better
# than the best evidence sentence alone.
ANSWERABLE_FEATURES = ("rerank_top1", "best_sentence", "sentence_cover")
RIGHT_FEATURES = ("rerank_top1", "answer_focus", "open_ended", "asks_quantity", "sentence_cover", "best_said")


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    """Logistic regression with an intercept (last weight) by Newton's method."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + l2 * np.r_[w[:-1], 0]
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + l2 * np.diag(np.r_[np.ones(len(w) - 1), 0])
        try:
            w -= np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:  # one class only, or separable (a tiny sample): take the least-norm step
            w -= np.linalg.lstsq(hess, grad, rcond=None)[0]
    return w


def _chunk(data: dict):
    from docmind.evidence import ScoredChunk, Source

    return ScoredChunk(chunk_id=data["chunk_id"], content=data["content"], score=data["score"],
                       source=Source(data["source"]), document_id=data["document_id"],
                       document_title=data["document_title"], context=data["context"],
                       stage_scores=data["stage_scores"])


def replay(record: dict) -> dict[str, float]:
    """The calibrator's features of one recorded turn, computed by the current chat/confidence.py."""
    from chat.confidence import answer_features, evidence_features
    from kb.retrieval.types import Grade, GradeResult

    chunks = [_chunk(c) for c in record["chunks"]]
    grade = GradeResult(grade=Grade(record["grade"]["grade"]), rerank_top1=record["grade"]["rerank_top1"],
                        lex_coverage=record["grade"]["lex_coverage"], kb_entity_weak=False,
                        web_compensation_needed=False)
    features = evidence_features(question=record["question"], chunks=chunks, grade=grade)
    if record["answer"]:
        features.update(answer_features(question=record["question"], chunks=chunks, answer=record["answer"]))
    return features


def collect(args) -> list[dict]:
    """Ask every sampled question once (abstention off) and record what the calibrator saw: the question it
    assessed, the evidence chunks, the grade and the written answer."""
    from chat.confidence import ConfidenceCalibrator

    seen: dict = {}
    run, on_answer = ConfidenceCalibrator.run, ConfidenceCalibrator.on_answer

    # The wrappers pass every other argument through unchanged: a new keyword of the calibrator (as
    # `unnamed_subject` was) must not break the recording.
    def recording_run(self, *, question, chunks, grade, **rest):
        seen.update(question=question, grade={"grade": grade.grade.value, "rerank_top1": grade.rerank_top1,
                                              "lex_coverage": grade.lex_coverage},
                    chunks=[{**c.as_dict(), "stage_scores": dict(c.stage_scores)} for c in chunks])
        return run(self, question=question, chunks=chunks, grade=grade, **rest)

    def recording_on_answer(self, *, assessment, answer, **rest):
        seen["answer"] = answer
        return on_answer(self, assessment=assessment, answer=answer, **rest)

    ConfidenceCalibrator.run, ConfidenceCalibrator.on_answer = recording_run, recording_on_answer
    try:
        return _ask_all(args, seen)
    finally:
        ConfidenceCalibrator.run, ConfidenceCalibrator.on_answer = run, on_answer


def _ask_all(args, seen: dict) -> list[dict]:
    from chat.pipeline import ChatPipeline
    from chat.pipeline.stages import build_stages

    warm_up()
    if args.smoke:
        _, answerable, unanswerable, _ = load(args.holdout_every, SMOKE_PARAGRAPHS)
        answerable, unanswerable = answerable[:SMOKE_QUESTIONS], unanswerable[:SMOKE_QUESTIONS]
    else:
        _, answerable, unanswerable, _ = load(args.holdout_every)
    user = bench_user("bench-fit")
    # Nothing abstains while fitting (an abstention would label itself wrong) and nothing is cached.
    pipeline = ChatPipeline(stages_factory=lambda snap, kb_ids: build_stages(kb_ids=kb_ids, snapshot=
        {**snap, "answer.abstain_below": 0.0, "answer.confidence_medium": 0.0, "cache.semantic.enabled": False}))
    records = []
    for group, questions in (("answerable", sample(answerable, args.sample)),
                             ("unanswerable", sample(unanswerable, args.sample))):
        for q in questions:
            seen.clear()
            done = None
            for event in pipeline.run(user=user, message=q["question"], cancel=threading.Event()):
                if event.type == "done":
                    done = event.data
            if done is None or not seen.get("chunks"):
                continue
            records.append({"group": group, "asked": q["question"], "question": seen["question"],
                            "hit": any(a in done["answer"] for a in q["answers"]), "chunks": seen["chunks"],
                            "grade": seen["grade"], "answer": seen.get("answer", "")})
    return records


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-conv"))
    parser.add_argument("--holdout-every", type=int, default=10)
    parser.add_argument("--sample", type=float, default=1.0)
    parser.add_argument("--cache", type=Path, default=None, help="reuse/write the collected features here")
    args = parser.parse_args(argv)
    if args.smoke:  # over what `conversation_bench --smoke` ingested
        args.holdout_every = 2
    setup_django(data_dir=args.data_dir, offline=False, migrate=False)
    from chat.confidence import FEATURES

    if args.cache and args.cache.exists():
        records = json.loads(args.cache.read_text())
    else:
        records = collect(args)
        if args.cache:
            args.cache.write_text(json.dumps(records, ensure_ascii=False))
    # Features are recomputed from the recorded inputs with the current code, so a changed signal is
    # tried without asking the questions again.
    rows = [{"group": r["group"], "hit": r["hit"], "features": replay(r)} for r in records]
    hit = np.array([float(r["hit"]) for r in rows])
    answerable = np.array([float(r["group"] == "answerable") for r in rows])

    def matrix(names: tuple[str, ...]) -> np.ndarray:
        return np.array([[r["features"][f] for f in names] for r in rows])

    def prob(w: np.ndarray, m: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(np.hstack([m, np.ones((len(m), 1))]) @ w)))

    xa, xr = matrix(ANSWERABLE_FEATURES), matrix(RIGHT_FEATURES)
    # Halves by position within each group (every other question, as `--sample 0.5` picks them): the weights
    # are fitted on the even half and every figure below is measured on the odd half, never in sample.
    position = np.zeros(len(rows), dtype=int)
    for group in ("answerable", "unanswerable"):
        members = [i for i, r in enumerate(rows) if r["group"] == group]
        position[members] = np.arange(len(members))

    def fitted(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return fit(xa[train], answerable[train]), fit(xr[train & (answerable > 0)], hit[train & (answerable > 0)])

    even, odd = position % 2 == 0, position % 2 == 1
    w_ans, w_right = fitted(even)
    result: dict = {"records": len(rows), "fitted_on_even_half": {}, "halves": {}, "odd_half_flagged_below": {}}
    for name, names, w in (("ANSWERABLE_WEIGHTS", ANSWERABLE_FEATURES, w_ans),
                           ("RIGHT_WEIGHTS", RIGHT_FEATURES, w_right)):
        weights = dict.fromkeys(FEATURES, 0.0) | {f: round(float(v), 2) for f, v in zip(names, w[:-1], strict=True)}
        result["fitted_on_even_half"][name] = {**weights, "bias": round(float(w[-1]), 2)}
    for label, train, test in (("even -> odd", even, odd), ("odd -> even", odd, even)):
        wa, wr = fitted(train)
        p_ans = prob(wa, xa[test])
        score = p_ans * prob(wr, xr[test])
        ans = answerable[test] > 0
        result["halves"][label] = {
            "auroc_hit": round(auroc(list(score), list(hit[test] > 0)), 4),
            "auroc_hit_given_answerable": round(auroc(list(score[ans]), list(hit[test][ans] > 0)), 4),
            "auroc_answerable": round(auroc(list(p_ans), list(ans)), 4)}
    p_ans = prob(w_ans, xa[odd])
    for t in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        result["odd_half_flagged_below"][f"{t:.2f}"] = {
            "unanswerable": round(float(np.mean(p_ans[answerable[odd] == 0] < t)), 3),
            "answerable": round(float(np.mean(p_ans[answerable[odd] > 0] < t)), 3)}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
