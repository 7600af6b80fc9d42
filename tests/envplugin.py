"""Loaded with -p before pytest-django reads settings: a throw-away data dir and offline mode for tests.

Under pytest-xdist every worker is a process of its own with its own data dir (SQLite file, Milvus Lite
file, uploads) and, when REDIS_URL is set, its own Redis database: tests that flush the cache or count
keys must not see another worker's. pytest-django gives each worker its own MariaDB test database.
"""
import os
import tempfile
from urllib.parse import urlsplit, urlunsplit

# Tests never touch the developer's ./data (SQLite file, Milvus Lite file, uploads).
os.environ.setdefault("DOCMIND_DATA_DIR", tempfile.mkdtemp(prefix="docmind-test-"))
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", … in an xdist worker, else unset
if _worker:
    # The controller's directory is inherited through the environment: each worker takes a subdirectory.
    os.environ["DOCMIND_DATA_DIR"] = os.path.join(os.environ["DOCMIND_DATA_DIR"], _worker)
    os.makedirs(os.environ["DOCMIND_DATA_DIR"], exist_ok=True)
    if os.environ.get("REDIS_URL"):
        url = urlsplit(os.environ["REDIS_URL"])
        base = int(url.path.strip("/") or 0)
        os.environ["REDIS_URL"] = urlunsplit(url._replace(path=f"/{base + 1 + int(_worker[2:])}"))
os.environ.setdefault("DOCMIND_INGEST_WORKER", "false")
# The evaluation worker thread polls the database every second: in a test process it would run queries inside
# other tests' databases; tests/evals runs the worker itself where it is under test.
os.environ.setdefault("DOCMIND_EVAL_WORKER", "false")
# Ingestion embeds in this process: the default, a child process at the lowest CPU priority, starves
# whenever the machine is busy (another xdist worker is enough) and loads the model a second time.
# tests/docmind/test_embedding_process.py covers the child process itself.
os.environ.setdefault("DOCMIND_INGEST_THREADS", "0")
# Offline unless a test starts its own scripted OpenAI-compatible server.
os.environ.pop("OPENAI_API_KEY", None)
# Many tests fetch tokens from 127.0.0.1 within a minute (and the Redis-backed throttle outlives
# a test): the throttle tests set their own low rate from a client address of their own.
os.environ.setdefault("DOCMIND_TOKEN_RATE", "100000/minute")
# In CI a test that cannot run fails instead of skipping: a skip there would hide a failure.
if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
    for name in ("DOCMIND_REQUIRE_SERVICES", "DOCMIND_REQUIRE_BROWSER", "DOCMIND_REQUIRE_CGROUPS"):
        os.environ.setdefault(name, "1")
