"""Work done once when a server process starts: the ingestion worker and the knowledge map."""
from __future__ import annotations

import logging

from django.conf import settings

log = logging.getLogger(__name__)


def on_server_start() -> None:
    if settings.INGEST_WORKER:
        from kb.ingestion.worker import start_background_worker

        start_background_worker()
