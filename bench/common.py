"""What every bench script shares: where the evaluation data is, Django set-up, bench users, percentiles, JSON out.

Run the scripts as modules from the checkout (`.venv/bin/python -m bench.chat_bench …`): the checkout is then on
the import path, so `bench`, the apps and `tests` import without path edits.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import django
from django.apps import apps
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR_VARIABLE = "DOCMIND_EVAL_DIR"
CMRC_TRIAL = "cmrc2018_trial.json"


def eval_dir() -> Path:
    """The directory of the shared evaluation files: $DOCMIND_EVAL_DIR, else `shared/eval` beside the checkout
    (or beside its parent, for a worktree under `wt/`)."""
    named = os.environ.get(EVAL_DIR_VARIABLE)
    if named:
        path = Path(named).expanduser()
        if not path.is_dir():
            raise SystemExit(f"{EVAL_DIR_VARIABLE}={named} is not a directory")
        return path
    for base in (ROOT.parent, ROOT.parent.parent):
        candidate = base / "shared" / "eval"
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"evaluation data not found: set {EVAL_DIR_VARIABLE} to the directory holding {CMRC_TRIAL}")


def eval_file(name: str = CMRC_TRIAL) -> Path:
    path = eval_dir() / name
    if not path.is_file():
        raise SystemExit(f"{path} does not exist (evaluation files are looked up in ${EVAL_DIR_VARIABLE})")
    return path


def setup_django(*, data_dir: Path | str | None = None, offline: bool = True, migrate: bool = True,
                 env: dict[str, str] | None = None, unset: Sequence[str] = ()) -> None:
    """Start Django for a bench run in this process: over `data_dir` (a new throw-away one if None), with the
    ingestion worker off (a script that measures it starts it itself), without a model key when `offline`, with
    `env` set and the variables named in `unset` removed.

    In a process where Django is already set up (the smoke tests, under pytest) it does nothing: that process's
    settings, test database and data dir are the ones to use."""
    if apps.ready:
        return
    if data_dir:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
    os.environ["DOCMIND_DATA_DIR"] = str(data_dir) if data_dir else tempfile.mkdtemp(prefix="docmind-bench-")
    os.environ["DOCMIND_INGEST_WORKER"] = "false"
    for name in (*unset, *(["OPENAI_API_KEY"] if offline else [])):
        os.environ.pop(name, None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    os.environ.update(env or {})
    django.setup()
    if migrate:
        call_command("migrate", verbosity=0)


def bench_user(username: str, role: str | None = "member", *, password: str | None = None):
    """The user `username` (created if missing) holding `role`: knowledge-base grants go to roles, so a user
    without one reads no knowledge base. `role=None` leaves the user's roles as they are."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.contrib.auth import get_user_model

    from docmind.roles import ensure_roles, user_set_role

    ensure_roles()
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    if role:
        user_set_role(user=user, role=role)
    return user


def cpu_seconds(process) -> float:
    """User and system CPU seconds a process (a `psutil.Process`) has spent so far."""
    times = process.cpu_times()
    return times.user + times.system


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (the value at rank round(q·(n−1)) of the sorted values); NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def p50_p95(values: Sequence[float], *, scale: float = 1.0, digits: int = 1) -> dict[str, float]:
    """p50 and p95 of `values` times `scale` (1000: seconds to milliseconds), rounded."""
    return {name: round(percentile(values, q) * scale, digits) for name, q in (("p50", 0.5), ("p95", 0.95))}


def arguments(parser: argparse.ArgumentParser, *, out_default: str | None = None) -> argparse.ArgumentParser:
    """The options every script has: `--out FILE` (the result as JSON; `-` or none: stdout only) and `--smoke`
    (tiny inputs, seconds: checks that the script still runs, its figures mean nothing)."""
    parser.add_argument("--out", "--json", dest="out", default=out_default,
                        help="write the result here as JSON (it is printed as well)")
    parser.add_argument("--smoke", action="store_true", help="tiny inputs, seconds: check the script still runs")
    return parser


def write_json(result: Any, out: Path | str | None, *, echo: Any = None) -> None:
    """Print `echo` (default: the result; False: nothing) as JSON and write the result to `out` unless that is
    None or `-`."""
    text = json.dumps(result, ensure_ascii=False, indent=1, default=_plain)
    if echo is not False:
        print(text if echo is None else json.dumps(echo, ensure_ascii=False, indent=1, default=_plain))
    if out and str(out) != "-":
        Path(out).write_text(text + "\n", encoding="utf-8")
    sys.stdout.flush()


def _plain(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)
