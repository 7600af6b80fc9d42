"""SIGTERM ends a server within 10 s even while work (an MCP `ask`, a pool job) waits on a model that never answers."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.browser.live_server import ROOT, LiveServer


def _post(url: str, body: dict, headers: dict[str, str] | None = None, timeout: float = 30) -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


@pytest.fixture
def server(tmp_path, silent_model_server, migrated_data_dir):
    live = LiveServer(data_dir=tmp_path / "data", extra_env={
        "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": silent_model_server.base_url, "DOCMIND_LLM_TIMEOUT": "120"})
    live.prepare(template=migrated_data_dir)
    live.start()
    try:
        yield live
    finally:
        live.stop()


def test_sigterm_exits_within_ten_seconds_while_an_mcp_ask_waits_on_a_silent_model(server, silent_model_server):
    token = json.loads(_post(server.url + "/api/auth/token/",
                             {"username": server.username, "password": server.password}))["token"]
    before = silent_model_server.accepted  # the start-up health check probes the model too
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": "星河公司的年假有多少天？"}}}

    def ask() -> None:
        try:
            _post(server.url + "/mcp/", call, {"Authorization": f"Token {token}",
                                               "Accept": "application/json, text/event-stream"}, timeout=300)
        except Exception:  # noqa: BLE001 - the server goes away under it
            pass

    threading.Thread(target=ask, daemon=True).start()
    deadline = time.monotonic() + 60
    while silent_model_server.accepted == before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert silent_model_server.accepted > before  # the call is now waiting on the model
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=300)
    assert time.monotonic() - started < 10  # within the grace of process managers, lock released with it


CHILD = """
import time
from concurrent.futures import ThreadPoolExecutor
from docmind import shutdown
pool = ThreadPoolExecutor(max_workers=1)
pool.submit(time.sleep, 60)  # a job that does not look at any cancel flag
shutdown.begin(grace=1)
print("main returned", flush=True)
"""


def test_after_begin_the_process_exits_within_the_grace_whatever_a_pool_thread_does():
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert "main returned" in done.stdout
    assert time.monotonic() - started < 30  # not the job's 60 s: Python would join the pool's thread at exit
