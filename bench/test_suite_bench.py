"""Wall time of the test suite (or part of it) at several xdist worker counts, as JSON.

    .venv/bin/python -m bench.test_suite_bench --workers 2 3 [--seed 1] [--out bench-tests.json] [PATHS…]
    .venv/bin/python -m bench.test_suite_bench --smoke   # one worker count, one small test module

Each run is the command `make test` runs (`pytest -n N --dist loadgroup`), with one pytest-randomly seed for
all of them so that every count runs the same order; the JSON holds, per count, the wall seconds, pytest's
exit status and summary line, and the 20 slowest set-ups and calls. Compare runs made in one session: the
machines are shared.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time

from bench.common import ROOT, arguments, write_json

PYTHON = str(ROOT / ".venv" / "bin" / "python")
# A module of plain functions without the database: pytest's own start-up is most of the run.
SMOKE_PATH = "tests/test_schedule.py"


def run(workers: str, seed: int, paths: list[str]) -> dict:
    command = [PYTHON, "-m", "pytest", "-n", workers, "--dist", "loadgroup", "-q",
               f"--randomly-seed={seed}", "--durations=20", *paths]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - started
    lines = done.stdout.splitlines()
    summary = next((line.strip("= ") for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)), "")
    slowest = [line.strip() for line in lines if re.match(r"\s*\d+\.\d+s (setup|call|teardown) ", line)]
    return {"workers": workers, "seconds": round(seconds, 1), "exit": done.returncode, "summary": summary,
            "slowest": slowest, "command": " ".join(command[1:])}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter))
    parser.add_argument("--workers", nargs="+", default=["2", "3"], help="xdist worker counts (or auto)")
    parser.add_argument("--seed", type=int, default=1, help="pytest-randomly seed shared by every run")
    parser.add_argument("paths", nargs="*", help="test paths (default: the whole suite)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.workers, args.paths = ["0"], args.paths or [SMOKE_PATH]
    results = [run(workers, args.seed, args.paths) for workers in args.workers]
    write_json({"seed": args.seed, "paths": args.paths or ["tests"], "runs": results}, args.out)
    if not args.smoke:
        sys.exit(max(r["exit"] for r in results))


if __name__ == "__main__":
    main()
