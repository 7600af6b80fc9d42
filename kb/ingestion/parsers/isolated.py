"""IsolatedParser: parse_located in a child process under memory, CPU and wall-clock limits."""
from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kb.ingestion.parsers.base import MIB, ParsedText, ParseError, ParseInterrupted, ParseLimits

log = logging.getLogger(__name__)

# The directory holding the `kb` package.
_PROJECT_ROOT = Path(__file__).resolve().parents[3]
CHILD_MODULE = "kb.ingestion.parsers.child"
# Signals a shutdown sends (a terminal's Ctrl+C, systemd or a container stopping the service's process group):
# the child was stopped, not defeated by the file.
_STOPPED_FROM_OUTSIDE = (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP)
# Status bytes the child writes before its payload.
TEXT, REFUSED, OUT_OF_MEMORY = b"T", b"R", b"M"


@dataclass(frozen=True)
class IsolatedParser:
    """Callable as parse(data, file_type) -> ParsedText (text and locations); raises ParseError with a reason
    a member may see, or ParseInterrupted when the child was stopped by a shutdown signal.

    A parser bug or a hostile file can make a library allocate gigabytes or loop; in a child
    process with an address-space limit and a deadline that costs one failed document instead
    of the worker's memory or the queue. The child starts from a clean interpreter (not a fork
    of the threaded server) with an empty environment, so it inherits no locks and no secrets.
    """

    limits: ParseLimits = field(default_factory=ParseLimits)
    timeout_seconds: float = 120.0
    memory_bytes: int = 1024 * MIB

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.memory_bytes < 64 * MIB:
            raise ValueError("memory_bytes must be at least 64 MB (the interpreter alone needs some)")

    def __call__(self, data: bytes, file_type: str) -> ParsedText:
        command = [sys.executable, "-s", "-m", CHILD_MODULE, file_type, json.dumps(self.limits.as_dict()),
                   str(self.memory_bytes), str(math.ceil(self.timeout_seconds) + 1), str(os.getpid())]
        try:
            done = subprocess.run(command, input=data, capture_output=True, timeout=self.timeout_seconds,
                                  cwd=_PROJECT_ROOT, env=_child_environment(), check=False)
        except subprocess.TimeoutExpired:
            raise ParseError(self._too_slow()) from None
        status, payload = done.stdout[:1], done.stdout[1:]
        if done.returncode == 0 and status == TEXT:
            return ParsedText.from_json(json.loads(payload.decode("utf-8")))
        if done.returncode == 0 and status == REFUSED:
            raise ParseError(payload.decode("utf-8", errors="replace"))
        if status == OUT_OF_MEMORY:
            raise ParseError(self._too_big())
        log.warning("parser child for a .%s file exited with %s: %s", file_type, done.returncode,
                    done.stderr.decode("utf-8", errors="replace")[-4000:])
        if done.returncode in _STOPPED_FROM_OUTSIDE:
            raise ParseInterrupted(f"the parser was stopped by signal {-done.returncode}")
        if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            raise ParseError(self._too_slow())
        raise ParseError("the file could not be parsed (the parser stopped unexpectedly)")

    def _too_slow(self) -> str:
        return f"parsing took longer than {self.timeout_seconds:g} s; the file is too large or too complex"

    def _too_big(self) -> str:
        return (f"parsing needed more than {self.memory_bytes / MIB:,.0f} MB of memory; "
                "the file is too large or too complex")


def _child_environment() -> dict[str, str]:
    # The child imports exactly what this process imports, and sees none of its variables (keys, URLs).
    return {"PATH": os.defpath, "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join([str(_PROJECT_ROOT), *(p for p in sys.path if p)])}
