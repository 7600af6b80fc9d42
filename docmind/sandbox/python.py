"""`PythonSandbox`: model-written Python in a bubblewrap sandbox, isolated by the kernel, not by Python.

Each run is a fresh `bwrap` with user, mount, PID, IPC, UTS, cgroup and network namespaces; a
read-only root holding only the interpreter and system libraries (no /etc, no home, no /run,
no data dir, nothing of the project); its own /proc and a small tmpfs as work dir; an empty
environment; a seccomp filter; no capabilities; rlimits; and, where the machine lets us create
one, a cgroup capping memory, processes and CPU of the whole tree. When started as root the
runner itself drops to nobody first, so even a kernel-level escape lands as an unprivileged user.
The process tree dies with its PID namespace: killing bwrap kills its init, which takes every
descendant with it, `setsid()` or not.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from typing import IO

from docmind.sandbox.cgroup import RunCgroup
from docmind.sandbox.result import SandboxResult
from docmind.sandbox.runner import RunnerConfig, RunnerStatus, SandboxUnavailable, static_status

log = logging.getLogger(__name__)

_WORK = "/work"
_SHM_BYTES = 1 << 20  # POSIX shared memory and semaphores (multiprocessing) need little
# Runs inside the sandbox, before the untrusted code: set the per-process limits (RLIMIT_NPROC
# counts per user namespace, so it must be set in here), then replace itself with a clean
# interpreter running the code. The code cannot raise a hard limit: it holds no capability.
_BOOTSTRAP = r"""
import json, os, resource, sys
for name, value in json.loads(sys.argv[1]).items():
    resource.setrlimit(getattr(resource, name), (value, value))
os.execv(sys.executable, [sys.executable, "-I", "-S", "-B", "-X", "utf8", "/work/main.py"])
"""


class PythonSandbox:
    """One short-lived sandboxed interpreter per run.

    Contract: the constructor raises `SandboxUnavailable` (with the reason) where the runner
    cannot work, never falling back to something weaker; `run(code=…)` never raises for
    anything the code does: failures, limits and timeouts come back in the `SandboxResult`.
    """

    def __init__(self, *, timeout_seconds: float, memory_mb: int, output_limit: int = 8192,
                 max_processes: int = 16, runner: RunnerConfig | None = None,
                 _status: RunnerStatus | None = None) -> None:
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
        self.runner = runner or RunnerConfig.from_environment()
        status = _status if _status is not None else runner_status(self.runner)
        if not status.available:
            raise SandboxUnavailable(status.reason)
        self._status = status

    def run(self, *, code: str) -> SandboxResult:
        started = time.monotonic()
        memory = self.memory_mb * 1024 * 1024
        limits = {"RLIMIT_AS": memory, "RLIMIT_CPU": max(1, int(self.timeout_seconds) + 1),
                  # Output goes to files (never unbounded pipes); FSIZE stops a flood early.
                  "RLIMIT_FSIZE": max(self.output_limit * 8, 1 << 20), "RLIMIT_NOFILE": 64,
                  "RLIMIT_NPROC": self.max_processes, "RLIMIT_CORE": 0}
        with contextlib.ExitStack() as stack:
            code_file = stack.enter_context(tempfile.TemporaryFile())
            code_file.write(code.encode("utf-8", errors="replace"))
            code_file.seek(0)
            bpf = stack.enter_context(tempfile.TemporaryFile())
            bpf.write(self._status.seccomp_filter)
            bpf.seek(0)
            out = stack.enter_context(tempfile.TemporaryFile())
            err = stack.enter_context(tempfile.TemporaryFile())
            fds = stack.enter_context(_Fds())
            info_r, info_w = fds.pipe()
            block_r, block_w = fds.pipe()
            argv = self._argv(code_fd=code_file.fileno(), seccomp_fd=bpf.fileno(), info_fd=info_w,
                              block_fd=block_r, limits=limits)
            cgroup = None
            if self._status.cgroups is not None:
                try:
                    cgroup = self._status.cgroups.create(memory_bytes=memory + (64 << 20),
                                                         max_pids=self.max_processes + 4, cpus=1.0)
                except OSError:
                    # Detected at start-up, so runs are promised its limits: refuse rather than run without.
                    log.exception("sandbox cgroup could not be created")
                    return SandboxResult(stdout="", stderr="[sandbox] the sandbox could not be set up", exit_code=None,
                                         duration_ms=(time.monotonic() - started) * 1000)
                stack.callback(cgroup.remove)
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env={}, close_fds=True,
                pass_fds=(code_file.fileno(), bpf.fileno(), info_w, block_r), start_new_session=True,
                **self.runner.drop_privileges())
            fds.close(info_w, block_r)
            timed_out, setup_error = False, ""
            try:
                setup_error = self._release(proc, info_r=info_r, block_w=block_w, cgroup=cgroup)
                if not setup_error:
                    remaining = self.timeout_seconds - (time.monotonic() - started)
                    proc.wait(timeout=max(remaining, 0.05))
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill(proc, cgroup)
            stdout, t1 = _read_capped(out, self.output_limit)
            stderr, t2 = _read_capped(err, self.output_limit)
            memory_exceeded = cgroup.memory_exceeded() if cgroup is not None else False
        exit_code = proc.returncode
        if setup_error:
            stderr = (stderr + f"\n[sandbox] {setup_error}").lstrip()
            exit_code = exit_code if exit_code not in (None, 0) else 1
        elif timed_out:
            stderr = (stderr + f"\n[sandbox] killed after {self.timeout_seconds}s wall time").lstrip()
        elif exit_code is not None and (exit_code < 0 or exit_code > 128):
            signo = -exit_code if exit_code < 0 else exit_code - 128
            reason = "memory limit" if memory_exceeded else f"signal {signo}"
            stderr = (stderr + f"\n[sandbox] killed ({reason})").lstrip()
        return SandboxResult(stdout=stdout, stderr=stderr, exit_code=exit_code,
                             duration_ms=(time.monotonic() - started) * 1000, timed_out=timed_out,
                             truncated=t1 or t2)

    def _argv(self, *, code_fd: int, seccomp_fd: int, info_fd: int, block_fd: int,
              limits: dict[str, int]) -> list[str]:
        runner = self.runner
        argv = [runner.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                "--new-session", "--clearenv", "--cap-drop", "ALL", "--uid", "65534", "--gid", "65534",
                "--hostname", "sandbox"]
        for path in runner.library_dirs():
            argv += ["--ro-bind", path, path]
        for link, target in runner.root_symlinks():
            argv += ["--symlink", target, link]
        python = os.path.realpath(runner.python)
        argv += ["--ro-bind", python, python,
                 "--proc", "/proc", "--dev", "/dev",
                 # bwrap's /dev and /dev/shm are tmpfs without a size: written to, they hold memory that no
                 # rlimit counts (and, without a cgroup, nothing does). /dev is made read-only (its device
                 # nodes stay usable) and /dev/shm a small tmpfs of its own.
                 "--size", str(_SHM_BYTES), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                 "--size", str(16 << 20), "--tmpfs", "/tmp",
                 "--size", str(16 << 20), "--tmpfs", _WORK,
                 "--ro-bind-data", str(code_fd), f"{_WORK}/main.py",
                 "--chdir", _WORK, "--remount-ro", "/",
                 "--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--block-fd", str(block_fd),
                 python, "-I", "-S", "-B", "-c", _BOOTSTRAP, json.dumps(limits)]
        return argv

    def _release(self, proc: subprocess.Popen, *, info_r: int, block_w: int, cgroup: RunCgroup | None) -> str:
        """Wait for bwrap to report its sandbox init, move both into the cgroup, then let the code start.
        The init only forks the code after this, so nothing escapes the cgroup by racing it."""
        info = _read_until_eof(info_r, deadline=time.monotonic() + max(self.timeout_seconds, 5.0))
        try:
            child_pid = int(json.loads(info or "{}")["child-pid"])
        except (ValueError, KeyError, TypeError):
            return "the sandbox could not start"
        if cgroup is not None:
            try:
                cgroup.add(proc.pid)
                cgroup.add(child_pid)
            except OSError:
                return "the sandbox could not be placed in its control group"
        os.write(block_w, b"1")
        return ""


_status_lock = threading.Lock()
_statuses: dict[RunnerConfig, RunnerStatus] = {}


def runner_status(config: RunnerConfig | None = None) -> RunnerStatus:
    """Whether sandboxes can run here, and if not why; decided once per process by a trial run,
    since only running one shows that the kernel grants the namespaces."""
    config = config or RunnerConfig.from_environment()
    with _status_lock:
        if config in _statuses:
            return _statuses[config]
        status = static_status(config)
        if status.available:
            status = _trial(config, status)
        _statuses[config] = status
        return status


# The verdict holds for the process's lifetime, so one start that fails for a passing reason (a busy machine, a
# fork racing another thread) must not switch the sandbox off: the trial is repeated before it says no.
TRIAL_ATTEMPTS = 3
# The wait between trial attempts: tests replace it, not the time.sleep that subprocess waits with.
_trial_pause = time.sleep


def _trial(config: RunnerConfig, status: RunnerStatus) -> RunnerStatus:
    sandbox = PythonSandbox(timeout_seconds=10, memory_mb=128, runner=config, _status=status)
    detail = "no output"
    for attempt in range(1, TRIAL_ATTEMPTS + 1):
        result = sandbox.run(code="import os\nprint(6 * 7, os.getuid())")
        if result.ok and result.stdout.split() == ["42", str(65534)]:
            return status
        detail = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
        log.warning("sandbox runner trial %d/%d failed (exit %s): %s", attempt, TRIAL_ATTEMPTS, result.exit_code,
                    result.stderr.strip()[:500])
        if attempt < TRIAL_ATTEMPTS:
            _trial_pause(0.2 * attempt)
    return RunnerStatus(False, f"bubblewrap cannot create its namespaces here ({detail})")


def _kill(proc: subprocess.Popen, cgroup: RunCgroup | None) -> None:
    # bwrap's death takes the sandbox init with it (--die-with-parent), and the init's death
    # tears down the PID namespace; the cgroup kill is the second lock on the same door.
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            proc.kill()
    proc.wait()
    if cgroup is not None:
        cgroup.kill()


def _read_until_eof(fd: int, *, deadline: float) -> str:
    chunks: list[bytes] = []
    while (remaining := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
        if b"}" in chunk:  # bwrap writes one JSON object and keeps the fd open
            break
    return b"".join(chunks).decode("utf-8", errors="replace")


class _Fds:
    """Pipe ends of one run, each closed exactly once (a second close could hit another thread's fd)."""

    def __init__(self) -> None:
        self._open: set[int] = set()

    def __enter__(self) -> _Fds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(*self._open)

    def pipe(self) -> tuple[int, int]:
        read_end, write_end = os.pipe()
        self._open.update((read_end, write_end))
        return read_end, write_end

    def close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)


def _read_capped(fh: IO[bytes], limit: int) -> tuple[str, bool]:
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    raw = fh.read(limit)
    text = raw.decode("utf-8", errors="replace")
    if size > limit:
        return text + f"\n[truncated: {size} bytes, first {limit} shown]", True
    return text, False
