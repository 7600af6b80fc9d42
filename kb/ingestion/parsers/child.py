"""Entry point of the parsing child process: limits itself, parses stdin, writes status + payload to stdout.

Run as `python -m kb.ingestion.parsers.child TYPE LIMITS_JSON MEMORY_BYTES CPU_SECONDS PARENT_PID` by IsolatedParser.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

from kb.ingestion.parsers import ParseError, ParseLimits, parse_located
from kb.ingestion.parsers.isolated import OUT_OF_MEMORY, REFUSED, TEXT

# libxml2 reports a failed allocation as an "unknown" XML syntax error, so an error raised while
# the peak resident size was this close to the limit is reported as running out of memory.
_NEAR_LIMIT = 0.8


def main(argv: list[str]) -> int:
    file_type, limits_json, memory, cpu, parent = argv
    memory_bytes = int(memory)
    _die_with_parent(int(parent))
    # Limits first, before the input or any parser library is loaded.
    _lower(resource.RLIMIT_AS, memory_bytes)
    _lower(resource.RLIMIT_CPU, int(cpu))
    _lower(resource.RLIMIT_CORE, 0)
    out = sys.stdout.buffer
    try:
        parsed = parse_located(sys.stdin.buffer.read(), file_type, limits=ParseLimits(**json.loads(limits_json)))
        payload = json.dumps(parsed.as_json(), ensure_ascii=False).encode("utf-8")
    except MemoryError:
        out.write(OUT_OF_MEMORY)
        return 0
    except ParseError as exc:
        out.write(OUT_OF_MEMORY if _near_limit(memory_bytes) else REFUSED + str(exc).encode("utf-8"))
        return 0
    except Exception:
        if _near_limit(memory_bytes):
            out.write(OUT_OF_MEMORY)
            return 0
        raise
    out.write(TEXT)
    out.write(payload)
    return 0


def _die_with_parent(parent: int) -> None:
    # A worker killed mid-parse must not leave its parser running on (Linux: the kernel kills us).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the request above took effect
        sys.exit(1)


def _lower(limit: int, value: int) -> None:
    # Never above a hard limit the service manager or container already set (raising it would fail).
    _, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, hard if hard != resource.RLIM_INFINITY else value))


def _near_limit(memory_bytes: int) -> bool:
    return _peak_rss() >= _NEAR_LIMIT * memory_bytes


def _peak_rss() -> int:
    """This process's own peak resident size, in bytes.

    Not getrusage's ru_maxrss: Linux carries the parent's peak across fork and exec into it, so a
    child of a large worker would look near its limit before it read a byte. VmHWM belongs to the
    address space the exec created.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
