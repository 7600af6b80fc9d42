"""manage.py kb_worker: claim and ingest queued documents in this process until stopped (scale-out deployments)."""
from __future__ import annotations

import os
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand

from docmind.indexes.vectorstore import is_lite_uri
from kb.ingestion.wakeup import wake_worker
from kb.ingestion.worker import run_worker
from kb.management.commands._kbcommand import open_index


class Command(BaseCommand):
    help = ("Ingest queued documents in this process until SIGTERM/SIGINT (finishing the documents it started). "
            "Run N of them on any machines that reach the same MySQL/MariaDB and Milvus server; the web processes "
            "then run with DOCMIND_INGEST_WORKER=false.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--until-idle", action="store_true",
                            help="exit once the queue is empty instead of waiting for new documents")
        parser.add_argument("--poll", type=float, default=None,
                            help="seconds between queue checks (default DOCMIND_INGEST_POLL_SECONDS)")

    def handle(self, *args, until_idle: bool, poll: float | None, **options) -> None:
        if is_lite_uri(str(settings.MILVUS_URI)):
            self.stderr.write(f"note: MILVUS_URI is the Milvus Lite file {settings.MILVUS_URI}, which only one "
                              "process can open: this worker must be the only process using it (no server running). "
                              "Several workers need a Milvus server URL.")
        open_index()
        stop = threading.Event()

        def request_stop(signum, frame) -> None:
            if stop.is_set():
                raise KeyboardInterrupt  # a second signal: stop now
            self.stderr.write("kb_worker: stopping after the documents in progress")
            stop.set()
            wake_worker()

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, request_stop)
        self.stdout.write(f"kb_worker: waiting for documents (pid {os.getpid()})")
        self.stdout.flush()
        # Other workers may share the queue, so a processing row is only taken over once its lease expired.
        taken = run_worker(stop=stop, poll_seconds=poll or settings.INGEST_POLL_SECONDS, until_idle=until_idle,
                           sole_worker=False)
        self.stdout.write(f"kb_worker: took {taken} document(s)")
