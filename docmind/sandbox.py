"""`PythonSandbox`: runs model-written Python in a separate, resource-limited, network-less process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

# Runs inside the child before the untrusted code: isolate, limit, drop privileges, then exec.
# Layers, strongest first: a fresh network namespace (no interfaces, not even loopback) when we
# may unshare; rlimits (CPU, address space, processes, file size, open files); uid/gid "nobody"
# when started as root (so RLIMIT_NPROC applies and nothing owned by root is writable); and an
# audit hook that refuses sockets, new processes, ctypes and file access outside the work dir.
_BOOTSTRAP = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
work = cfg["work"]
isolation = []
try:
    os.unshare(os.CLONE_NEWNET)
    isolation.append("netns")
except (OSError, AttributeError):
    pass
def lim(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass
lim(resource.RLIMIT_CPU, cfg["cpu"])
lim(resource.RLIMIT_AS, cfg["mem"])
lim(resource.RLIMIT_FSIZE, cfg["fsize"])
lim(resource.RLIMIT_NOFILE, 64)
lim(resource.RLIMIT_CORE, 0)
# The interpreter's own files may be unreadable once we are "nobody": preload what computations need.
import bisect, calendar, cmath, collections, csv, datetime, decimal, fractions, functools, heapq, itertools
import math, operator, random, re, statistics, string, textwrap, traceback, unicodedata
if os.getuid() == 0:
    lim(resource.RLIMIT_NPROC, cfg["nproc"])
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    isolation.append("nobody")
os.chdir(work)
with open(os.path.join(work, "main.py"), encoding="utf-8") as fh:
    source = fh.read()
readable = tuple(os.path.realpath(p) + os.sep for p in sys.path if p)
real_work = os.path.realpath(work) + os.sep
blocked = ("socket.", "subprocess.", "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn",
           "os.spawn", "os.kill", "os.killpg", "ctypes.", "os.startfile", "pty.", "resource.setrlimit",
           "sys.remote_exec")
# Where the stdlib is world-readable these would import: refuse them by name as well.
blocked_modules = {"_posixsubprocess", "subprocess", "_socket", "socket", "_ctypes", "ctypes", "pty",
                   "multiprocessing", "_multiprocessing", "_posixshmem", "signal", "_signal"}
def hook(event, args):
    if event == "import" and args and str(args[0]).split(".")[0] in blocked_modules:
        raise PermissionError(f"sandbox: importing {args[0]} is not allowed")
    if event.startswith(blocked):
        raise PermissionError(f"sandbox: {event} is not allowed")
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        real = os.path.realpath(os.fsdecode(path))
        writing = (flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND)
        writing = writing or any(c in str(mode or "") for c in "wax+")
        if (real + os.sep).startswith(real_work) or real == "/dev/null":
            return
        if not writing and real.startswith(readable):
            return
        raise PermissionError(f"sandbox: access to {real} is not allowed")
    if event in ("os.listdir", "os.scandir", "os.chdir", "os.remove", "os.rename", "os.rmdir", "os.mkdir",
                 "os.chmod", "os.chown", "os.link", "os.symlink", "os.truncate", "os.utime", "shutil.rmtree"):
        path = args[0] if args else None
        if isinstance(path, int) or path is None:
            return
        real = os.path.realpath(os.fsdecode(path))
        if not (real + os.sep).startswith(real_work):
            raise PermissionError(f"sandbox: {event} outside the work dir is not allowed")
sys.addaudithook(hook)
isolation.append("audit")
del cfg, lim, fh
code = compile(source, "main.py", "exec")
del source
exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
"""


@dataclass(frozen=True)
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int | None
    duration_ms: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def as_dict(self) -> dict[str, Any]:
        return {"stdout": self.stdout, "stderr": self.stderr, "exitCode": self.exit_code,
                "durationMs": round(self.duration_ms, 1), "timedOut": self.timed_out, "truncated": self.truncated}


class PythonSandbox:
    """One short-lived interpreter per run (`-I -S`: no site-packages, no user paths, no env hooks).

    Contract: `run(code=…)` never raises for anything the code does; failures, limits and timeouts
    come back in the `SandboxResult` (non-zero exit, `timed_out`, `truncated`, stderr text).
    """

    def __init__(self, *, timeout_seconds: float, memory_mb: int, output_limit: int = 8192,
                 max_processes: int = 8) -> None:
        if timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if memory_mb < 32:
            raise ValueError("memory_mb must be at least 32")
        if output_limit < 256:
            raise ValueError("output_limit must be at least 256")
        self.timeout_seconds = timeout_seconds
        self.memory_mb = memory_mb
        self.output_limit = output_limit
        self.max_processes = max_processes

    def run(self, *, code: str) -> SandboxResult:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="docmind-sbx-") as work, \
                tempfile.TemporaryDirectory(prefix="docmind-sbx-out-") as outdir:
            with open(os.path.join(work, "main.py"), "w", encoding="utf-8") as fh:
                fh.write(code)
            if os.getuid() == 0:  # the child runs as nobody and must own its scratch dir
                os.chown(work, 65534, 65534)
                os.chown(os.path.join(work, "main.py"), 65534, 65534)
            cfg = {"work": work, "cpu": max(1, int(self.timeout_seconds) + 1),
                   "mem": self.memory_mb * 1024 * 1024,
                   # Output goes to files (never unbounded pipes); FSIZE stops a flood early.
                   "fsize": self.output_limit * 8, "nproc": self.max_processes}
            out_path, err_path = os.path.join(outdir, "stdout"), os.path.join(outdir, "stderr")
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(cfg)],
                    cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"},
                    start_new_session=True, close_fds=True)
                timed_out = False
                try:
                    proc.wait(timeout=self.timeout_seconds)
                except subprocess.TimeoutExpired:
                    timed_out = True
                finally:
                    _kill_group(proc.pid)
                    proc.wait()
            stdout, t1 = _read_capped(out_path, self.output_limit)
            stderr, t2 = _read_capped(err_path, self.output_limit)
        if timed_out:
            stderr = (stderr + f"\n[sandbox] killed after {self.timeout_seconds}s wall time").lstrip()
        elif proc.returncode is not None and proc.returncode < 0:
            stderr = (stderr + f"\n[sandbox] killed by signal {-proc.returncode}").lstrip()
        return SandboxResult(stdout=stdout, stderr=stderr, exit_code=proc.returncode,
                             duration_ms=(time.monotonic() - started) * 1000, timed_out=timed_out,
                             truncated=t1 or t2)


def _kill_group(pid: int) -> None:
    # The whole process group: children the code managed to start die with it.
    try:
        os.killpg(pid, 9)
    except (ProcessLookupError, PermissionError):
        pass


def _read_capped(path: str, limit: int) -> tuple[str, bool]:
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        raw = fh.read(limit)
    text = raw.decode("utf-8", errors="replace")
    if size > limit:
        return text + f"\n[truncated: {size} bytes, first {limit} shown]", True
    return text, False
