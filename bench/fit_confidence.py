"""Fit the calibrated confidence (chat/confidence.py) on the tuning halves of the evaluation sets.

Two kinds of set, each collected once into a record file, then fitted together:
  CMRC 2018 trial, after bench/conversation_bench.py has built its data dir (same --data-dir, --holdout-every):
    .venv/bin/python -m bench.fit_confidence --data-dir /tmp/bench-conv --cache cmrc.json
  an evaluation set of JSON lines as `manage.py eval_answers` reads them (eval/corpus/questions.jsonl), its
  documents ingested into a data dir of its own:
    .venv/bin/python -m bench.fit_confidence --questions eval/corpus/questions.jsonl --data-dir /tmp/fit-corpus \
      --cache corpus.json --with cmrc.json --out fit.json

Every question goes through ChatPipeline (offline, abstention off); the evidence features the calibrator saw
are the inputs, "the answer contains a gold answer" the label. CMRC's halves are every other question of each
group (even: tune); an evaluation set's are its `split` field. The weights of the two logistic regressions of
chat/confidence.py (Newton's method, small L2) — "answerable" (answerable against unanswerable questions) and
"right" (among answerable questions, the answer contains a gold answer) — are fitted on every set's tuning half
and measured on each set's check half: AUROC, the share of each group flagged at candidate thresholds, and how
often answers in each confidence band are right.
"""
from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.evidence import ScoredChunk, Source

    return ScoredChunk(chunk_id=data["chunk_id"], content=data["content"], score=data["score"],
                       source=Source(data["source"]), document_id=data["document_id"],
                       document_title=data["document_title"], context=data["context"],
                       stage_scores=data["stage_scores"])


def replay(record: dict) -> dict[str, float]:
    """The calibrator's features of one recorded turn, computed by the current chat/confidence.py."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
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


@contextmanager
def recording(seen: dict) -> Iterator[None]:
    """While inside, every assessment of the calibrator writes into `seen` the question it assessed, the
    evidence chunks, the grade and the written answer."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.confidence import ConfidenceCalibrator

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
        yield
    finally:
        ConfidenceCalibrator.run, ConfidenceCalibrator.on_answer = run, on_answer


# Nothing abstains while collecting (an abstention would label itself wrong) and nothing is cached.
NO_ABSTENTION = {"answer.abstain_below": 0.0, "answer.confidence_medium": 0.0, "cache.semantic.enabled": False}


def collect(args) -> list[dict]:
    """Ask every sampled CMRC question once and record what the calibrator saw."""
    seen: dict = {}
    with recording(seen):
        return _ask_all(args, seen)


def _ask_all(args, seen: dict) -> list[dict]:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.pipeline import ChatPipeline
    from chat.pipeline.stages import build_stages

    warm_up()
    if args.smoke:
        _, answerable, unanswerable, _ = load(args.holdout_every, SMOKE_PARAGRAPHS)
        answerable, unanswerable = answerable[:SMOKE_QUESTIONS], unanswerable[:SMOKE_QUESTIONS]
    else:
        _, answerable, unanswerable, _ = load(args.holdout_every)
    user = bench_user("bench-fit")
    pipeline = ChatPipeline(stages_factory=lambda snap, kb_ids: build_stages(kb_ids=kb_ids,
                                                                              snapshot={**snap, **NO_ABSTENTION}))
    records = []
    for group, questions in (("answerable", sample(answerable, args.sample)),
                             ("unanswerable", sample(unanswerable, args.sample))):
        for position, q in enumerate(questions):
            seen.clear()
            done = None
            for event in pipeline.run(user=user, message=q["question"], cancel=threading.Event()):
                if event.type == "done":
                    done = event.data
            if done is None or not seen.get("chunks"):
                continue
            records.append({"set": "cmrc", "half": "tune" if position % 2 == 0 else "check", "group": group,
                            "asked": q["question"], "question": seen["question"],
                            "hit": any(a in done["answer"] for a in q["answers"]), "chunks": seen["chunks"],
                            "grade": seen["grade"], "answer": seen.get("answer", "")})
    return records


def collect_set(path: Path, *, smoke: bool = False) -> list[dict]:
    """Ask an evaluation set (its documents ingested from docs/ beside it, as `manage.py eval_answers` does) and
    record what the calibrator saw for each question's own turn; statements assess no evidence and are left out."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.evaluation.runner import Asker, eval_user, ingest_files
    from chat.evaluation.scoring import PERSONAL, load_questions, score

    questions = [q for q in load_questions([path]) if q.category not in PERSONAL]
    if smoke:
        questions = questions[:SMOKE_QUESTIONS * 2]
    docs = path.parent / "docs"
    ids = ingest_files(sorted(p for p in docs.iterdir() if p.is_file()), domain="fit-confidence")
    seen: dict = {}

    class RecordingAsker(Asker):
        def _events(self, message, conversation_id):  # only the last turn asked (the question itself) is kept
            seen.clear()
            return super()._events(message, conversation_id)

    asker = RecordingAsker(user=eval_user("bench-fit-set"), names_by_id={v: k for k, v in ids.items()},
                           overrides=NO_ABSTENTION)
    records = []
    with recording(seen):
        for q in questions:
            outcome = asker.ask(q)
            if outcome.error or not seen.get("chunks"):
                continue
            records.append({"set": path.stem, "half": q.split or "tune", "category": q.category,
                            "group": "answerable" if q.answerable else "unanswerable", "asked": q.question,
                            "question": seen["question"], "hit": score(q, outcome).hit if q.answerable else False,
                            "chunks": seen["chunks"], "grade": seen["grade"], "answer": seen.get("answer", "")})
    return records


def _with_halves(records: list[dict]) -> list[dict]:
    """Records of an older cache, which named neither set nor half: CMRC's, halved by position in each group."""
    position = {"answerable": 0, "unanswerable": 0}
    for r in records:
        if "half" not in r:
            r["set"], r["half"] = "cmrc", "tune" if position[r["group"]] % 2 == 0 else "check"
            position[r["group"]] += 1
    return records


def matrix(rows: list[dict], names: tuple[str, ...]) -> np.ndarray:
    """The named features of each row, a row each."""
    return np.array([[r["features"][f] for f in names] for r in rows])


def prob(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(np.hstack([m, np.ones((len(m), 1))]) @ w)))


def measure(rows: list[dict], w_ans: np.ndarray, w_right: np.ndarray, *, medium_from: float,
            high_from: float) -> dict:
    """What the fitted weights do on `rows`: AUROC of the score for a right answer (all, and within answerable
    questions), of P(answerable) for answerable questions, the share of each group P(answerable) flags at
    candidate thresholds, and the share right of the answerable questions in each band of the score."""
    hit = np.array([bool(r["hit"]) for r in rows])
    ans = np.array([r["group"] == "answerable" for r in rows])
    p_ans = prob(w_ans, matrix(rows, ANSWERABLE_FEATURES))
    score = p_ans * prob(w_right, matrix(rows, RIGHT_FEATURES))
    bands = np.where(score >= high_from, "high", np.where(score >= medium_from, "medium", "low"))
    return {
        "n": len(rows), "answerable": int(ans.sum()),
        "auroc_hit": round(auroc(list(score), list(hit)), 4),
        "auroc_hit_given_answerable": round(auroc(list(score[ans]), list(hit[ans])), 4) if ans.any() else None,
        "auroc_answerable": round(auroc(list(p_ans), list(ans)), 4) if ans.any() and (~ans).any() else None,
        "flagged_below": {f"{t:.2f}": {"unanswerable": round(float(np.mean(p_ans[~ans] < t)), 3) if (~ans).any()
                                       else None,
                                       "answerable": round(float(np.mean(p_ans[ans] < t)), 3)}
                          for t in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)},
        "right_per_band": {band: {"n": int((bands[ans] == band).sum()),
                                  "right": round(float(hit[ans][bands[ans] == band].mean()), 3)
                                  if (bands[ans] == band).any() else None} for band in ("high", "medium", "low")}}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-conv"))
    parser.add_argument("--holdout-every", type=int, default=10)
    parser.add_argument("--sample", type=float, default=1.0)
    parser.add_argument("--questions", type=Path, default=None,
                        help="collect this evaluation set (JSON lines, documents in docs/ beside it) instead of CMRC")
    parser.add_argument("--cache", type=Path, default=None, help="reuse/write the collected records here")
    parser.add_argument("--with", dest="also", type=Path, nargs="*", default=[],
                        help="record files of other sets (their --cache) to fit together with")
    args = parser.parse_args(argv)
    if args.smoke:  # over what `conversation_bench --smoke` ingested
        args.holdout_every = 2
    setup_django(data_dir=args.data_dir, offline=False, migrate=args.questions is not None)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.confidence import FEATURES
    from config_admin.registry import spec

    if args.cache and args.cache.exists():
        records = json.loads(args.cache.read_text())
    else:
        records = collect_set(args.questions, smoke=args.smoke) if args.questions else collect(args)
        if args.cache:
            args.cache.write_text(json.dumps(records, ensure_ascii=False))
    for path in args.also:
        records = records + json.loads(path.read_text())
    # Features are recomputed from the recorded inputs with the current code, so a changed signal is
    # tried without asking the questions again.
    rows = [{**r, "features": replay(r)} for r in _with_halves(records)]
    tune = [r for r in rows if r["half"] == "tune"]
    answerable_tune = [r for r in tune if r["group"] == "answerable"]
    w_ans = fit(matrix(tune, ANSWERABLE_FEATURES), np.array([float(r["group"] == "answerable") for r in tune]))
    w_right = fit(matrix(answerable_tune, RIGHT_FEATURES), np.array([float(r["hit"]) for r in answerable_tune]))
    result: dict = {"records": len(rows), "fitted_on_tune_halves": {}, "sets": {}}
    for name, names, w in (("ANSWERABLE_WEIGHTS", ANSWERABLE_FEATURES, w_ans),
                           ("RIGHT_WEIGHTS", RIGHT_FEATURES, w_right)):
        weights = dict.fromkeys(FEATURES, 0.0) | {f: round(float(v), 2) for f, v in zip(names, w[:-1], strict=True)}
        result["fitted_on_tune_halves"][name] = {**weights, "bias": round(float(w[-1]), 2)}
    bands = {"medium_from": spec("answer.confidence_medium").default,
             "high_from": spec("answer.confidence_high").default}
    for set_name in sorted({r["set"] for r in rows}):
        result["sets"][set_name] = {half: measure([r for r in rows if r["set"] == set_name and r["half"] == half],
                                                  w_ans, w_right, **bands)
                                    for half in ("tune", "check")
                                    if any(r["set"] == set_name and r["half"] == half for r in rows)}
    write_json(result, args.out)


if __name__ == "__main__":
    main()
