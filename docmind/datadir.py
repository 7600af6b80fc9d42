"""The data dir (database, secret key, vectors, uploads) is private to the service user."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path


def make_private(data_dir: Path) -> None:
    """Create the data dir 0700, tighten what is already in it, and make new files 0600.

    The umask covers files that libraries create later on their own (SQLite's database and WAL,
    Milvus Lite's files, uploads), which no chmod here could reach in time.
    """
    os.umask(0o077)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    # A read-only data dir must not stop start-up: /healthz reports it instead.
    with contextlib.suppress(OSError):
        data_dir.chmod(0o700)
    for entry in data_dir.iterdir():
        with contextlib.suppress(OSError):
            if entry.is_symlink():
                continue
            entry.chmod(0o700 if entry.is_dir() else 0o600)
