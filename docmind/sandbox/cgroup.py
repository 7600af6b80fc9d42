"""Per-run control groups: one cap on memory, processes and CPU for a sandbox's whole process tree.

cgroup v2 is used when this process's cgroup delegates the memory and pids controllers; else the
v1 hierarchies (memory, pids, cpu) when they are writable; else there is none and the sandbox
relies on rlimits plus its PID namespace (reported by `runner_status`).
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_PREFIX = "docmind-sbx-"
_CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class RunCgroup:
    """The cgroup directories of one run (one per v1 hierarchy, a single one for v2)."""

    dirs: tuple[Path, ...]
    version: int

    def add(self, pid: int) -> None:
        for directory in self.dirs:
            (directory / "cgroup.procs").write_text(str(pid))

    def kill(self) -> None:
        if self.version == 2 and (self.dirs[0] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.dirs[0] / "cgroup.kill").write_text("1")
            return
        # v1 has no cgroup.kill: signal every member until none is left (the pids cap bounds
        # how many can appear meanwhile, and the PID namespace is torn down with its init).
        for _ in range(50):
            pids = self._members()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        for directory in self.dirs:
            for _ in range(100):  # a killed process leaves its cgroup a moment after the signal
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            else:
                log.warning("sandbox cgroup %s could not be removed", directory.name)

    def memory_exceeded(self) -> bool:
        """Whether the memory limit was hit: an OOM kill (v2 `memory.events`; v1 `memory.oom_control`,
        whose `failcnt` stays 0 when the charge that failed was tmpfs pages) or a failed charge."""
        for directory in self.dirs:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    fields = dict(line.split() for line in (directory / name).read_text().splitlines() if line)
                    if int(fields.get("oom_kill", 0)) > 0:
                        return True
            for name in ("memory.failcnt", "memory.memsw.failcnt"):
                with contextlib.suppress(OSError, ValueError):
                    if int((directory / name).read_text()) > 0:
                        return True
        return False

    def _members(self) -> set[int]:
        pids: set[int] = set()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (directory / "cgroup.procs").read_text().split())
        return pids


@dataclass(frozen=True)
class CgroupLayout:
    """Where this process may create child cgroups."""

    version: int
    parents: dict[str, Path]  # controller (or "unified") -> parent directory

    def create(self, *, memory_bytes: int, max_pids: int, cpus: float) -> RunCgroup:
        name = f"{_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:10]}"
        if self.version == 2:
            directory = self.parents["unified"] / name
            directory.mkdir(mode=0o755)
            run = RunCgroup(dirs=(directory,), version=2)
            try:
                _write(directory / "memory.max", str(memory_bytes))
                _write(directory / "memory.swap.max", "0", optional=True)
                _write(directory / "pids.max", str(max_pids))
                _write(directory / "cpu.max", f"{int(cpus * _CPU_PERIOD_US)} {_CPU_PERIOD_US}", optional=True)
            except OSError:
                run.remove()
                raise
            return run
        dirs: list[Path] = []
        try:
            for controller, parent in self.parents.items():
                directory = parent / name
                directory.mkdir(mode=0o755)
                dirs.append(directory)
                if controller == "memory":
                    _write(directory / "memory.limit_in_bytes", str(memory_bytes))
                    _write(directory / "memory.memsw.limit_in_bytes", str(memory_bytes), optional=True)
                elif controller == "pids":
                    _write(directory / "pids.max", str(max_pids))
                elif controller == "cpu":
                    _write(directory / "cpu.cfs_period_us", str(_CPU_PERIOD_US), optional=True)
                    _write(directory / "cpu.cfs_quota_us", str(int(cpus * _CPU_PERIOD_US)), optional=True)
        except OSError:
            RunCgroup(dirs=tuple(dirs), version=1).remove()
            raise
        return RunCgroup(dirs=tuple(dirs), version=1)


def _write(path: Path, value: str, *, optional: bool = False) -> None:
    try:
        path.write_text(value)
    except (FileNotFoundError, PermissionError):
        if not optional:
            raise


@functools.cache
def detect_layout() -> CgroupLayout | None:
    """The writable cgroup layout with memory and pids control, or None; probed once per process."""
    mounts = _mounts()
    own = _own_cgroups()
    unified = mounts.get("cgroup2")
    if unified is not None and "" in own:
        parent = unified / own[""].lstrip("/")
        controllers = _read(parent / "cgroup.subtree_control").split()
        if {"memory", "pids"} <= set(controllers) and _writable(parent):
            return CgroupLayout(version=2, parents={"unified": parent})
    parents: dict[str, Path] = {}
    for controller in ("memory", "pids", "cpu"):
        root = mounts.get(controller)
        path = own.get(controller)
        if root is None or path is None:
            continue
        parent = root / path.lstrip("/")
        if _writable(parent):
            parents[controller] = parent
    if {"memory", "pids"} <= set(parents):
        return CgroupLayout(version=1, parents=parents)
    return None


def _mounts() -> dict[str, Path]:
    """Controller name (or "cgroup2") -> mount point, from /proc/self/mountinfo."""
    found: dict[str, Path] = {}
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        mount_point, fstype = Path(fields[4]), tail[0]
        if fstype == "cgroup2":
            found.setdefault("cgroup2", mount_point)
        elif fstype == "cgroup":
            for option in tail[2].split(","):
                found.setdefault(option, mount_point)
    return found


def _own_cgroups() -> dict[str, str]:
    """Controller -> this process's cgroup path ("" is the v2 hierarchy)."""
    own: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(","):
            own[controller] = parts[2]
    return own


def _writable(parent: Path) -> bool:
    # Creating a child is the only honest test: a read-only bind mount passes os.access.
    probe = parent / f"{_PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    _remove_stale(parent)
    return True


def _remove_stale(parent: Path) -> None:
    # Left behind by a process that died mid-run; an empty cgroup directory removes cleanly.
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            if child.name.startswith(_PREFIX) and child.is_dir():
                pid = child.name[len(_PREFIX):].split("-", 1)[0]
                if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                    with contextlib.suppress(OSError):
                        child.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
