"""A socketserver serving on a daemon thread, stopped within a few milliseconds.

`shutdown()` returns only once `serve_forever` has seen the request, which it looks for once per poll interval:
half a second by default, paid by every test that stops a fake server.
"""
from __future__ import annotations

import socketserver
import threading

POLL_SECONDS = 0.02


def serve_in_thread(server: socketserver.BaseServer, *, name: str | None = None) -> threading.Thread:
    """Start `server.serve_forever` on a daemon thread (stop it with `server.shutdown()`)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, name=name,
                              daemon=True)
    thread.start()
    return thread
