"""Evaluation run benchmark: a 200-item run of the development corpus, offline, in a real server, and the chat
latency of 10 concurrent chats before it (idle) and while it runs — one invocation, one server.

Run:

    .venv/bin/python -m bench.eval_run_bench --out /tmp/eval_run_bench.json [--items 200 --chats 10 --turns 6]
    [--smoke]   (--smoke: 2 items, 1 chat of 1 turn; it still starts a server and ingests the corpus)

Starts daphne on loopback over a throw-away data dir (SQLite, Milvus Lite, offline answers), ingests
eval/corpus/docs, creates a set of the first N single-turn questions of eval/corpus/questions.jsonl through
`POST /api/eval/sets/`, then:
1. idle (after an uncounted warm-up round): `--chats` WebSocket clients each ask `--turns` questions one after
   another (p50/p95 per turn);
2. during: starts the run (`POST /api/eval/runs/`), waits for its first answered item, runs the same chat load,
   then waits for the run to finish (bounded by `--run-timeout`).
Reports the run's wall time and metrics, both chat phases, and the p95 ratio (target ≤ 1.5, run ≤ 300 s).

`--cancel-after S` (e.g. `--items 10000 --cancel-after 120`): no chat phases; the set is created (the corpus's
questions repeated up to N), a run of it started and, after S seconds, cancelled. Reports how long creating the
set took, items answered per second, the server process's resident memory at the start and its peak while the
run ran, and how long the cancel took to end the run: a large set costs per item, not per set.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.chat_bench import login, one_chat
from bench.common import ROOT, arguments, percentile, write_json
from tests.browser.live_server import PYTHON, LiveServer

CORPUS = ROOT / "eval" / "corpus"
STAFF = {"username": "bench-staff", "password": "bench-staff-pass-123"}


def api(server: LiveServer, token: str, method: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, method=method, headers={
        "Authorization": f"Token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"{}")


def items(n: int) -> list[dict]:
    rows = [json.loads(line) for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    single = [r for r in rows if not r.get("conversation")]
    # More items than the corpus has questions: the questions again, in order.
    return [{"question": r["question"], "answers": [[a] for a in r.get("answers", [])],
             "documents": r.get("documents", []), "category": r.get("category") or "general"}
            for r in (single[i % len(single)] for i in range(n))]


def rss_mb(pid: int) -> float:
    """Resident memory of one process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cancelled_run(server: LiveServer, token: str, kb: int, n: int, after: float, timeout: float) -> dict:
    """Create a set of `n` items, run it for `after` seconds, cancel it; what each step cost."""
    pid = server.process.pid
    t0 = time.perf_counter()
    eval_set = api(server, token, "POST", "/api/eval/sets/", {"name": f"bench-{n}", "kb": kb, "items": items(n)})
    create_seconds = time.perf_counter() - t0
    rss_start = peak = rss_mb(pid)
    run = api(server, token, "POST", "/api/eval/runs/", {"set": eval_set["id"]})
    started = time.perf_counter()
    series = []  # (seconds, items answered, resident MB) every 15 s: memory must not grow with the items
    while time.perf_counter() - started < after:
        time.sleep(1)
        peak = max(peak, rss_mb(pid))
        if int(time.perf_counter() - started) // 15 > len(series) - 1:
            done = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")["done"]
            series.append((round(time.perf_counter() - started), done, rss_mb(pid)))
    state = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")
    ran, done_before = time.perf_counter() - started, state["done"]
    asked = time.perf_counter()
    api(server, token, "POST", f"/api/eval/runs/{run['id']}/cancel/")
    while time.perf_counter() - asked < timeout:
        state = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")
        if state["status"] not in ("queued", "running", "cancelling"):
            break
        time.sleep(0.2)
    return {"items": n, "set_create_seconds": round(create_seconds, 1), "ran_seconds": round(ran, 1),
            "done": done_before, "items_per_second": round(done_before / ran, 2), "rss_mb_start": rss_start,
            "rss_mb_peak": peak, "series": series, "cancel_seconds": round(time.perf_counter() - asked, 2),
            "status": state["status"], "done_at_end": state["done"], "total": state["total"]}


def chat_load(server: LiveServer, cookie: str, questions: list[str], chats: int, turns: int) -> dict:
    async def client(k: int) -> list[tuple[bool, float, str]]:
        out = []
        for t in range(turns):
            out.append(await one_chat(server.port, cookie, questions[(k * turns + t) % len(questions)], 120))
        return out

    async def run_all() -> list[list[tuple[bool, float, str]]]:
        return await asyncio.gather(*(client(k) for k in range(chats)))

    t0 = time.perf_counter()
    results = [r for per in asyncio.run(run_all()) for r in per]
    totals = [t for ok, t, _ in results if ok]
    return {"turns": len(results), "errors": sum(not ok for ok, _, _ in results),
            "p50_ms": round(percentile(totals, .5) * 1000, 1), "p95_ms": round(percentile(totals, .95) * 1000, 1),
            "wall_seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.split("\n")[0]))
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--chats", type=int, default=10)
    parser.add_argument("--turns", type=int, default=6, help="questions each chat client asks in a phase")
    parser.add_argument("--run-timeout", type=float, default=900)
    parser.add_argument("--cancel-after", type=float, default=None,
                        help="no chat phases: run the set this many seconds, then cancel it (see above)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.chats, args.turns = 2, 1, 1

    data_dir = Path(tempfile.mkdtemp(prefix="docmind-eval-bench-"))
    server = LiveServer(data_dir=data_dir, username="bench-reader", password="bench-reader-pass-123",
                        extra_env={"DOCMIND_CHAT_TURNS_PER_USER": "1000"})
    server.prepare(staff=STAFF)
    ingest = subprocess.run([PYTHON, "manage.py", "ingest", str(CORPUS / "docs")], cwd=ROOT, env=server.env(),
                            capture_output=True, text=True, timeout=1800)
    if ingest.returncode:
        raise SystemExit(f"ingest failed:\n{ingest.stdout}\n{ingest.stderr}")
    server.start()
    try:
        token = _token(server)
        kb = next(b["id"] for b in api(server, token, "GET", "/api/kbs/") if b["is_default"])
        if args.cancel_after is not None:
            write_json({"mode": "offline", "cancelled_run": cancelled_run(
                server, token, kb, args.items, args.cancel_after, args.run_timeout)}, args.out)
            return
        set_items = items(args.items)
        eval_set = api(server, token, "POST", "/api/eval/sets/", {"name": "bench", "kb": kb, "items": set_items})
        cookie = login(server.url, server.username, server.password)
        questions = [i["question"] for i in items(400)][::-1]  # other questions than the run's first ones
        chat_load(server, cookie, questions, args.chats, 2)  # warm-up (models, indexes, connections): not counted
        idle = chat_load(server, cookie, questions, args.chats, args.turns)

        started = time.perf_counter()
        run = api(server, token, "POST", "/api/eval/runs/", {"set": eval_set["id"]})
        deadline = started + args.run_timeout
        while time.perf_counter() < deadline:
            state = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")
            if state["done"] > 0 or state["status"] not in ("queued", "running"):
                break
            time.sleep(0.5)
        during = chat_load(server, cookie, questions, args.chats, args.turns)
        done_at_chat_end = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")["done"]
        while time.perf_counter() < deadline:
            state = api(server, token, "GET", f"/api/eval/runs/{run['id']}/?limit=0")
            if state["status"] not in ("queued", "running", "cancelling"):
                break
            time.sleep(1)
        run_seconds = round(time.perf_counter() - started, 1)
    finally:
        server.stop()
    result = {
        "mode": "offline", "items": len(set_items), "chats": args.chats, "turns_per_chat": args.turns,
        "run": {"status": state["status"], "done": state["done"], "total": state["total"], "seconds": run_seconds,
                "items_done_when_chat_load_ended": done_at_chat_end,
                "metrics": {k: v for k, v in state["metrics"].items() if k not in ("categories", "reliability")}},
        "chat_idle": idle, "chat_during_run": during,
        "p95_ratio": round(during["p95_ms"] / idle["p95_ms"], 2) if idle["p95_ms"] else None,
    }
    write_json(result, args.out)


def _token(server: LiveServer) -> str:
    request = urllib.request.Request(server.url + "/api/auth/token/", data=json.dumps(STAFF).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["token"]


if __name__ == "__main__":
    main()
