"""What an upload costs the server: CPU seconds of a server process (`make run`'s daphne) per request, for short
articles and for one large file, over loopback HTTP with an API token, the ingestion worker off (so that only the
request is counted), as JSON.

    .venv/bin/python -m bench.upload_bench [--articles 150] [--rounds 3] [--large-mb 14] [--root CHECKOUT]
    [--out upload.json] [--smoke]

`--root` serves another checkout (a commit to compare against, with this script run from here). Per round: the
server's CPU ms per article upload; per large upload: CPU and wall seconds (the first one also pays for lazy
imports). The CPU of the server process is what to compare on a shared machine.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import psutil
import requests

from bench.articles import article
from bench.common import arguments, cpu_seconds, write_json
from tests.browser.live_server import LiveServer

STAFF = {"username": "bench-admin", "password": "bench-admin-pass-123"}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--articles", type=int, default=150, help="article uploads a round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--large-mb", type=float, default=14.0, help="size of each large upload (three of them)")
    parser.add_argument("--root", type=Path, default=None, help="the checkout to serve (default: this one)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.articles, args.rounds, args.large_mb = 3, 1, 0.5
    kwargs = {"root": args.root.resolve()} if args.root else {}
    live = LiveServer(data_dir=Path(tempfile.mkdtemp(prefix="upload-bench-")) / "data", ingest_worker=False,
                      **kwargs)
    live.prepare(staff=STAFF)
    live.start()
    try:
        session = requests.Session()
        token = session.post(f"{live.url}/api/auth/token/", json=STAFF, timeout=60).json()["token"]
        session.headers["Authorization"] = f"Token {token}"

        def upload(name: str, title: str, data: bytes) -> None:
            response = session.post(f"{live.url}/api/kb/documents/", files={"file": (name, data, "text/plain")},
                                    data={"title": title}, timeout=300)
            if response.status_code not in (200, 202):
                raise SystemExit(f"upload refused: {response.status_code} {response.text[:300]}")

        for seed in range(1_000, 1_000 + min(20, args.articles)):  # lazy imports and first queries out of the rounds
            title, text = article(seed)
            upload(f"warm-{seed}.txt", title, text.encode("utf-8"))
        server = psutil.Process(live.process.pid)
        rounds = []
        for number in range(args.rounds):
            before = cpu_seconds(server)
            for seed in range(10_000 * (number + 1), 10_000 * (number + 1) + args.articles):
                title, text = article(seed)
                upload(f"article-{seed}.txt", title, text.encode("utf-8"))
            rounds.append(round(1000 * (cpu_seconds(server) - before) / args.articles, 2))
        line = "员工每年享有十五天带薪年假，入职满一年后可申请。\n"
        large = []
        for number in range(3):
            data = (f"第{number}份文件。" + line * int(args.large_mb * 2**20 / len(line.encode()))).encode("utf-8")
            before, start = cpu_seconds(server), time.perf_counter()
            upload(f"large-{number}.txt", f"large {number}", data)
            large.append({"mb": round(len(data) / 2**20, 1), "cpu_s": round(cpu_seconds(server) - before, 3),
                          "wall_s": round(time.perf_counter() - start, 3)})
    finally:
        live.stop()
    write_json({"articles": {"uploads_a_round": args.articles, "server_cpu_ms_per_upload": rounds},
                "large": large, "root": str(args.root or "this checkout")}, args.out)


if __name__ == "__main__":
    main()
