"""An HTTP transport for the model client whose socket reads honour the current call budget.

A plain blocking ``recv`` only returns when data arrives or its timeout expires, so a model that
accepts a connection and never answers would keep a chat turn's thread until the full client
timeout, even after the user left. Here every read under a budget waits in short slices and
gives up as soon as the turn is cancelled or its deadline passes.
"""
from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from docmind.llm.budget import POLL_SECONDS, current_budget


class _BudgetedStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        budget = current_budget()
        if budget is None:
            return self._inner.read(max_bytes, timeout)
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            if budget.cancelled:
                raise httpcore2.ReadError("the chat turn was cancelled")
            left = budget.remaining()
            if left <= 0:
                raise httpcore2.ReadTimeout("the chat turn's deadline passed")
            if give_up is not None:
                left = min(left, give_up - time.monotonic())
                if left <= 0:
                    raise httpcore2.ReadTimeout("timed out")
            try:
                # A recv that times out consumed nothing: the connection stays usable for the next slice.
                return self._inner.read(max_bytes, min(POLL_SECONDS, left))
            except httpcore2.ReadTimeout:
                continue

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _BudgetedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class BudgetedNetworkBackend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        budget = current_budget()
        if budget is not None:
            if budget.cancelled:
                raise httpcore2.ConnectError("the chat turn was cancelled")
            left = budget.remaining()
            if left <= 0:
                raise httpcore2.ConnectTimeout("the chat turn's deadline passed")
            timeout = left if timeout is None else min(timeout, left)
        return _BudgetedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _BudgetedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def budgeted_http_client(*, timeout: float) -> httpx2.Client:
    """An httpx2 client like the SDK's default, with reads that honour the current call budget."""
    transport = httpx2.HTTPTransport()
    # HTTPTransport takes no network backend argument; its pool does. The test of this module
    # fails if a new httpx2 renames the attribute.
    pool = transport._pool
    if not hasattr(pool, "_network_backend"):
        raise RuntimeError("httpx2's connection pool no longer exposes _network_backend")
    pool._network_backend = BudgetedNetworkBackend()
    return httpx2.Client(transport=transport, timeout=timeout, follow_redirects=True)
