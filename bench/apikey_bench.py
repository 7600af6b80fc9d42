"""What a scoped API key adds to a retrieve, against the same request made with a DRF token.

Usage: .venv/bin/python -m bench.apikey_bench [--requests 60] [--out result.json] [--smoke]
One process, a fresh DOCMIND_DATA_DIR (SQLite unless DATABASE_URL is set), one knowledge base of a few
documents; POST /api/kb/retrieve/ through Django's in-process handler, token and key requests interleaved
(ABBA) so that both see the same caches and load. Also timed alone: the authentication step (DRF's token lookup
against the key's lookup, digest comparison, creator load and scope), which is the whole of the key's cost.
Prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from bench.common import arguments, bench_user, percentile, setup_django, write_json

TEXTS = [
    ("VPN", "连接公司 VPN 需要先安装客户端，然后用工号和动态口令登录。VPN 每 12 小时断开一次，需要重新登录。"),
    ("Leave", "年假按工龄计算：满一年五天，满十年十天。申请年假需要提前一周在系统里提交给直属经理审批。"),
    ("Expenses", "差旅报销需要在出差结束后三十天内提交，附上发票原件。超过五千元的报销需要部门负责人签字。"),
    ("Laptop", "新员工的笔记本电脑在入职当天由 IT 部门发放，丢失需要在二十四小时内报告并填写遗失单。"),
]
QUERIES = ["VPN 多久断开一次？", "年假怎么申请？", "报销需要什么？", "电脑丢了怎么办？"]


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 3), "p95": round(percentile(ordered, 0.95), 3),
            "mean": round(statistics.fmean(ordered), 3)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args(argv)
    if args.smoke:
        args.requests = 2
    setup_django()

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.test import Client
    from rest_framework.authentication import TokenAuthentication
    from rest_framework.authtoken.models import Token

    from apikeys.services import authenticate_key, key_create
    from docmind.roles import KB_EDITOR
    from kb import services
    from kb.access import askable_kb_ids
    from kb.ingestion.worker import process_pending_documents

    user = bench_user("bench-editor", KB_EDITOR, password="x")
    kb = services.kb_create(name="bench", owner=user)
    services.kb_create(name="other", owner=user)  # a second base the key does not reach
    for title, text in TEXTS:
        services.document_ingest_text(title=title, text=text, domain="it", kb=kb)
    process_pending_documents()
    token = Token.objects.create(user=user).key
    secret = key_create(creator=user, name="bench", kb_ids=[kb.pk], scope="read").secret

    client = Client(SERVER_NAME="localhost")
    headers = {"token": f"Token {token}", "key": f"Bearer {secret}"}
    timings: dict[str, list[float]] = {"token": [], "key": []}
    body = {"kb": [kb.pk], "top_k": 5}
    for i in range(args.requests + 5):
        # ABBA: each kind goes first in every other round, so neither gains from the other's warm-up.
        for name, header in (list(headers.items()) if i % 2 == 0 else list(headers.items())[::-1]):
            started = time.perf_counter()
            response = client.post("/api/kb/retrieve/", json.dumps({**body, "query": QUERIES[i % len(QUERIES)]}),
                                   content_type="application/json", HTTP_AUTHORIZATION=header)
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, response.content
            if i >= 5:  # the first rounds warm the model and the indexes
                timings[name].append(elapsed)

    auth: dict[str, list[float]] = {"token": [], "key": []}
    # The difference within each pair: the machine's load drifts between pairs, far less within one.
    paired: list[float] = []
    # CPU time of this thread (SQLite runs in it): what the step costs, without the time spent waiting for a
    # core on a loaded machine.
    cpu: dict[str, list[float]] = {"token": [], "key": []}
    for _ in range(args.requests * 5):
        started, started_cpu = time.perf_counter(), time.thread_time()
        found, _token = TokenAuthentication().authenticate_credentials(token)
        askable_kb_ids(found)
        auth["token"].append((time.perf_counter() - started) * 1000)
        cpu["token"].append((time.thread_time() - started_cpu) * 1000)
        started, started_cpu = time.perf_counter(), time.thread_time()
        found, _key = authenticate_key(secret)
        askable_kb_ids(found)
        auth["key"].append((time.perf_counter() - started) * 1000)
        cpu["key"].append((time.thread_time() - started_cpu) * 1000)
        paired.append(auth["key"][-1] - auth["token"][-1])

    retrieve = {name: _ms(values) for name, values in timings.items()}
    auth_ms = {name: _ms(values) for name, values in auth.items()}
    result = {
        "database": "MySQL/MariaDB" if os.environ.get("DATABASE_URL") else "SQLite",
        "requests": args.requests,
        "retrieve_ms": retrieve,
        "key_adds_to_retrieve_p50_ms": round(retrieve["key"]["p50"] - retrieve["token"]["p50"], 3),
        "auth_and_scope_ms": auth_ms,
        "key_adds_to_auth_p50_ms": round(auth_ms["key"]["p50"] - auth_ms["token"]["p50"], 3),
        "key_adds_to_auth_paired_median_ms": round(statistics.median(paired), 3),
        "auth_and_scope_cpu_ms": {name: _ms(values) for name, values in cpu.items()},
        "key_adds_to_auth_cpu_p50_ms": round(statistics.median(cpu["key"]) - statistics.median(cpu["token"]), 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "goal_ms": 5.0,
    }
    write_json(result, args.out)


if __name__ == "__main__":
    main()
