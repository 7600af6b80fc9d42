"""Entry point of the parsing child process: limits itself, parses its input, writes status + payload to stdout.

Run as `python -m kb.ingestion.parsers.child --serve MEMORY_BYTES PARENT_PID` by IsolatedParser: a warm
worker that parses one framed request after another (kb.ingestion.parsers.isolated describes the frames),
each under its own CPU-time limit, and ends when its stdin closes or after a failure that may have left
its memory in a bad state.
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import signal
import sys
import traceback

from kb.ingestion.parsers import ParseError, ParseLimits, parse_located
from kb.ingestion.parsers.isolated import (
    CRASHED,
    OUT_OF_MEMORY,
    READY,
    REFUSED,
    REPLY_HEADER,
    REQUEST_HEADER,
    TEXT,
)

# libxml2 reports a failed allocation as an "unknown" XML syntax error, so an error raised while
# the peak resident size was this close to the limit is reported as running out of memory.
_NEAR_LIMIT = 0.8


def serve(argv: list[str]) -> int:
    memory, parent = argv
    memory_bytes = int(memory)
    _die_with_parent(int(parent))
    # A shutdown signal ends the child at once, as SIGTERM does, and the parent reads its exit status as an
    # interruption. Python's own SIGINT handler would raise KeyboardInterrupt instead, which a destructor or a
    # library's cleanup can swallow, leaving the parse running to the end as if nothing had been asked.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # The address-space limit holds for the process, and one document is parsed at a time, so it bounds
    # each document; the hard CPU limit stays where it is so that each request can move the soft one.
    _lower(resource.RLIMIT_AS, memory_bytes)
    _lower(resource.RLIMIT_CORE, 0)
    source, out = sys.stdin.buffer, sys.stdout.buffer
    out.write(READY)  # a document's deadline starts once the interpreter is up, not before
    out.flush()
    while True:
        header = source.read(REQUEST_HEADER.size)
        if len(header) < REQUEST_HEADER.size:
            return 0  # the parent closed the pipe: the pool is shutting down, or the parent died
        request_size, data_size, cpu = REQUEST_HEADER.unpack(header)
        request = json.loads(source.read(request_size))
        data = source.read(data_size)
        _reset_peak()
        # CPU time is counted for the process: the limit is this document's seconds on top of what it used.
        used = resource.getrusage(resource.RUSAGE_SELF)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = math.ceil(used.ru_utime + used.ru_stime) + cpu
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        status, payload, keep_going = _parse_one(data, request["file_type"], request["limits"], memory_bytes)
        del data
        # A parser that left much of the heap behind would shrink the next document's share of the limit.
        keep_going = keep_going and _status_bytes("VmRSS:") < memory_bytes // 2
        out.write(status + REPLY_HEADER.pack(keep_going, len(payload)) + payload)
        out.flush()
        if not keep_going:
            return 0


def _parse_one(data: bytes, file_type: str, limits: dict, memory_bytes: int) -> tuple[bytes, bytes, bool]:
    """(status, payload, whether this process may parse another document)."""
    try:
        parsed = parse_located(data, file_type, limits=ParseLimits(**limits))
        return TEXT, json.dumps(parsed.as_json(), ensure_ascii=False).encode("utf-8"), True
    except MemoryError:
        return OUT_OF_MEMORY, b"", False
    except ParseError as exc:
        if _near_limit(memory_bytes):
            return OUT_OF_MEMORY, b"", False
        return REFUSED, str(exc).encode("utf-8"), True
    except Exception:
        if _near_limit(memory_bytes):
            return OUT_OF_MEMORY, b"", False
        # A parser bug: its state is not to be trusted for the next document.
        return CRASHED, traceback.format_exc()[-4000:].encode("utf-8", errors="replace"), False


def _reset_peak() -> None:
    # The near-limit check reads the peak resident size; a warm worker's peak belongs to earlier documents.
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        pass


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
    """This process's own peak resident size, in bytes (since the last _reset_peak).

    Not getrusage's ru_maxrss: Linux carries the parent's peak across fork and exec into it, so a
    child of a large worker would look near its limit before it read a byte; nor can it be reset.
    VmHWM belongs to the address space the exec created.
    """
    peak = _status_bytes("VmHWM:")
    return peak if peak >= 0 else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def _status_bytes(field: str) -> int:
    """A size from /proc/self/status, in bytes; -1 when it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return -1


if __name__ == "__main__":
    if sys.argv[1:2] != ["--serve"]:
        sys.exit("usage: python -m kb.ingestion.parsers.child --serve MEMORY_BYTES PARENT_PID")
    sys.exit(serve(sys.argv[2:]))
