"""Stop latency: how long after the client's `cancel` frame the `error: cancelled` event arrives.

Run: .venv/bin/python -m bench.cancel_bench [--data-dir /tmp/bench-cancel] [--trials 20] [--out result.json]
     [--smoke]   (--smoke: one trial; it still starts a server)

Starts daphne on loopback over a fresh data dir holding the six demo documents, then, per trial,
asks a long comparison question (the agentic route: planner rounds, several searches, one
rerank of the union) over /ws/chat/ and sends `cancel` after a delay that sweeps the turn
(0.05 s to 1.5 s after the question, so Stop lands in understanding, retrieval, the loop and
generation alike). Reports, for the trials that were still running when Stop arrived, the time
from sending `cancel` to receiving `error: cancelled` (p50, p95, max); the target is under 1 s.
"""
from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from bench.chat_bench import MiniWebSocket, login
from bench.common import ROOT, arguments, percentile, write_json
from tests.browser.live_server import LiveServer

QUESTIONS = [
    "对比一下支付失败的排查步骤和基础设施故障的处理流程，分别有哪些步骤？两者在升级和回滚上有什么区别？",
    "Compare how payment webhook retries work with how a Kubernetes CrashLoopBackOff is handled: "
    "which steps does each take, and how do their escalation rules differ?",
]


async def one_trial(port: int, cookie: str, question: str, delay: float) -> tuple[str, float]:
    ws = await asyncio.wait_for(MiniWebSocket.connect(
        "127.0.0.1", port, "/ws/chat/", {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie}), 10)
    try:
        await ws.send_json({"type": "ask", "message": question})
        sent = None
        loop = asyncio.get_running_loop()
        stop_at = loop.time() + delay
        while True:
            wait = None if sent is not None else max(0.0, stop_at - loop.time())
            try:
                frame = await asyncio.wait_for(ws.recv_json(), wait if wait is not None else 60)
            except TimeoutError:
                if sent is None:
                    await ws.send_json({"type": "cancel"})
                    sent = time.perf_counter()
                    continue
                return "timeout", float("nan")
            if frame["type"] == "done":
                return "finished first", float("nan")
            if frame["type"] == "error":
                if frame["data"].get("code") == "cancelled" and sent is not None:
                    return "cancelled", time.perf_counter() - sent
                return frame["data"].get("code", "error"), float("nan")
    finally:
        await ws.close()


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-cancel"))
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args(argv)
    if args.smoke:
        args.trials = 1
    demo = ROOT / "kb" / "demo_docs"
    texts = [{"title": p.stem, "text": p.read_text(encoding="utf-8"), "domain": p.parent.name}
             for p in sorted(demo.rglob("*.md"))]
    # One account stands for many users here: no per-user share of the turn pool.
    server = LiveServer(data_dir=args.data_dir, username="bench-cancel", password="bench-cancel-pass-123",
                        extra_env={"DOCMIND_CHAT_TURNS_PER_USER": "1000"})
    server.prepare(texts=texts)
    server.apply()  # ingested by a process of its own: the server's figures start from a server that only serves
    server.start()
    try:
        cookie = login(server.url, server.username, server.password)
        outcomes: list[tuple[str, float]] = []
        for i in range(args.trials):
            delay = 0.05 + (1.45 * i / max(1, args.trials - 1))
            outcomes.append(asyncio.run(one_trial(server.port, cookie, QUESTIONS[i % len(QUESTIONS)], delay)))
    finally:
        server.stop()
    latencies = [t for kind, t in outcomes if kind == "cancelled"]
    kinds: dict[str, int] = {}
    for kind, _ in outcomes:
        kinds[kind] = kinds.get(kind, 0) + 1
    write_json({"trials": args.trials, "outcomes": kinds,
                "stop_to_cancelled_ms": {"p50": round(percentile(latencies, .5) * 1000, 1),
                                         "p95": round(percentile(latencies, .95) * 1000, 1),
                                         "max": round(max(latencies, default=float("nan")) * 1000, 1)}}, args.out)


if __name__ == "__main__":
    main()
