"""The one typed accessor over sys_ai_config: per-process cache, dropped when any row changes."""
from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from django.db.models import Count, Max

from config_admin.models import SysAiConfig
from config_admin.registry import KEYS, ConfigValueError, spec


class ConfigSnapshot(Mapping[str, Any]):
    """Typed values of every key at one moment; one per chat turn, passed into stage constructors."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getitem__(self, key: str) -> Any:
        spec(key)  # unknown keys raise UnknownConfigKey, not a plain KeyError
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class AiConfigAccessor:
    """Reads rows once per version stamp (max updated_at, row count).

    The stamp lives in the database itself, so an edit made by any process — admin, API,
    another worker — is seen by every process on its next snapshot, with or without a
    shared cache. One cheap aggregate query per snapshot is the price.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple[Any, int] | None = None
        self._snapshot: ConfigSnapshot | None = None

    def snapshot(self) -> ConfigSnapshot:
        agg = SysAiConfig.objects.aggregate(latest=Max("updated_at"), count=Count("id"))
        stamp = (agg["latest"], agg["count"])
        with self._lock:
            if self._snapshot is not None and stamp == self._stamp:
                return self._snapshot
        values = self._load()
        with self._lock:
            self._stamp, self._snapshot = stamp, values
        return values

    def get(self, key: str) -> Any:
        return self.snapshot()[key]

    @staticmethod
    def _load() -> ConfigSnapshot:
        rows = {row.key: row for row in SysAiConfig.objects.all()}
        values: dict[str, Any] = {}
        for item in KEYS:
            row = rows.get(item.key)
            if row is None:
                # Declared in code but not yet migrated: the declared default is the seeded value.
                values[item.key] = item.default
                continue
            if row.value_type != item.value_type:
                raise ConfigValueError(f"{item.key}: stored type {row.value_type} but declared {item.value_type}")
            values[item.key] = item.parse(row.value)
        return ConfigSnapshot(values)


ai_config = AiConfigAccessor()
