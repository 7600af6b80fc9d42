"""`SandboxResult`: what one sandbox run printed, how it ended, and how long it took."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code,
                "duration_ms": round(self.duration_ms, 1), "timed_out": self.timed_out, "truncated": self.truncated}
