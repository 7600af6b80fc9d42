"""/healthz probes each backend by reading and writing: `down` (503) when the answer path cannot work,
`degraded` (200) when only an optional backend fails."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

from tests.conftest import require_services

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(client, admin_user):
    """The details are for staff: the probes below are read as a signed-in administrator."""
    client.force_login(admin_user)
    return client


def test_an_anonymous_caller_gets_the_state_alone(db):
    from django.test import Client

    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_a_member_gets_the_state_alone_and_staff_by_token_get_details(member, admin_user):
    from django.test import Client
    from rest_framework.authtoken.models import Token

    signed_in = Client()
    signed_in.force_login(member)
    assert signed_in.get("/healthz").json() == {"status": "ok"}
    key = Token.objects.create(user=admin_user).key
    body = Client().get("/healthz", HTTP_AUTHORIZATION=f"Token {key}").json()
    assert body["database"]["ok"] and "llm" in body and "sandbox" in body


def test_healthz_reports_every_backend_and_ok_when_all_work(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["failing"] == []
    assert body["database"]["write"] and body["cache"]["ok"]
    assert body["vector_store"] == {"ok": True, "backend": "MilvusVectorStore", "write": True}
    assert body["data_dir"] == {"ok": True, "writable": True}
    assert body["llm"] == {"mode": "offline", "answers": "extractive"}
    assert body["sandbox"]["available"] is True


def test_healthz_is_down_when_the_database_is_unreachable(client):
    from django.db import OperationalError
    from django.test import Client, RequestFactory

    from project.health import healthz

    request = RequestFactory().get("/healthz")
    request.user = SimpleNamespace(is_authenticated=True, is_staff=True)
    with mock.patch("project.health.connection.cursor", side_effect=OperationalError("down")):
        response = healthz(request)
        anonymous = Client().get("/healthz")
    body = json.loads(response.content)
    assert response.status_code == 503
    assert body["database"]["ok"] is False and body["status"] == "down"
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "down"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def own_redis():
    """A Redis this test starts and stops: the cache backend pointed at it."""
    binary = shutil.which("redis-server")
    if binary is None:
        if require_services():
            pytest.fail("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield proc, port
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_healthz_is_degraded_not_down_when_the_cache_is_down(client, settings, own_redis):
    proc, port = own_redis
    settings.CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{port}/0",
                                   "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.5, "SOCKET_TIMEOUT": 0.5}}}
    assert client.get("/healthz").json()["cache"]["ok"] is True
    proc.kill()
    proc.wait()
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "degraded"
    assert body["cache"]["ok"] is False and body["failing"] == ["cache"]


def test_healthz_is_down_with_a_corrupt_milvus_lite_file(client, settings, tmp_path):
    from docmind.backends import reset_backends

    corrupt = tmp_path / "milvus.db"
    corrupt.write_bytes(os.urandom(64 * 1024))
    settings.MILVUS_URI = str(corrupt)
    reset_backends()
    try:
        response = client.get("/healthz")
    finally:
        reset_backends()  # the next use rebuilds from the restored setting
    body = response.json()
    assert response.status_code == 503 and body["status"] == "down"
    assert body["vector_store"]["ok"] is False and str(tmp_path) not in response.content.decode()


def test_healthz_is_down_when_the_vector_store_refuses_writes(client):
    from docmind.indexes.stores import get_vector_store
    from docmind.indexes.vectorstore import VectorStoreError

    store = get_vector_store()
    with mock.patch.object(store._client, "upsert", side_effect=RuntimeError("disk quota exceeded")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["vector_store"] == {"ok": False, "backend": "MilvusVectorStore", "write": False,
                                               "error": VectorStoreError.__name__}


# A read-only data dir needs a read-only mount; bubblewrap (installed for the code sandbox) makes
# one in a private mount namespace, so nothing outside the child process sees it.
HEALTH = ("from types import SimpleNamespace; from django.test import RequestFactory; "
          "from project.health import healthz; q = RequestFactory().get('/healthz'); "
          "q.user = SimpleNamespace(is_authenticated=True, is_staff=True); "
          "r = healthz(q); print(r.status_code, r.content.decode())")


def _healthz_with_read_only(data_dir: Path, read_only: Path) -> tuple[int, dict]:
    import json

    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "MILVUS_URI", "REDIS_URL")}
    environment.update(DOCMIND_DATA_DIR=str(data_dir), DOCMIND_INGEST_WORKER="false")
    wrap = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(read_only), str(read_only)]
    if os.geteuid() != 0:
        wrap[1:1] = ["--unshare-user", "--uid", str(os.geteuid()), "--gid", str(os.getegid())]
    done = subprocess.run(wrap + [sys.executable, "manage.py", "shell", "-c", HEALTH], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=300)
    line = [ln for ln in done.stdout.splitlines() if ln[:3].isdigit()]
    assert line, done.stdout + done.stderr
    status, body = line[-1].split(" ", 1)
    return int(status), json.loads(body)


@pytest.fixture(scope="module")
def migrated_data_dir(migrated_data_dir, tmp_path_factory) -> Path:
    """A copy of the process's migrated data dir (tests/conftest.py), which the live servers copy too: the health
    probes write to theirs. Copying costs milliseconds where migrating costs a process start."""
    data = tmp_path_factory.mktemp("ro-data")
    shutil.copytree(migrated_data_dir, data, dirs_exist_ok=True)
    return data


def test_a_read_only_data_dir_holding_the_database_and_vectors_is_down(migrated_data_dir):
    status, body = _healthz_with_read_only(migrated_data_dir, migrated_data_dir)
    assert status == 503 and body["status"] == "down"
    assert body["data_dir"]["writable"] is False
    assert body["database"]["write"] is False and body["vector_store"]["ok"] is False


def test_a_read_only_upload_dir_is_degraded_since_questions_are_still_answered(migrated_data_dir):
    media = migrated_data_dir / "media"
    media.mkdir(exist_ok=True)
    status, body = _healthz_with_read_only(migrated_data_dir, media)
    assert status == 200 and body["status"] == "degraded" and body["failing"] == ["data_dir"]
    assert body["data_dir"]["failed"] == "media" and body["database"]["write"] is True


def test_healthz_is_degraded_while_the_remote_model_does_not_answer(client, settings, silent_model_server):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = silent_model_server.base_url
    started = time.monotonic()
    body = client.get("/healthz").json()
    assert time.monotonic() - started < 30  # bounded by the probe's timeout, not the model's 60 s (half of it)
    assert body["status"] == "degraded" and "llm" in body["failing"]
    assert body["llm"]["reachable"] is False and body["llm"]["error"] == "timeout"
    probes = silent_model_server.accepted
    assert client.get("/healthz").json()["llm"]["reachable"] is False
    assert silent_model_server.accepted == probes  # the result is kept briefly, not probed per request


def test_healthz_is_ok_when_the_remote_model_answers(client, settings, scripted_openai):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    body = client.get("/healthz").json()
    assert body["llm"]["reachable"] is True and body["llm"]["ok"] is True
    assert "llm" not in body["failing"]
