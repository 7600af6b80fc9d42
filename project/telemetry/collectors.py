"""Gauges read at scrape time from the apps' tables (the ingestion queue), registered once per process."""
from __future__ import annotations

from collections.abc import Iterator

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kb.models import Document, DocumentStatus


class IngestionQueueCollector(Collector):
    """Documents per status right now (pending + processing is the queue depth)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("docmind_ingestion_queue_depth", "Documents per ingestion status.",
                                   labels=["status"])
        try:
            counts = dict(Document.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
        except DatabaseError:
            return  # a scrape during a database outage reports the process metrics only
        for status in DocumentStatus.values:
            family.add_metric([status], counts.get(status, 0))
        yield family


_registered = False


def register_collectors() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(IngestionQueueCollector())
        _registered = True
