"""Rate throttles that keep counting while the shared cache (Redis) is down.

The default cache ignores Redis errors (a miss, a dropped write) so that pages keep working during an
outage; a throttle on that cache would then see an empty history on every request and let everything
through — a brute-force window opened by stopping Redis. These throttles read and write their history
in a cache alias that raises (`throttle`), and count in this process's memory (`throttle_local`) while
it fails, so the limit holds per process instead of vanishing.
"""
from __future__ import annotations

import logging
from typing import Any

from django.core.cache import caches
from rest_framework.throttling import ScopedRateThrottle

log = logging.getLogger("docmind.cache")

SHARED_ALIAS = "throttle"
LOCAL_ALIAS = "throttle_local"


class FailSafeScopedRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle over the `throttle` cache, falling back to a per-process count on its errors."""

    def allow_request(self, request: Any, view: Any) -> bool:
        self.cache = caches[SHARED_ALIAS]
        try:
            return super().allow_request(request, view)
        except Exception:  # noqa: BLE001 - any cache failure: count locally rather than not at all
            log.warning("the throttle cache failed; counting in this process until it is back", exc_info=True)
        self.cache = caches[LOCAL_ALIAS]
        return super().allow_request(request, view)
