"""Line coverage of the product code by the test suite (coverage.py through pytest-cov, xdist workers combined).

    .venv/bin/python -m bench.coverage_bench [--workers 2] [--seed 1] [--root CHECKOUT] [--out cov.json]
        [--log pytest.log] [PATHS…]
    .venv/bin/python -m bench.coverage_bench --smoke   # one worker count, one small test module

Runs `pytest -n N --cov` in ROOT (default: this checkout; another worktree measures an older commit with this
checkout's settings, `[tool.coverage.*]` in pyproject.toml) and writes, as JSON, the commit, the totals
(statements, covered lines, percent), the percent per top-level package, pytest's exit status and summary line.
Coverage slows the run by about a third, so CI does not measure it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.common import ROOT, arguments, write_json

CONFIG = ROOT / "pyproject.toml"
SMOKE_PATH = "tests/test_schedule.py"


def measure(root: Path, workers: str, seed: int, paths: list[str], log: Path | None = None) -> dict:
    python = str(root / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="docmind-cov-") as tmp:
        report = Path(tmp) / "coverage.json"
        command = [python, "-m", "pytest", "-n", workers, "-q", "-p", "no:cacheprovider", f"--randomly-seed={seed}",
                   "--cov", f"--cov-config={CONFIG}", f"--cov-report=json:{report}", "--cov-report=",
                   *(["--durations=0", "--durations-min=1"] if log else []), *paths]
        started = time.monotonic()
        # The data file goes to the temporary directory, not the checkout.
        done = subprocess.run(command, cwd=root, capture_output=True, text=True,
                              env={**os.environ, "COVERAGE_FILE": str(Path(tmp) / ".coverage")})
        seconds = time.monotonic() - started
        data = json.loads(report.read_text()) if report.exists() else {"totals": {}, "files": {}}
    if log:
        log.write_text(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    summary = next((line.strip("= ") for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)), "")
    packages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, entry in data["files"].items():
        package = Path(name).parts[0]
        packages[package][0] += entry["summary"]["num_statements"]
        packages[package][1] += entry["summary"]["covered_lines"]
    totals = data["totals"]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    return {"commit": commit, "statements": totals.get("num_statements"), "covered": totals.get("covered_lines"),
            "percent": round(totals.get("percent_covered", 0.0), 2),
            "packages": {p: round(100 * c / s, 2) for p, (s, c) in sorted(packages.items()) if s},
            "exit": done.returncode, "summary": summary, "seconds": round(seconds, 1),
            "command": " ".join(command[1:])}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter))
    parser.add_argument("--workers", default="2", help="xdist worker count (or auto)")
    parser.add_argument("--seed", type=int, default=1, help="pytest-randomly seed")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to measure (default: this one)")
    parser.add_argument("--log", type=Path, help="also write pytest's output here, with every set-up and call over 1 s")
    parser.add_argument("paths", nargs="*", help="test paths (default: the whole suite)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.workers, args.paths = "0", args.paths or [SMOKE_PATH]
    result = measure(args.root.resolve(), args.workers, args.seed, args.paths, args.log)
    write_json(result, args.out)
    if not args.smoke:
        sys.exit(result["exit"])


if __name__ == "__main__":
    main()
