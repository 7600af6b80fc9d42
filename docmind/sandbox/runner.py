"""Where the sandbox runner (bubblewrap) and its interpreter are, and whether this machine can run them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from docmind.sandbox.cgroup import CgroupLayout, detect_layout
from docmind.sandbox.seccomp import SeccompUnavailable, compiled_filter

NOBODY = 65534


class SandboxUnavailable(RuntimeError):
    """The sandbox runner cannot work on this machine; the message says why."""


@dataclass(frozen=True)
class RunnerConfig:
    """The runner binary and the interpreter run inside the sandbox.

    The interpreter is the distribution's (`/usr/bin/python3` by default), not the service's
    virtual environment: it must be readable by an unprivileged user and carries no
    site-packages of the project into the sandbox.
    """

    bwrap: str = "bwrap"
    python: str = "/usr/bin/python3"

    @classmethod
    def from_environment(cls) -> RunnerConfig:
        return cls(bwrap=getattr(settings, "SANDBOX_BWRAP", "bwrap"),
                   python=getattr(settings, "SANDBOX_PYTHON", "/usr/bin/python3"))

    def drop_privileges(self) -> dict[str, Any]:
        """Popen arguments that start the runner as nobody when this process is root: the
        sandbox's user namespace then maps to an unprivileged host user, RLIMIT_NPROC applies,
        and a root-only file stays closed even to a kernel-level escape."""
        if os.geteuid() != 0:
            return {}
        return {"user": NOBODY, "group": NOBODY, "extra_groups": []}

    def library_dirs(self) -> list[str]:
        """Read-only directories the interpreter needs: system libraries and its standard library."""
        dirs = [d for d in ("/usr/lib", "/usr/lib64", "/usr/lib32") if os.path.isdir(d)]
        dirs += [d for d in ("/lib", "/lib64") if os.path.isdir(d) and not os.path.islink(d)]
        prefix = _interpreter_prefix(self.python)
        if prefix and not any(prefix == d or prefix.startswith(d + "/") for d in dirs):
            dirs.append(prefix)
        return dirs

    def root_symlinks(self) -> list[tuple[str, str]]:
        """Merged-/usr links (/lib -> usr/lib) recreated inside the sandbox's root."""
        return [(link, os.readlink(link)) for link in ("/lib", "/lib64", "/lib32") if os.path.islink(link)]


@dataclass(frozen=True)
class RunnerStatus:
    available: bool
    reason: str = ""
    bwrap: str = ""
    cgroups: CgroupLayout | None = None
    seccomp_filter: bytes = field(default=b"", repr=False)

    def describe(self) -> dict[str, Any]:
        if not self.available:
            return {"available": False, "reason": self.reason}
        return {"available": True, "runner": "bubblewrap", "seccomp": True,
                "cgroup": f"v{self.cgroups.version}" if self.cgroups else "none (rlimits and PID namespace only)"}


def static_status(config: RunnerConfig) -> RunnerStatus:
    """Everything that can be checked without starting a sandbox."""
    if not sys.platform.startswith("linux"):
        return RunnerStatus(False, "the sandbox needs Linux namespaces")
    bwrap = shutil.which(config.bwrap)
    if bwrap is None:
        return RunnerStatus(False, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    python = Path(config.python)
    if not (python.is_file() and os.access(python, os.X_OK)):
        return RunnerStatus(False, f"the sandbox interpreter {config.python} is missing: apt-get install python3")
    try:
        bpf = compiled_filter()
    except SeccompUnavailable as exc:
        return RunnerStatus(False, f"{exc}: apt-get install libseccomp2")
    # A container that refuses unprivileged user namespaces fails in the trial run that follows.
    return RunnerStatus(True, bwrap=bwrap, cgroups=detect_layout(), seccomp_filter=bpf)


def _interpreter_prefix(python: str) -> str | None:
    real = os.path.realpath(python)
    if real.startswith("/usr/"):
        return None  # the standard library sits under /usr/lib, bound already
    try:
        out = subprocess.run([real, "-I", "-S", "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                             text=True, timeout=10, env={})
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
