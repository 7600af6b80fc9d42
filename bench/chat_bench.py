"""Chat benchmark, offline mode: pipeline latency and answer quality on CMRC 2018, then concurrent WebSocket chats.

Run: .venv/bin/python -m bench.chat_bench [--data-dir data/bench-chat] [--questions 100] [--concurrency 50]
     .venv/bin/python -m bench.chat_bench --phase tracing [--rounds 2]   # OpenTelemetry overhead
     [--out result.json] [--smoke]   (--smoke: the pipeline phase on a few passages and questions, in process)

Phase 1 (a child process) ingests every passage of $DOCMIND_EVAL_DIR/cmrc2018_trial.json (one document
per paragraph, kept in the persistent --data-dir so later runs skip ingestion) and asks the first N
questions through ChatPipeline: time to first event / first token (p50, p95), how often the answer
contains the gold answer, how often a citation points at the gold paragraph's document.
Phase 2 starts daphne on loopback over the same data dir and runs C chats at once over /ws/chat/
(a tiny built-in WebSocket client; no extra dependency): error count and p95 total time. The
server is stopped at the end, and every wait is bounded.
Phase "tracing" asks every question with tracing off and on in one process, alternating per
question (OTLP http/protobuf export to a loopback sink that answers 200, so span creation,
serialisation and the exporter's HTTP posts are all paid) and compares the p50 of the two
modes; the target is an overhead of at most 3 %. Run phase 1 once first to ingest the data.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import http.cookiejar
import json
import os
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry import trace

from bench.common import ROOT, arguments, bench_user, eval_file, p50_p95, percentile, setup_django, write_json
from tests.browser.live_server import LiveServer

SMOKE_PARAGRAPHS = 3
SMOKE_QUESTIONS = 3


def load_questions(n: int, paragraphs: int | None = None) -> tuple[list[dict], list[dict]]:
    """Every paragraph (or the first `paragraphs`) and the first `n` of their questions."""
    data = json.loads(eval_file().read_text(encoding="utf-8"))["data"]
    paragraphs_out, questions = [], []
    for article in data:
        for para in article["paragraphs"]:
            if paragraphs is not None and len(paragraphs_out) >= paragraphs:
                break
            paragraphs_out.append({"id": para["id"], "title": article.get("title") or para["id"],
                                   "text": para["context"]})
            for qa in para["qas"]:
                questions.append({"question": qa["question"], "paragraph": para["id"],
                                  "answers": [a["text"] for a in qa["answers"]]})
    return paragraphs_out, questions[:n]


# ---------------------------------------------------------------- phase 1: in-process pipeline
def phase_pipeline(data_dir: Path, n: int, paragraphs: int | None = None) -> dict:
    setup_django(data_dir=data_dir)
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.pipeline import ChatPipeline
    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text

    paragraphs, questions = load_questions(n, paragraphs)
    started = time.monotonic()
    doc_of = {}
    for p in paragraphs:
        document, _ = document_ingest_text(title=p["title"], text=p["text"], domain="cmrc", filename=f"{p['id']}.txt")
        doc_of[p["id"]] = document.pk
    process_pending_documents()
    ingest_s = time.monotonic() - started
    # A member, like the WebSocket phase's user: members read the default knowledge base, where the
    # passages went; a user without a role reads no base and every answer would be "nothing found".
    user = bench_user("bench-chat")

    first_event, first_token, totals, gold, cited, errors = [], [], [], 0, 0, 0
    pipeline = ChatPipeline()
    for q in questions:
        t0 = time.perf_counter()
        t_event = t_token = None
        last = None
        for event in pipeline.run(user=user, message=q["question"], cancel=threading.Event()):
            now = time.perf_counter() - t0
            t_event = now if t_event is None else t_event
            if event.type == "token" and t_token is None:
                t_token = now
            last = event
        totals.append(time.perf_counter() - t0)
        first_event.append(t_event or 0.0)
        if t_token is not None:
            first_token.append(t_token)
        if last is None or last.type != "done":
            errors += 1
            continue
        answer = last.data["answer"]
        gold += any(a and a in answer for a in q["answers"])
        cited += any(c.get("document_id") == doc_of[q["paragraph"]] for c in last.data["citations"])
    count = len(questions)
    return {
        "questions": count, "documents": len(paragraphs), "ingest_seconds": round(ingest_s, 1), "errors": errors,
        "first_event_ms": p50_p95(first_event, scale=1000), "first_token_ms": p50_p95(first_token, scale=1000),
        "total_ms": p50_p95(totals, scale=1000),
        "answer_contains_gold": round(gold / count, 3), "citation_points_at_gold_doc": round(cited / count, 3),
    }


# ---------------------------------------------------------------- phase 2: concurrent WebSocket chats
class MiniWebSocket:
    """Just enough RFC 6455 for a load test: handshake, masked text frames out, text frames in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, host: str, port: int, path: str, headers: dict[str, str]) -> MiniWebSocket:
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13", *[f"{k}: {v}" for k, v in headers.items()]]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = await reader.readline()
        if b" 101 " not in status:
            raise ConnectionError(f"handshake refused: {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        return cls(reader, writer)

    async def send_json(self, payload: dict) -> None:
        data = json.dumps(payload).encode()
        mask = os.urandom(4)
        size = len(data)
        header = bytes([0x81]) + (bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + struct.pack(">H", size))
        self.writer.write(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
        await self.writer.drain()

    async def recv_json(self) -> dict:
        message = b""
        while True:
            b1, b2 = await self.reader.readexactly(2)
            size = b2 & 0x7F
            if size == 126:
                size = struct.unpack(">H", await self.reader.readexactly(2))[0]
            elif size == 127:
                size = struct.unpack(">Q", await self.reader.readexactly(8))[0]
            payload = await self.reader.readexactly(size)
            opcode = b1 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("server closed the socket")
            if opcode in (0x1, 0x0):
                message += payload
                if b1 & 0x80:
                    return json.loads(message)

    async def close(self) -> None:
        self.writer.close()


def login(base: str, username: str, password: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(base + "/login/", timeout=10).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    body = urllib.parse.urlencode({"username": username, "password": password, "csrfmiddlewaretoken": csrf}).encode()
    opener.open(urllib.request.Request(base + "/login/", data=body, headers={"Referer": base + "/login/"}),
                timeout=10).read()
    return "; ".join(f"{c.name}={c.value}" for c in jar)


async def one_chat(port: int, cookie: str, question: str, timeout: float) -> tuple[bool, float, str]:
    t0 = time.perf_counter()
    ws = None
    try:
        ws = await asyncio.wait_for(MiniWebSocket.connect(
            "127.0.0.1", port, "/ws/chat/", {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie}), 10)
        await ws.send_json({"type": "ask", "message": question})
        while True:
            frame = await asyncio.wait_for(ws.recv_json(), timeout)
            if frame["type"] == "done":
                return True, time.perf_counter() - t0, ""
            if frame["type"] == "error":
                return False, time.perf_counter() - t0, frame["data"].get("code", "error")
    except Exception as exc:  # noqa: BLE001 - counted as an error
        return False, time.perf_counter() - t0, type(exc).__name__
    finally:
        if ws is not None:
            await ws.close()


def phase_websocket(data_dir: Path, questions: list[str], concurrency: int, timeout: float) -> dict:
    # One account stands for many users here: no per-user share of the turn pool.
    server = LiveServer(data_dir=data_dir, username="bench-ws", password="bench-ws-pass-123",
                        extra_env={"DOCMIND_CHAT_TURNS_PER_USER": "1000"})
    server.prepare()
    server.start()
    try:
        cookie = login(server.url, server.username, server.password)
        asks = [questions[i % len(questions)] for i in range(concurrency)]

        async def run_all() -> list[tuple[bool, float, str]]:
            return await asyncio.gather(*(one_chat(server.port, cookie, q, timeout) for q in asks))

        t0 = time.perf_counter()
        results = asyncio.run(run_all())
        wall = time.perf_counter() - t0
    finally:
        server.stop()
    totals = [t for _, t, _ in results]
    failures = [why for ok, _, why in results if not ok]
    return {"chats": concurrency, "errors": len(failures), "error_kinds": sorted(set(failures)),
            "p50_total_ms": round(percentile(totals, .5) * 1000, 1),
            "p95_total_ms": round(percentile(totals, .95) * 1000, 1),
            "wall_seconds": round(wall, 1)}


# ---------------------------------------------------------------- phase "tracing": OTel on vs off
class _OtlpSink:
    """A loopback OTLP/HTTP receiver that accepts and counts export requests."""

    def __init__(self) -> None:
        sink = self
        self.requests = 0
        self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sink.requests += 1
                sink.bytes += len(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def phase_tracing_child(data_dir: Path, n: int, rounds: int) -> dict:
    """In one process, each question asked with tracing off and on (ABBA order, two users so that the
    answer cache never serves one mode from the other): paired, so machine noise hits both alike.

    Switching is done by swapping OpenTelemetry's global provider (a private attribute; bench
    only): with it unset the API hands out its no-op tracer, exactly what a server without
    OTEL_EXPORTER_OTLP_ENDPOINT runs.
    """
    setup_django(data_dir=data_dir)  # OTEL_EXPORTER_OTLP_ENDPOINT is set: the app installs the SDK and exporter

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.pipeline import ChatPipeline

    provider = trace.get_tracer_provider()
    assert provider.__class__.__name__ == "TracerProvider", "tracing did not start"
    _, questions = load_questions(n)
    # The answer cache is per user: one user per mode and round, so no ask is ever a replay.
    # Members read the default knowledge base (see phase_pipeline).
    users = {(mode, r): bench_user(f"bench-tracing-{mode}-{r}") for mode in ("off", "on") for r in range(rounds)}
    totals: dict[str, list[float]] = {"off": [], "on": []}
    pipeline = ChatPipeline()
    for r in range(rounds):
        for i, q in enumerate(questions):
            order = ("off", "on") if (i + r) % 2 == 0 else ("on", "off")
            for mode in order:
                trace._TRACER_PROVIDER = provider if mode == "on" else None  # noqa: SLF001 - bench only
                t0 = time.perf_counter()
                last = None
                for event in pipeline.run(user=users[mode, r], message=q["question"], cancel=threading.Event()):
                    last = event
                if last is not None and last.type == "done":
                    totals[mode].append((time.perf_counter() - t0) * 1000)
    trace._TRACER_PROVIDER = provider  # noqa: SLF001
    provider.force_flush()
    return totals


def phase_tracing(data_dir: Path, n: int, rounds: int) -> dict:
    sink = _OtlpSink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint, "OTEL_SERVICE_NAME": "docmind-bench"})
    try:
        child = subprocess.run([sys.executable, "-m", "bench.chat_bench", "--phase", "tracing-child", "--data-dir",
                                str(data_dir), "--questions", str(n), "--rounds", str(rounds)],
                               capture_output=True, text=True, timeout=7200, env=env, cwd=ROOT)
    finally:
        sink.stop()
    line = next((x for x in child.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        sys.exit(f"tracing phase failed:\n{child.stdout[-2000:]}\n{child.stderr[-4000:]}")
    totals = json.loads(line[len("RESULT "):])
    # The first pair carries the model warm-up: left out of both modes.
    off, on = totals["off"][1:], totals["on"][1:]
    p50 = {"off": round(percentile(off, .5), 2), "on": round(percentile(on, .5), 2)}
    p95 = {"off": round(percentile(off, .95), 2), "on": round(percentile(on, .95), 2)}
    pairs = [b - a for a, b in zip(off, on, strict=False)]
    return {"asks_per_mode": len(off), "p50_ms": p50, "p95_ms": p95,
            "overhead_p50_pct": round((p50["on"] - p50["off"]) / p50["off"] * 100, 2),
            "median_paired_difference_ms": round(percentile(pairs, .5), 2),
            "exported": {"requests": sink.requests, "bytes": sink.bytes}}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data" / "bench-chat")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=900, help="seconds one chat may take in phase 2")
    parser.add_argument("--phase", choices=["all", "pipeline", "websocket", "tracing", "tracing-child"],
                        default="all")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions in the tracing phase")
    args = parser.parse_args(argv)
    data_dir = args.data_dir.resolve()
    if args.smoke:  # the other phases start a server or a child process: seconds are not enough for them
        write_json({"pipeline": phase_pipeline(data_dir, SMOKE_QUESTIONS, SMOKE_PARAGRAPHS)}, args.out)
        return
    if args.phase == "tracing-child":
        print("RESULT " + json.dumps(phase_tracing_child(data_dir, args.questions, args.rounds)))
        return
    if args.phase == "tracing":
        write_json(phase_tracing(data_dir, args.questions, args.rounds), args.out)
        return
    if args.phase == "pipeline":
        result = phase_pipeline(data_dir, args.questions)
        if args.out:
            write_json({"pipeline": result}, args.out)
        else:  # what the parent process of phase "all" reads
            print("RESULT " + json.dumps(result, ensure_ascii=False))
        return
    report: dict = {}
    if args.phase == "all":
        # A child process, so that its Milvus Lite handle is closed before daphne opens the same file.
        child = subprocess.run([sys.executable, "-m", "bench.chat_bench", "--phase", "pipeline", "--data-dir",
                                str(data_dir), "--questions", str(args.questions)],
                               capture_output=True, text=True, timeout=7200, cwd=ROOT)
        line = next((x for x in child.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"pipeline phase failed:\n{child.stdout[-2000:]}\n{child.stderr[-4000:]}")
        report["pipeline"] = json.loads(line[len("RESULT "):])
    _, questions = load_questions(args.questions)
    report["websocket"] = phase_websocket(data_dir, [q["question"] for q in questions], args.concurrency,
                                          args.timeout)
    write_json(report, args.out)


if __name__ == "__main__":
    main()
