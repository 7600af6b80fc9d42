"""IsolatedParser: parse_located in warm child processes, each document under memory, CPU and wall-clock limits."""
from __future__ import annotations

import json
import logging
import math
import os
import queue
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import Future
from pathlib import Path

from kb.ingestion import reasons
from kb.ingestion.parsers.base import MIB, ParsedText, ParseError, ParseInterrupted, ParseLimits

log = logging.getLogger(__name__)

# The directory holding the `kb` package.
_PROJECT_ROOT = Path(__file__).resolve().parents[3]
CHILD_MODULE = "kb.ingestion.parsers.child"
# Signals a shutdown sends (a terminal's Ctrl+C, systemd or a container stopping the service's process group):
# the child was stopped, not defeated by the file.
_STOPPED_FROM_OUTSIDE = (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP)
# Status bytes the child writes before its payload.
TEXT, REFUSED, OUT_OF_MEMORY, CRASHED = b"T", b"R", b"M", b"X"
# What a child writes once it is up, before its first request.
READY = b"W"
# How long a new child may take to start (an interpreter and the parsers' imports, on a loaded machine).
START_SECONDS = 60.0
# A request: the sizes of its JSON part ({"file_type", "limits"}) and of the file, and its CPU seconds; then both.
REQUEST_HEADER = struct.Struct(">IQI")
# A reply after its status byte: whether the child takes another document, and the payload's size.
REPLY_HEADER = struct.Struct(">?Q")
# A warm worker is replaced after this many documents, so that whatever a parser library keeps (caches,
# fragmented heap) stays bounded.
DOCUMENTS_PER_WORKER = 200


class IsolatedParser:
    """Callable as parse(data, file_type) -> ParsedText (text and locations); raises ParseError with a reason
    a member may see, or ParseInterrupted when the child was stopped by a shutdown signal.

    A parser bug or a hostile file can make a library allocate gigabytes or loop; in a child
    process with an address-space limit and a deadline that costs one failed document instead
    of the worker's memory or the queue. The child starts from a clean interpreter (not a fork
    of the threaded server) with an empty environment, so it inherits no locks and no secrets.

    Starting that interpreter and importing the parsers costs more than parsing a short page, so up
    to `workers` children stay warm and take one document after another. The limits stay per
    document: the address-space limit holds for the one document a child parses at a time, the CPU
    limit is moved before each document, the deadline kills the child, and a child that failed in
    any way other than refusing the file is replaced, so the next document meets a fresh one.
    """

    def __init__(self, *, limits: ParseLimits | None = None, timeout_seconds: float = 120.0,
                 memory_bytes: int = 1024 * MIB, workers: int = 1,
                 documents_per_worker: int = DOCUMENTS_PER_WORKER) -> None:
        if timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if memory_bytes < 64 * MIB:
            raise ValueError("memory_bytes must be at least 64 MB (the interpreter alone needs some)")
        if workers <= 0 or documents_per_worker <= 0:
            raise ValueError("workers and documents_per_worker must be positive")
        self.limits = limits or ParseLimits()
        self.timeout_seconds, self.memory_bytes = timeout_seconds, memory_bytes
        self.documents_per_worker = documents_per_worker
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        # Idle children end when their pipe closes; this closes it when the parser is dropped.
        self._finalizer = weakref.finalize(self, _close_all, self._idle, self._lock)

    def __call__(self, data: bytes, file_type: str) -> ParsedText:
        message = self._request(data, file_type)
        with self._slots:
            worker = self._take()
            try:
                reply = worker.exchange(message, deadline=time.monotonic() + self.timeout_seconds)
                if reply is None and worker.exited_cleanly():
                    # It had ended on its own before the document reached it: not the file's doing.
                    worker.close()
                    worker = self._take()
                    reply = worker.exchange(message, deadline=time.monotonic() + self.timeout_seconds)
            except _Deadline:
                worker.kill()
                raise ParseError(self._too_slow()) from None
            except BaseException:
                worker.kill()
                raise
            return self._outcome(worker, reply, file_type)

    def close(self) -> None:
        """End the idle children (each finishes when its pipe closes)."""
        _close_all(self._idle, self._lock)

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                worker.close()
        return _Worker.start(self.memory_bytes)

    def _give_back(self, worker: _Worker) -> None:
        if worker.documents >= self.documents_per_worker or not worker.alive():
            worker.close()
            return
        with self._lock:
            self._idle.append(worker)

    def _request(self, data: bytes, file_type: str) -> bytes:
        request = json.dumps({"file_type": file_type, "limits": self.limits.as_dict()}).encode("utf-8")
        cpu = math.ceil(self.timeout_seconds) + 1
        return REQUEST_HEADER.pack(len(request), len(data), cpu) + request + data

    def _outcome(self, worker: _Worker, reply: tuple[bytes, bool, bytes] | None, file_type: str) -> ParsedText:
        if reply is not None:
            status, keep_going, payload = reply
            worker.documents += 1
            if keep_going:
                self._give_back(worker)
            else:
                worker.close()
            if status == TEXT:
                return ParsedText.from_json(json.loads(payload.decode("utf-8")))
            if status == REFUSED:
                raise ParseError(payload.decode("utf-8", errors="replace"))
            if status == OUT_OF_MEMORY:
                raise ParseError(self._too_big())
            log.warning("parser child failed on a .%s file: %s", file_type, payload.decode("utf-8", errors="replace"))
            raise ParseError(reasons.PARSER_STOPPED)
        returncode, stderr = worker.finish()
        log.warning("parser child for a .%s file exited with %s: %s", file_type, returncode, stderr)
        if returncode in _STOPPED_FROM_OUTSIDE:
            raise ParseInterrupted(f"the parser was stopped by signal {-returncode}")
        if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            raise ParseError(self._too_slow())
        raise ParseError(reasons.PARSER_STOPPED)

    def _too_slow(self) -> str:
        return reasons.PARSE_TOO_SLOW % {"seconds": f"{self.timeout_seconds:g}"}

    def _too_big(self) -> str:
        return reasons.PARSE_OUT_OF_MEMORY % {"size": f"{self.memory_bytes / MIB:,.0f}"}


class _Deadline(Exception):
    """The document's wall-clock time ran out."""


class _Worker:
    """One warm child process and its pipes."""

    def __init__(self, process: subprocess.Popen, stderr) -> None:
        self.process, self.stderr = process, stderr
        self.documents = 0

    @classmethod
    def start(cls, memory_bytes: int) -> _Worker:
        stderr = tempfile.TemporaryFile()
        command = [sys.executable, "-s", "-m", CHILD_MODULE, "--serve", str(memory_bytes), str(os.getpid())]
        process = _spawner.popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                 cwd=_PROJECT_ROOT, env=_child_environment())
        worker = cls(process, stderr)
        if not worker._started():
            returncode, text = worker.finish()
            log.warning("a parser child did not start (exit code %s): %s", returncode, text)
            raise ParseError(reasons.PARSER_NOT_STARTED)
        return worker

    def _started(self) -> bool:
        reader = self.process.stdout.fileno()
        ready, _, _ = select.select([reader], [], [], START_SECONDS)
        if not ready:
            self.kill()
            return False
        return os.read(reader, 1) == READY

    def alive(self) -> bool:
        return self.process.poll() is None

    def exited_cleanly(self) -> bool:
        try:
            return self.process.wait(timeout=5) == 0
        except subprocess.TimeoutExpired:
            return False

    def exchange(self, message: bytes, *, deadline: float) -> tuple[bytes, bool, bytes] | None:
        """Send one request and read its reply: (status, keep_going, payload), or None when the child ended
        first. Raises _Deadline when `deadline` (time.monotonic) passes."""
        writer, reader = self.process.stdin.fileno(), self.process.stdout.fileno()
        poller = select.poll()
        poller.register(writer, select.POLLOUT)
        poller.register(reader, select.POLLIN)
        view, sent = memoryview(message), 0
        received = bytearray()
        need = 1 + REPLY_HEADER.size
        header_read = False
        os.set_blocking(writer, False)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            for fd, event in poller.poll(remaining * 1000):
                if fd == writer:
                    try:
                        sent += os.write(writer, view[sent:sent + 1024 * 1024])
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, OSError):
                        poller.unregister(writer)
                        continue
                    if sent == len(view):
                        poller.unregister(writer)
                    continue
                chunk = os.read(reader, 1024 * 1024) if event & (select.POLLIN | select.POLLHUP) else b""
                if not chunk:
                    return None
                received += chunk
                if not header_read and len(received) >= need:
                    header_read = True
                    need += REPLY_HEADER.unpack_from(received, 1)[1]
                if header_read and len(received) >= need:
                    keep_going, _ = REPLY_HEADER.unpack_from(received, 1)
                    return bytes(received[:1]), keep_going, bytes(received[1 + REPLY_HEADER.size:need])

    def finish(self) -> tuple[int | None, str]:
        """The exit code of a child that ended, and the end of what it wrote to stderr."""
        try:
            returncode = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            returncode = self.process.returncode
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 4000))
        text = self.stderr.read().decode("utf-8", errors="replace")
        self._release()
        return returncode, text

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._release()

    def close(self) -> None:
        """Let the child end: it exits when its stdin closes."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        self._release()

    def _release(self) -> None:
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass


def _close_all(idle: list[_Worker], lock: threading.Lock) -> None:
    with lock:
        workers, idle[:] = list(idle), []
    for worker in workers:
        worker.close()


class _Spawner:
    """Starts the children from one thread that lives as long as the process.

    A child asks the kernel to kill it when its parent dies (so that a killed worker leaves no parser
    running); Linux sends that signal when the *thread* that started the child ends, so a warm child
    started by a short-lived thread would die with it, between documents or in the middle of one.
    """

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, command: list[str], **options) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="docmind-parse-spawner", daemon=True)
                self._thread.start()
        future: Future = Future()
        self._requests.put((command, options, future))
        return future.result()

    def _run(self) -> None:
        while True:
            command, options, future = self._requests.get()
            try:
                future.set_result(subprocess.Popen(command, **options))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)


_spawner = _Spawner()


def _child_environment() -> dict[str, str]:
    # The child imports exactly what this process imports, and sees none of its variables (keys, URLs).
    return {"PATH": os.defpath, "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join([str(_PROJECT_ROOT), *(p for p in sys.path if p)])}
