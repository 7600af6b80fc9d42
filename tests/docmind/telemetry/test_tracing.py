"""Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then spans go out over OTLP http/protobuf."""
from __future__ import annotations

import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from docmind.telemetry.tracing import tracing_requested
from tests.fakes.serving import serve_in_thread

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("env", "on"), [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, False),
])
def test_tracing_is_on_only_with_an_otlp_endpoint(env, on):
    assert tracing_requested(env) is on


class _Sink(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Sink.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        return


SCRIPT = """
from opentelemetry import trace
from docmind.telemetry.tracing import configure_tracing, current_trace_id, span
assert configure_tracing()
with span("chat.turn", {"docmind.user_id": 7}):
    print(current_trace_id())
trace.get_tracer_provider().force_flush()
"""


def test_spans_are_exported_over_otlp_http_with_the_standard_variables():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    serve_in_thread(server)
    _Sink.received.clear()
    try:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
               "OTEL_EXPORTER_OTLP_HEADERS": "x-docmind-test=yes", "OTEL_SERVICE_NAME": "docmind-test"}
        done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    trace_id = done.stdout.strip()
    assert len(trace_id) == 32 and int(trace_id, 16) != 0
    path, headers, body = _Sink.received[0]
    assert path == "/v1/traces"
    assert headers.get("content-type") == "application/x-protobuf"
    assert headers.get("x-docmind-test") == "yes"
    assert b"chat.turn" in body and b"docmind-test" in body and bytes.fromhex(trace_id) in body
