"""What a server process does when told to stop: stop its work at once, and exit within a bound.

A plain exit waits for every pool thread to finish its job (Python joins executor threads at exit):
a chat turn waiting on a slow model held a stopped server alive for minutes, and with it the Milvus
Lite file lock the next server needs. Components register a hook that stops their work (the turn
runner cancels its turns, which then end as saved, cancelled answers); `begin()` runs the hooks and
arms a watchdog that ends the process after `GRACE_SECONDS` whatever is still running.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

# Within the 10 s that process managers (systemd, Docker, Kubernetes) give before SIGKILL, leaving a margin.
GRACE_SECONDS = 8.0

_hooks: list[Callable[[], None]] = []
_lock = threading.Lock()
_begun = threading.Event()


def register(hook: Callable[[], None]) -> None:
    with _lock:
        _hooks.append(hook)


def begin(grace: float = GRACE_SECONDS) -> None:
    """Stop registered work now; exit the process `grace` seconds from now if it has not exited by then."""
    if _begun.is_set():
        return
    _begun.set()
    timer = threading.Timer(grace, _exit_now)
    timer.daemon = True
    timer.name = "docmind-shutdown-watchdog"
    timer.start()
    with _lock:
        hooks = list(_hooks)
    for hook in hooks:
        try:
            hook()
        except Exception:  # noqa: BLE001 - one failing hook must not keep the others from running
            log.exception("shutdown hook failed")


def _exit_now() -> None:
    log.warning("work still running %.0f s after the stop signal: exiting anyway", GRACE_SECONDS)
    try:
        # Close Milvus Lite's files properly where it can be done quickly; the OS drops its lock either way.
        # heavy: milvus_lite (about 0.6 s) is touched only on a forced exit, where it may never have loaded
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_all()
    except Exception:  # noqa: BLE001 - exiting regardless
        pass
    logging.shutdown()
    os._exit(0)
