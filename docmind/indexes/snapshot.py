"""IndexSnapshot: an in-process index saved next to its Milvus Lite file, trusted only while Milvus holds its token."""
from __future__ import annotations

import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# Save once writes have been quiet this long, but never postpone a save longer than MAX_WAIT. A command saves
# what is pending before it exits (`settle`, up to EXIT_WAIT_SECONDS); a server that stops within SETTLE_SECONDS
# of its last write makes the next start read Milvus (slow, correct).
SETTLE_SECONDS = 20.0
MAX_WAIT_SECONDS = 300.0
EXIT_WAIT_SECONDS = 10.0


class _FileState:
    """What every IndexSnapshot of one file in this process shares. Two stores can be open on one Lite file at
    once (a store being replaced and its successor, a store without an in-process copy beside one with it);
    a write through either must invalidate a snapshot the other saved, and a save must not publish a copy
    that misses a write the other made while it was copying."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writes = 0  # writes seen through any store of this file in this process
        # Another process may have saved a snapshot: clear the token before this process's first write.
        self.token_may_be_set = True


_files: dict[Path, _FileState] = {}
_files_lock = threading.Lock()
_snapshots: weakref.WeakSet[IndexSnapshot] = weakref.WeakSet()  # guarded by _files_lock


def _state_of(path: Path) -> _FileState:
    with _files_lock:
        return _files.setdefault(path.resolve(), _FileState())


class IndexSnapshot:
    """Named numpy arrays in one .npz file plus a token, valid only while the store holds the same token.

    Reading 100k rows back from Milvus Lite takes ~40 s; this file loads in well under a second. It
    is trusted only if it describes exactly what Milvus holds, which the token proves: `save` writes
    the file, then stores its token in Milvus (under the store's write lock, so no write slips in
    between); the store calls `mark_dirty` before every write, which clears the token in Milvus once
    per saved snapshot. A crash, a write by another process (`manage.py ingest` with the server
    stopped), a reset or a Milvus file restored from a backup all leave tokens that disagree, and
    the index is then read from Milvus as before (and saved again).
    """

    def __init__(self, *, path: Path, get_token: Callable[[], str | None], set_token: Callable[[str], None],
                 settle_seconds: float = SETTLE_SECONDS, max_wait_seconds: float = MAX_WAIT_SECONDS) -> None:
        self.path = Path(path)
        self._get_token, self._set_token = get_token, set_token
        self.settle_seconds, self.max_wait_seconds = settle_seconds, max_wait_seconds
        self._file = _state_of(self.path)
        with _files_lock:
            _snapshots.add(self)
        self._consistent_at = -1  # the file's write count this copy holds every write up to; -1: not loaded
        self._timer: threading.Timer | None = None
        self._pending_save: Callable[[], bool] | None = None  # scheduled, not started
        self._timer_since = 0.0
        self._timer_lock = threading.Lock()
        self._save_lock = threading.Lock()

    def load(self) -> dict[str, np.ndarray] | None:
        """The saved arrays if the store still holds this file's token, else None."""
        if not self.path.exists():
            return None
        token = self._get_token()
        if not token:
            return None
        with np.load(self.path, allow_pickle=False) as data:
            if str(data["__token__"]) != token:
                return None
            return {name: data[name] for name in data.files if name != "__token__"}

    def loading(self) -> None:
        """Called as the in-process copy starts to load: from here on, only writes made through it keep it
        whole (a write through another store of the file goes to Milvus but not into this copy)."""
        with self._file.lock:
            self._consistent_at = self._file.writes

    def missed_writes(self) -> bool:
        """True when a write through another store of this file reached Milvus after this copy loaded: the copy
        lacks it (it is read again rather than searched)."""
        return 0 <= self._consistent_at != self._file.writes

    def mark_dirty(self) -> None:
        """Called by the store (holding its write lock) before each write, also by a store that keeps no
        in-process copy of this file."""
        with self._file.lock:
            if self._consistent_at == self._file.writes:
                self._consistent_at += 1
            self._file.writes += 1
            if self._file.token_may_be_set:
                self._set_token("")
                self._file.token_may_be_set = False

    def save(self, arrays: dict[str, np.ndarray], *, still_current: Callable[[], bool], lock) -> bool:
        """Write `arrays`, then publish the token, unless a write came in meanwhile (`still_current()` False)
        or a write through another store of this file reached Milvus since this copy was loaded."""
        token = uuid.uuid4().hex
        with self._save_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for stale in self.path.parent.glob(f"{self.path.name}.*.partial"):  # a process killed mid-save
                stale.unlink(missing_ok=True)
            partial = self.path.with_name(f"{self.path.name}.{token}.partial")
            try:
                with open(partial, "wb") as handle:
                    np.savez(handle, __token__=np.asarray(token), **arrays)
                    handle.flush()
                    os.fsync(handle.fileno())
                with lock, self._file.lock:
                    if not still_current() or self._consistent_at != self._file.writes:
                        return False
                    os.replace(partial, self.path)
                    self._set_token(token)
                    self._file.token_may_be_set = True
                return True
            finally:
                partial.unlink(missing_ok=True)

    def schedule(self, save: Callable[[], bool], *, delay: float | None = None) -> None:
        """Run `save` in a daemon thread once writes settle: each call restarts the wait, up to max_wait."""
        wait = self.settle_seconds if delay is None else delay
        with self._timer_lock:
            now = time.monotonic()
            if self._timer is not None and self._timer.is_alive():
                if delay is None and now - self._timer_since >= self.max_wait_seconds:
                    return  # writes never settle: let the pending save run
                self._timer.cancel()
            else:
                self._timer_since = now
            self._start_timer(wait, save)

    def _start_timer(self, wait: float, save: Callable[[], bool]) -> None:
        self._pending_save = save
        self._timer = threading.Timer(wait, self._run, args=(save,))
        self._timer.daemon = True
        self._timer.start()

    def run_pending(self) -> None:
        """A save still waiting for writes to settle starts now."""
        with self._timer_lock:
            if self._pending_save is not None and self._timer is not None and self._timer.is_alive():
                self._timer.cancel()
                self._start_timer(0.0, self._pending_save)

    def cancel(self) -> None:
        with self._timer_lock:
            self._pending_save = None
            if self._timer is not None:
                self._timer.cancel()

    def wait(self, timeout: float) -> bool:
        """Wait until no save is scheduled or running (a cancelled one ends at once); False on timeout."""
        with self._timer_lock:
            timer = self._timer
        if timer is not None:
            timer.join(timeout)
            return not timer.is_alive()
        return True

    def _run(self, save: Callable[[], bool]) -> None:
        with self._timer_lock:
            if self._pending_save is save:
                self._pending_save = None
        started = time.perf_counter()
        try:
            if save():
                log.info("in-process index snapshot %s saved in %.1f s", self.path.name, time.perf_counter() - started)
        except Exception:
            log.exception("in-process index snapshot %s could not be saved", self.path.name)


def settle(timeout: float = EXIT_WAIT_SECONDS) -> None:
    """Before a command's process exits: run every pending save now and wait up to `timeout` for all of them. At
    interpreter exit Milvus Lite's in-process server no longer takes calls (Python shuts down its thread pools
    and refuses new threads first), so a save still pending or running then would fail half-way."""
    with _files_lock:
        snapshots = list(_snapshots)
    for snapshot in snapshots:
        snapshot.run_pending()
    deadline = time.monotonic() + timeout
    for snapshot in snapshots:
        snapshot.wait(max(0.0, deadline - time.monotonic()))
