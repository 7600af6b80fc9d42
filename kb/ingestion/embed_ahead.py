"""embed_ahead: embed the next batch in a background thread while the caller stores the previous one."""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np


def embed_ahead[T](embed: Callable[[list[str]], np.ndarray], batches: Iterable[T], *,
                texts: Callable[[T], list[str]], depth: int = 2) -> Iterator[tuple[T, np.ndarray]]:
    """Yield (batch, vectors) in order, keeping up to `depth` batches submitted to the embedder.

    The embedder is the slow stage; with the next batch already queued it starts on it the moment
    the current one is done, while the caller writes vectors (database, Milvus) meanwhile. An
    exception from `embed` is raised here, at its batch; leaving the loop early cancels the
    batches not started and waits for the one running.
    """
    if depth <= 0:
        raise ValueError("depth must be positive")
    pending: deque[tuple[T, Future]] = deque()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docmind-embed")
    try:
        for batch in batches:
            pending.append((batch, pool.submit(embed, texts(batch))))
            if len(pending) > depth:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
