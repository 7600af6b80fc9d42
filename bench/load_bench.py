"""Load benchmark: R rounds of N concurrent chat turns (half SSE, half WebSocket) against MariaDB + Redis.

Run (the database is created if missing and used only by this benchmark; Redis db as given):

    .venv/bin/python -m bench.load_bench --database-url mysql://root@127.0.0.1:3306/docmind_load \\
        --redis-url redis://127.0.0.1:6379/3 --streams 50 --rounds 10 [--out result.json]
    (--smoke: 2 paragraphs, one round of 2 streams; it still starts a server on MariaDB + Redis)

Starts daphne on loopback (offline mode: extractive answers, no model) over a throw-away data dir
with a few CMRC 2018 paragraphs ingested, then runs the rounds back to back. Reports errors (any
stream that does not end with `done`, by kind), p50/p95 total time per transport, MariaDB
connections (the server-wide `Threads_connected` and those held on the benchmark's database)
and the server process's threads: before, peak, and after; and how long after the last turn the
database connections took to return to the baseline (the target is 5 s). `--code-dir` serves
another checkout (e.g. an older commit) with the same client, for a same-session comparison.
Every wait is bounded and the server is stopped at the end.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil

from bench.chat_bench import MiniWebSocket, login
from bench.common import ROOT, arguments, eval_file, percentile, write_json
from tests.browser.live_server import LiveServer


def corpus(path: Path, paragraphs: int) -> tuple[list[dict], list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    texts, questions = [], []
    for article in data:
        for para in article["paragraphs"]:
            if len(texts) == paragraphs:
                return texts, questions
            texts.append({"title": f"{article.get('title') or 'doc'} {para['id']}", "text": para["context"]})
            questions.extend(qa["question"] for qa in para["qas"][:3])
    return texts, questions


class Db:
    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlparse(url)
        self.name = parsed.path.lstrip("/")
        self._kw = {"host": parsed.hostname or "127.0.0.1", "port": parsed.port or 3306,
                    "user": parsed.username or "root", "password": parsed.password or ""}

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        # optional: the MySQL driver is installed only with DOCMIND_WITH_MYSQL=1; imported here so the module, and
        # the suite that imports every bench module, loads on the embedded defaults too.
        import MySQLdb

        conn = MySQLdb.connect(**self._kw)
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql, args)
                return list(cursor.fetchall())
        finally:
            conn.close()

    def create(self) -> None:
        self._query(f"CREATE DATABASE IF NOT EXISTS `{self.name}` CHARACTER SET utf8mb4")

    def counts(self) -> tuple[int, int]:
        """(Threads_connected server-wide, connections on this database); the probe itself is not counted."""
        total = int(self._query("SHOW STATUS LIKE 'Threads_connected'")[0][1]) - 1
        ours = int(self._query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = %s",
                               (self.name,))[0][0])
        return total, ours


def token(base: str, username: str, password: str) -> str:
    body = json.dumps({"username": username, "password": password}).encode()
    request = urllib.request.Request(base + "/api/auth/token/", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["token"]


async def sse_turn(port: int, auth: str, question: str, timeout: float) -> tuple[bool, float, str]:
    """POST /api/chat/ over a raw HTTP/1.1 connection; the stream ends with the connection."""
    t0 = time.perf_counter()
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        body = json.dumps({"message": question}).encode()
        head = (f"POST /api/chat/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Token {auth}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        writer.write(head.encode() + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(-1), timeout)
        status = raw.split(b"\r\n", 1)[0]
        if b" 200 " not in status:
            return False, time.perf_counter() - t0, status.decode(errors="replace")
        if b"event: done" in raw:
            return True, time.perf_counter() - t0, ""
        if b"event: error" in raw:
            data = raw.split(b"event: error\ndata: ", 1)[1].split(b"\n", 1)[0]
            return False, time.perf_counter() - t0, json.loads(data).get("code", "error")
        return False, time.perf_counter() - t0, "no final event"
    except Exception as exc:  # noqa: BLE001 - counted as an error
        return False, time.perf_counter() - t0, type(exc).__name__
    finally:
        if writer is not None:
            writer.close()


async def ws_turn(port: int, cookie: str, question: str, timeout: float) -> tuple[bool, float, str]:
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


class Sampler(threading.Thread):
    """Peak DB connections and server threads while the rounds run, sampled every half second."""

    def __init__(self, db: Db, process: psutil.Process) -> None:
        super().__init__(daemon=True)
        self.db, self.process = db, process
        self.peak_total = self.peak_ours = self.peak_threads = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            try:
                total, ours = self.db.counts()
                self.peak_total, self.peak_ours = max(self.peak_total, total), max(self.peak_ours, ours)
                self.peak_threads = max(self.peak_threads, self.process.num_threads())
            except Exception:  # noqa: BLE001 - a refused probe (error 1040) is itself the finding
                self.peak_total = max(self.peak_total, -1)


def summary(results: list[tuple[bool, float, str]]) -> dict:
    totals = [t for _, t, _ in results]
    kinds: dict[str, int] = {}
    for ok, _, why in results:
        if not ok:
            kinds[why] = kinds.get(why, 0) + 1
    return {"turns": len(results), "errors": sum(kinds.values()), "error_kinds": kinds,
            "p50_ms": round(percentile(totals, .5) * 1000, 1), "p95_ms": round(percentile(totals, .95) * 1000, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--database-url", required=True, help="mysql://user@host:port/db (a database of its own)")
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--streams", type=int, default=50, help="concurrent turns per round (half SSE, half WS)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--eval", type=Path, default=None,
                        help="SQuAD-format file the documents come from (default: the CMRC 2018 trial set)")
    parser.add_argument("--paragraphs", type=int, default=20, help="CMRC paragraphs ingested as documents")
    parser.add_argument("--timeout", type=float, default=300, help="seconds one turn may take")
    parser.add_argument("--code-dir", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--settle", type=float, default=10, help="seconds to watch connections after the last turn")
    args = parser.parse_args(argv)
    if args.smoke:
        args.paragraphs, args.streams, args.rounds, args.settle = 2, 2, 1, 1

    db = Db(args.database_url)
    db.create()
    texts, questions = corpus(args.eval or eval_file(), args.paragraphs)
    data_dir = Path(tempfile.mkdtemp(prefix="docmind-load-"))
    server = LiveServer(data_dir=data_dir, username="load-user", password="load-pass-123",
                        root=args.code_dir.resolve(),
                        # One account stands for many users here: no per-user share of the turn pool.
                        extra_env={"DATABASE_URL": args.database_url, "REDIS_URL": args.redis_url,
                                   "DOCMIND_CHAT_TURNS_PER_USER": "1000"})
    server.prepare(texts=texts)
    server.apply()  # ingested by a process of its own: the server's figures start from a server that only serves
    server.start()
    report: dict = {"code_dir": str(args.code_dir.resolve()), "streams": args.streams, "rounds": args.rounds}
    try:
        process = psutil.Process(server.process.pid)
        auth = token(server.url, server.username, server.password)
        cookie = login(server.url, server.username, server.password)
        time.sleep(2)  # let start-up work (knowledge map load) finish before the baseline
        before_total, before_ours = db.counts()
        report["before"] = {"threads_connected": before_total, "db_connections": before_ours,
                            "server_threads": process.num_threads()}
        sampler = Sampler(db, process)
        sampler.start()
        sse: list[tuple[bool, float, str]] = []
        ws: list[tuple[bool, float, str]] = []
        started = time.perf_counter()
        for round_no in range(args.rounds):
            async def one_round(offset: int) -> list[tuple[str, tuple[bool, float, str]]]:
                jobs = []
                for i in range(args.streams):
                    question = questions[(offset + i) % len(questions)]
                    if i % 2 == 0:
                        jobs.append(("sse", sse_turn(server.port, auth, question, args.timeout)))
                    else:
                        jobs.append(("ws", ws_turn(server.port, cookie, question, args.timeout)))
                done = await asyncio.gather(*(job for _, job in jobs))
                return [(kind, result) for (kind, _), result in zip(jobs, done, strict=True)]

            for kind, result in asyncio.run(one_round(round_no * args.streams)):
                (sse if kind == "sse" else ws).append(result)
            print(f"round {round_no + 1}/{args.rounds}: {time.perf_counter() - started:.0f}s, "
                  f"connections {db.counts()}", file=sys.stderr)
        last_turn = time.perf_counter()
        back_after = None
        after_total, after_ours = db.counts()
        while time.perf_counter() - last_turn < args.settle:
            after_total, after_ours = db.counts()
            if back_after is None and after_ours <= before_ours:
                back_after = round(time.perf_counter() - last_turn, 2)
            time.sleep(0.25)
        sampler.stop.set()
        sampler.join(timeout=5)
        report.update(
            wall_seconds=round(last_turn - started, 1),
            sse=summary(sse), ws=summary(ws), all=summary(sse + ws),
            peak={"threads_connected": sampler.peak_total, "db_connections": sampler.peak_ours,
                  "server_threads": sampler.peak_threads},
            after={"threads_connected": after_total, "db_connections": after_ours,
                   "server_threads": process.num_threads(), "seconds_watched": args.settle},
            db_connections_back_to_baseline_after_s=back_after,
        )
    finally:
        server.stop()
    write_json(report, args.out)


if __name__ == "__main__":
    main()
