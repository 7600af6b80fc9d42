"""CPU cost of a test live server (tests/browser/live_server.py), migrating its own database or copying a data
dir migrated once, as JSON.

    .venv/bin/python -m bench.live_server_bench [--rounds 2] [--out live-server.json] [--smoke]
    (--smoke: one round; it still migrates and starts servers)

Per round and way: CPU seconds (user + system, all processes) of `prepare()` (migration or copy, then the
setup process, one user and one ingested text) and of `start()` up to the first /healthz answer, and the wall
seconds of both. CPU seconds are what to compare on a shared machine; wall seconds there mostly measure the
other load.
"""
from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import psutil

from bench.common import arguments, write_json
from tests.browser.live_server import LiveServer, migrated_template

TEXTS = [{"title": "员工手册", "text": "员工每年享有十五天带薪年假，入职满一年后可申请。", "domain": "hr"}]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one(workdir: Path, template: Path | None) -> dict:
    live = LiveServer(data_dir=Path(tempfile.mkdtemp(dir=workdir)) / "data")
    cpu, wall = children_cpu(), time.monotonic()
    live.prepare(texts=TEXTS, template=template)
    prepare_cpu, prepare_wall = children_cpu() - cpu, time.monotonic() - wall
    wall = time.monotonic()
    live.start()
    times = psutil.Process(live.process.pid).cpu_times()
    start_cpu, start_wall = times.user + times.system, time.monotonic() - wall
    live.stop()
    return {"prepare_cpu": round(prepare_cpu, 2), "start_cpu": round(start_cpu, 2),
            "total_cpu": round(prepare_cpu + start_cpu, 2), "wall": round(prepare_wall + start_wall, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds = 1
    with tempfile.TemporaryDirectory(prefix="docmind-live-bench-") as tmp:
        workdir = Path(tmp)
        cpu = children_cpu()
        template = migrated_template(workdir / "template")
        template_cpu = round(children_cpu() - cpu, 2)
        runs = {"migrating": [], "from_template": []}
        for _ in range(args.rounds):
            runs["migrating"].append(one(workdir, None))
            runs["from_template"].append(one(workdir, template))
    mean = {way: round(sum(r["total_cpu"] for r in rs) / len(rs), 2) for way, rs in runs.items()}
    write_json({"template_migration_cpu": template_cpu, "mean_total_cpu": mean, "runs": runs,
                "load_average": psutil.getloadavg()}, args.out)


if __name__ == "__main__":
    main()
