"""Conversation benchmark: follow-ups, abstention, calibration and single-turn quality through `POST /api/chat/`.

Run: .venv/bin/python -m bench.conversation_bench --data-dir /tmp/bench-conv [--sample 0.25] [--out out.json] [--smoke]

Every paragraph of the CMRC 2018 trial set ($DOCMIND_EVAL_DIR/cmrc2018_trial.json) becomes one document, except every
`--holdout-every`-th paragraph, which is held back so that its questions have no answer in the KB.
Questions go through the public SSE endpoint (Django's test client, in process, offline mode unless
OPENAI_* is set) and the events are read as a browser would read them.

- single turn: answer contains a gold answer; a citation points at the gold document.
- follow-ups: turn 1 is the paragraph's first question; turn 2 a later question of the same paragraph
  that names the article title, with the title replaced by a pronoun, asked with `conversation_id`.
  The same pronoun question asked alone is the control.
- abstention: share of held-back questions flagged (`start.no_evidence` or `start.low_confidence`), against
  the share of answerable single-turn questions flagged.
- answer length: mean characters after the lead line (single turn and follow-ups), so that a higher hit
  rate bought by quoting more text is visible.
- calibration: AUROC of `done.confidence_score` for "the answer contains the gold answer", over the
  answerable single-turn questions, and over those plus the held-back ones — also reweighted to a fixed
  share of held-back questions, since that share moves the figure more than the score does.

`--sample F` keeps a deterministic fraction of the questions (for iterating; report full runs).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from bench.common import arguments, bench_user, eval_file, setup_django, write_json
from docmind.indexes.snapshot import settle

PRONOUN = "它"
# --smoke: the first paragraphs of the file (every other one held back) and a few questions of each kind.
SMOKE_PARAGRAPHS = 4
SMOKE_QUESTIONS = 2


def weighted_auroc(positives: list[float], negatives: list[tuple[float, float]]) -> float:
    """Probability that a random positive outscores a random negative drawn by weight (ties count half);
    `negatives` are (score, weight) pairs."""
    total = sum(w for _, w in negatives)
    if not positives or not total:
        return float("nan")
    wins = sum(w * ((p > n) + 0.5 * (p == n)) for p in positives for n, w in negatives)
    return wins / (len(positives) * total)


def auroc(scores: list[float], labels: list[bool]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    pairs = list(zip(scores, labels, strict=True))
    return weighted_auroc([s for s, y in pairs if y], [(s, 1.0) for s, y in pairs if not y])


def auroc_at_share(answerable: list[dict], held_back: list[dict], share: float) -> float:
    """AUROC(hit) over answerable and held-back questions as if `share` of all questions were held back: each
    held-back question is weighted instead of sampled. The AUROC over all questions depends mostly on that
    share (a held-back question is far easier to score low than a wrong answer to an answerable one), so
    runs with different shares are compared at one share."""
    weight = share / (1 - share) * len(answerable) / len(held_back) if held_back else 0.0
    negatives = [(r["score"], 1.0) for r in answerable if not r["hit"]] + [(r["score"], weight) for r in held_back]
    return weighted_auroc([r["score"] for r in answerable if r["hit"]], negatives)


def load(holdout_every: int, paragraphs: int | None = None) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Documents to ingest, answerable and held-back questions, follow-up pairs; from the first `paragraphs`
    paragraphs only if given."""
    data = json.loads(eval_file().read_text(encoding="utf-8"))["data"]
    kept, answerable, unanswerable, followups = [], [], [], []
    index = 0
    for article in data:
        title = article.get("title") or ""
        for para in article["paragraphs"]:
            if paragraphs is not None and index >= paragraphs:
                break
            held = holdout_every > 0 and index % holdout_every == holdout_every - 1
            index += 1
            qas = [{"question": qa["question"], "paragraph": para["id"],
                    "answers": [a["text"] for a in qa["answers"] if a["text"]]}
                   for qa in para["qas"] if qa["question"].strip()]
            if held:
                unanswerable.extend(qas)
                continue
            kept.append({"id": para["id"], "title": title or para["id"], "text": para["context"]})
            answerable.extend(qas)
            later = [q for q in qas[1:] if title and len(title) >= 2 and title in q["question"]]
            if len(qas) >= 2 and later:
                turn2 = dict(later[0], question=later[0]["question"].replace(title, PRONOUN))
                followups.append({"turn1": qas[0], "turn2": turn2})
    return kept, answerable, unanswerable, followups


def warm_up() -> None:
    """Load the in-process indexes before the first question, as the server does at start-up: a data dir
    ingested by an earlier run (a copied pristine one) is otherwise opened by the first search."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    get_vector_store().warm_up(wait=True)
    get_lexical_index().warm_up(wait=True)


def sample(items: list, fraction: float) -> list:
    if fraction >= 1:
        return items
    step = max(1, round(1 / fraction))
    return items[::step]


class Asker:
    """One user asking through the SSE endpoint; returns what a browser would show."""

    def __init__(self, client, runner: asyncio.Runner) -> None:
        self.client = client
        self.runner = runner

    def ask(self, message: str, conversation_id: int | None = None) -> dict:
        body = {"message": message}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        return self.runner.run(self._ask(body))

    async def _ask(self, body: dict) -> dict:
        response = await self.client.post("/api/chat/", data=json.dumps(body), content_type="application/json")
        if response.status_code != 200:
            return {"error": f"HTTP {response.status_code}"}
        raw = b"".join([piece async for piece in response.streaming_content]).decode("utf-8")
        events: dict[str, dict] = {}
        for block in raw.split("\n\n"):
            kind, data = None, None
            for line in block.splitlines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:].strip())
            if kind and data is not None:
                events.setdefault(kind, data)
                if kind == "done":
                    events["done"] = data
        if "done" not in events:
            return {"error": events.get("error", {}).get("code", "no done event")}
        start = events.get("start", {})
        done = events["done"]
        return {
            "answer": done["answer"],
            "documents": {c.get("document_id") for c in done.get("citations", [])},
            "score": float(done.get("confidence_score") or 0.0),
            "band": done.get("confidence_band", ""),
            "flagged": bool(start.get("no_evidence") or start.get("low_confidence")),
            "conversation_id": done["conversation_id"],
            "rewritten": events.get("understanding", {}).get("rewritten", ""),
        }


def hit(result: dict, q: dict) -> bool:
    return "answer" in result and any(a in result["answer"] for a in q["answers"])


def cites(result: dict, q: dict, doc_of: dict[str, int]) -> bool:
    return doc_of[q["paragraph"]] in result.get("documents", set())


def share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else float("nan")


def quoted_chars(result: dict) -> int:
    """Length of what the answer says after its lead line: a hit bought by quoting more shows up here."""
    answer = result.get("answer") or ""
    return len(answer.split("\n\n", 1)[1]) if "\n\n" in answer else len(answer)


def mean(values: list[int]) -> float:
    return round(sum(values) / len(values), 1) if values else float("nan")


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-conv"))
    parser.add_argument("--holdout-every", type=int, default=10)
    parser.add_argument("--sample", type=float, default=1.0)
    parser.add_argument("--ingest-only", action="store_true",
                        help="stop after ingestion (copy the data dir to run both sides on the same index)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.holdout_every = 2

    # A model key, if set, is used: the figures are the offline answers only without one.
    setup_django(data_dir=args.data_dir, offline=False)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.test import AsyncClient

    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text

    kept, answerable, unanswerable, followups = load(args.holdout_every, SMOKE_PARAGRAPHS if args.smoke else None)
    started = time.monotonic()
    doc_of = {}
    for p in kept:
        document, _ = document_ingest_text(title=p["title"], text=p["text"], domain="cmrc", filename=f"{p['id']}.txt")
        doc_of[p["id"]] = document.pk
    process_pending_documents()
    warm_up()
    ingest_s = round(time.monotonic() - started, 1)
    if args.ingest_only:
        settle()  # the index snapshots are saved now, so that each copy of this data dir starts from them
        print(json.dumps({"documents": len(kept), "ingest_seconds": ingest_s}))
        return

    runner = asyncio.Runner()

    def asker(name: str) -> Asker:
        # One user per phase: the semantic answer cache is per user and must not carry answers across phases.
        user = bench_user(f"bench-conv-{name}")
        client = AsyncClient()
        runner.run(client.aforce_login(user))
        return Asker(client, runner)

    answerable, unanswerable, followups = (sample(answerable, args.sample), sample(unanswerable, args.sample),
                                           sample(followups, args.sample))
    if args.smoke:
        answerable, unanswerable, followups = (answerable[:SMOKE_QUESTIONS], unanswerable[:SMOKE_QUESTIONS],
                                               followups[:1])
    rows: dict[str, list] = {"single": [], "unanswerable": [], "followup": [], "control": []}
    t0 = time.monotonic()
    single = asker("single")
    for q in answerable:
        r = single.ask(q["question"])
        rows["single"].append({"q": q["question"], "gold": q["answers"], "answer": r.get("answer", ""),
                               "hit": hit(r, q), "cites": cites(r, q, doc_of),
                               "chars": quoted_chars(r),
                               "score": r.get("score", 0.0), "flagged": r.get("flagged", False),
                               "band": r.get("band", ""), "error": r.get("error")})
    held = asker("held")
    for q in unanswerable:
        r = held.ask(q["question"])
        rows["unanswerable"].append({"q": q["question"], "answer": r.get("answer", ""),
                                     "hit": hit(r, q), "score": r.get("score", 0.0),
                                     "flagged": r.get("flagged", False), "error": r.get("error")})
    conv = asker("followup")
    control = asker("control")
    for pair in followups:
        first = conv.ask(pair["turn1"]["question"])
        second = conv.ask(pair["turn2"]["question"], first.get("conversation_id"))
        q = pair["turn2"]
        rows["followup"].append({"q": q["question"], "rewritten": second.get("rewritten", ""),
                                 "gold": q["answers"], "answer": second.get("answer", ""),
                                 "hit": hit(second, q), "cites": cites(second, q, doc_of),
                                 "chars": quoted_chars(second),
                                 "error": second.get("error")})
        alone = control.ask(q["question"])
        rows["control"].append({"q": q["question"], "hit": hit(alone, q), "cites": cites(alone, q, doc_of),
                                "error": alone.get("error")})
    ask_s = round(time.monotonic() - t0, 1)

    s, u, f, c = rows["single"], rows["unanswerable"], rows["followup"], rows["control"]
    report = {
        "documents": len(kept), "ingest_seconds": ingest_s, "ask_seconds": ask_s,
        "errors": sum(bool(r["error"]) for rs in rows.values() for r in rs),
        "single_turn": {"n": len(s), "answer_hit": share([r["hit"] for r in s]),
                        "cites_gold": share([r["cites"] for r in s]),
                        "mean_answer_chars": mean([r["chars"] for r in s])},
        "followup": {"n": len(f), "cites_gold": share([r["cites"] for r in f]),
                     "answer_hit": share([r["hit"] for r in f]),
                     "cites_and_hit": share([r["cites"] and r["hit"] for r in f]),
                     "mean_answer_chars": mean([r["chars"] for r in f])},
        "followup_control_alone": {"n": len(c), "cites_gold": share([r["cites"] for r in c]),
                                   "answer_hit": share([r["hit"] for r in c])},
        "abstention": {"unanswerable_n": len(u), "unanswerable_flagged": share([r["flagged"] for r in u]),
                       "answerable_flagged": share([r["flagged"] for r in s])},
        "calibration": {
            "auroc_answerable": round(auroc([r["score"] for r in s], [r["hit"] for r in s]), 4),
            "auroc_with_unanswerable": round(auroc([r["score"] for r in s + u],
                                                   [r["hit"] for r in s + u]), 4),
            "auroc_at_held_back_share": {str(share): round(auroc_at_share(s, u, share), 4)
                                         for share in (0.1, 0.25, 0.5)},
        },
    }
    write_json({"report": report, "rows": rows}, args.out, echo=report)


if __name__ == "__main__":
    main()
